//! A fake ldk-server for tests and the `completion` bench, on loopback: `Bolt11Send`
//! answers a new payment id, which ends a chosen delay after the request came (the
//! delays in call order); `GetPaymentDetails` answers pending until then, succeeded
//! after. It records when each payment came and when it ended: the truth a polled end
//! is held to.

use super::proto;
use crate::node::driver::{NodeDriver, NodeEndpoint};
use crate::node::{Implementation, fake_http};
use prost::Message;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::time::Instant;

/// Per payment: when `Bolt11Send` came and when the payment ends.
type Ends = Mutex<Vec<(Instant, Instant)>>;

pub struct FakeLdk {
    pub addr: SocketAddr,
    ends: Arc<Ends>,
    polls: Arc<AtomicU64>,
}

impl FakeLdk {
    /// Serves on a loopback port of the current tokio runtime.
    pub async fn start(delays: Vec<Duration>) -> std::io::Result<FakeLdk> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let ends = Arc::new(Mutex::new(Vec::new()));
        let polls = Arc::new(AtomicU64::new(0));
        let delays = Arc::new(Mutex::new(delays.into_iter()));
        let (ends2, polls2) = (Arc::clone(&ends), Arc::clone(&polls));
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let _ = stream.set_nodelay(true);
                let (ends, polls, delays) =
                    (Arc::clone(&ends2), Arc::clone(&polls2), Arc::clone(&delays));
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    while let Some(request) = fake_http::request(&mut stream, &mut buf).await {
                        let body = answer(&request, &ends, &polls, &delays);
                        let head = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\ncontent-length: {}\r\n\r\n",
                            body.len()
                        );
                        if stream.write_all(head.as_bytes()).await.is_err()
                            || stream.write_all(&body).await.is_err()
                        {
                            return;
                        }
                    }
                });
            }
        });
        Ok(FakeLdk { addr, ends, polls })
    }

    /// An endpoint for `LdkNode::connect`: writes an API key into `dir`.
    pub fn endpoint(&self, name: &str, dir: &Path) -> std::io::Result<NodeEndpoint> {
        std::fs::write(dir.join("api_key"), "k")?;
        Ok(NodeEndpoint {
            name: name.into(),
            implementation: Implementation::Ldk,
            rpc_addr: self.addr.to_string(),
            p2p_addr: "127.0.0.1:2".into(),
            credentials: super::LDK.credentials(&|f| dir.join(f)),
            data_dir: dir.to_path_buf(),
            binary: dir.join("ldk-server"),
            pid: None,
            payment_engine: Default::default(),
        })
    }

    /// When the `n`th payment (in call order) ended, if it came.
    pub fn end_of(&self, n: usize) -> Option<Instant> {
        self.ends.lock().unwrap().get(n).map(|&(_, end)| end)
    }

    /// `GetPaymentDetails` calls so far.
    pub fn polls(&self) -> u64 {
        self.polls.load(Ordering::SeqCst)
    }
}

fn answer(
    request: &fake_http::Request,
    ends: &Ends,
    polls: &AtomicU64,
    delays: &Mutex<std::vec::IntoIter<Duration>>,
) -> Vec<u8> {
    let now = Instant::now();
    match request.path.as_str() {
        "/Bolt11Send" => {
            let delay = delays.lock().unwrap().next().unwrap_or(Duration::ZERO);
            let mut ends = ends.lock().unwrap();
            ends.push((now, now + delay));
            proto::Bolt11SendResponse {
                payment_id: (ends.len() - 1).to_string(),
            }
            .encode_to_vec()
        }
        "/GetPaymentDetails" => {
            polls.fetch_add(1, Ordering::SeqCst);
            let id = proto::GetPaymentDetailsRequest::decode(request.body.as_slice())
                .unwrap()
                .payment_id;
            let end = ends.lock().unwrap()[id.parse::<usize>().unwrap()].1;
            let status = if now >= end {
                proto::PaymentStatus::Succeeded
            } else {
                proto::PaymentStatus::Pending
            };
            proto::GetPaymentDetailsResponse {
                payment: Some(proto::Payment {
                    id,
                    amount_msat: Some(1000),
                    status: status as i32,
                    fee_paid_msat: Some(0),
                }),
            }
            .encode_to_vec()
        }
        _ => Vec::new(),
    }
}
