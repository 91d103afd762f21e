//! A fake Eclair API for tests and the `ruler` bench, on loopback: `sendtonode` answers
//! a payment id and pushes the payment's `payment-sent` on the websocket after a delay
//! the test chose; `getsentinfo` answers pending, or sent once told to; `getinfo` and
//! `channels` answer enough for the driver to connect. It records when it got each
//! payment and when it pushed its event: the truth a measured latency is held to.

use crate::node::{Credentials, Implementation, NodeEndpoint};
use futures::{SinkExt, StreamExt};
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, broadcast};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};

pub const PASSWORD: &str = "fake-password";
/// The node key the fake gives in `getinfo` (secp256k1's generator, a valid point).
pub const NODE_ID: &str = "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798";
const GET_INFO: &str = r#"{"version":"fake","nodeId":"0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798","alias":"fake-eclair","blockHeight":1}"#;

#[derive(Default)]
pub struct Script {
    /// The delay of each payment's event, in the order of `sendtonode` calls; none left:
    /// no event at all, unless `then_at_once`.
    pub delays: Mutex<VecDeque<Duration>>,
    /// Once `delays` ran out, push every payment's event right after answering.
    pub then_at_once: AtomicBool,
    /// Push the event before answering `sendtonode`.
    pub event_first: AtomicBool,
    /// `getsentinfo` answers "sent" (else "pending").
    pub sent_info_final: AtomicBool,
    /// Refuse websocket handshakes.
    pub refuse_sockets: AtomicBool,
}

pub struct FakeEclair {
    pub addr: SocketAddr,
    pub script: Arc<Script>,
    state: Arc<State>,
}

struct State {
    script: Arc<Script>,
    events: broadcast::Sender<String>,
    /// Closes every open websocket.
    close: Notify,
    /// Per payment id: when `sendtonode` came, when its event was pushed.
    truth: Mutex<HashMap<String, (Instant, Option<Instant>)>>,
    payments: AtomicU64,
    sent_info_calls: AtomicU64,
    sockets_opened: AtomicU64,
}

impl FakeEclair {
    pub async fn start() -> FakeEclair {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let script = Arc::new(Script::default());
        let state = Arc::new(State {
            script: Arc::clone(&script),
            events: broadcast::channel(1024).0,
            close: Notify::new(),
            truth: Mutex::default(),
            payments: AtomicU64::new(0),
            sent_info_calls: AtomicU64::new(0),
            sockets_opened: AtomicU64::new(0),
        });
        let serving = Arc::clone(&state);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let _ = stream.set_nodelay(true);
                tokio::spawn(connection(stream, Arc::clone(&serving)));
            }
        });
        FakeEclair {
            addr,
            script,
            state,
        }
    }

    /// The endpoint the tool's Eclair driver connects to; writes the API password file
    /// into `dir`.
    pub fn endpoint(&self, name: &str, dir: &Path) -> std::io::Result<NodeEndpoint> {
        std::fs::write(dir.join(super::API_PASSWORD_FILE), PASSWORD)?;
        Ok(endpoint(name, self.addr, dir))
    }

    /// When `sendtonode` for `id` came and when its event was pushed.
    pub fn truth(&self, id: &str) -> Option<(Instant, Option<Instant>)> {
        self.state.truth.lock().unwrap().get(id).copied()
    }

    pub fn sent_info_calls(&self) -> u64 {
        self.state.sent_info_calls.load(Ordering::SeqCst)
    }

    pub fn sockets_opened(&self) -> u64 {
        self.state.sockets_opened.load(Ordering::SeqCst)
    }

    /// Closes the open websockets (Eclair restarting, a proxy dropping them).
    pub fn close_sockets(&self) {
        self.state.close.notify_waiters();
    }
}

/// The endpoint of a fake listening on `addr` whose password file
/// [`FakeEclair::endpoint`] wrote into `dir` (the fake may run in another process).
pub fn endpoint(name: &str, addr: SocketAddr, dir: &Path) -> NodeEndpoint {
    NodeEndpoint {
        name: name.into(),
        implementation: Implementation::Eclair,
        rpc_addr: addr.to_string(),
        p2p_addr: "127.0.0.1:2".into(),
        credentials: Credentials::Eclair(super::EclairCredentials {
            api_password: dir.join(super::API_PASSWORD_FILE),
        }),
        data_dir: dir.to_path_buf(),
        binary: "eclair-node".into(),
        pid: None,
        payment_engine: Default::default(),
    }
}

async fn connection(stream: TcpStream, state: Arc<State>) {
    let mut head = [0u8; 4];
    loop {
        match stream.peek(&mut head).await {
            Ok(n) if n >= 4 => break,
            Ok(0) | Err(_) => return,
            Ok(_) => tokio::task::yield_now().await,
        }
    }
    if &head == b"GET " {
        websocket(stream, state).await;
    } else {
        http(stream, state).await;
    }
}

fn expected_auth() -> String {
    use base64::Engine as _;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!(":{PASSWORD}"))
    )
}

async fn websocket(stream: TcpStream, state: Arc<State>) {
    let refuse = state.script.refuse_sockets.load(Ordering::SeqCst);
    // The handshake's callback type is tungstenite's, its error a whole response.
    #[allow(clippy::result_large_err)]
    let check = |request: &Request, response: Response| -> Result<Response, ErrorResponse> {
        let auth = request.headers().get("authorization");
        if refuse || auth.and_then(|v| v.to_str().ok()) != Some(expected_auth().as_str()) {
            let mut refused = ErrorResponse::new(Some("no".into()));
            *refused.status_mut() = http::StatusCode::UNAUTHORIZED;
            return Err(refused);
        }
        Ok(response)
    };
    let Ok(socket) = tokio_tungstenite::accept_hdr_async(stream, check).await else {
        return;
    };
    state.sockets_opened.fetch_add(1, Ordering::SeqCst);
    let mut events = state.events.subscribe();
    let (mut sink, mut incoming) = socket.split();
    loop {
        tokio::select! {
            _ = state.close.notified() => {
                let _ = sink.close().await;
                return;
            }
            event = events.recv() => match event {
                Ok(text) => {
                    if sink.send(Message::Text(text.into())).await.is_err() {
                        return;
                    }
                }
                Err(_) => return,
            },
            message = incoming.next() => match message {
                Some(Ok(_)) => {}
                _ => return,
            },
        }
    }
}

async fn http(mut stream: TcpStream, state: Arc<State>) {
    let mut buf = Vec::new();
    while let Some(crate::node::fake_http::Request { path, auth, .. }) =
        crate::node::fake_http::request(&mut stream, &mut buf).await
    {
        let (status, body) = if auth != expected_auth() {
            (
                "401 Unauthorized",
                r#"{"error":"wrong password"}"#.to_string(),
            )
        } else {
            match path.as_str() {
                "/sendtonode" => ("200 OK", send(&state)),
                "/getsentinfo" => ("200 OK", sent_info(&state)),
                "/getinfo" => ("200 OK", GET_INFO.to_string()),
                "/channels" => ("200 OK", "[]".to_string()),
                _ => ("404 Not Found", r#"{"error":"no such call"}"#.to_string()),
            }
        };
        let answer = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        if stream.write_all(answer.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// The id the fake gives the `n`th payment (from 0, in the order `sendtonode` came).
pub fn payment_id(n: u64) -> String {
    format!("00000000-0000-4000-8000-{n:012}")
}

/// `sendtonode`: a new payment id, its event scheduled (or pushed now).
fn send(state: &Arc<State>) -> String {
    let received = Instant::now();
    let n = state.payments.fetch_add(1, Ordering::SeqCst);
    let id = payment_id(n);
    state
        .truth
        .lock()
        .unwrap()
        .insert(id.clone(), (received, None));
    let delay =
        state.script.delays.lock().unwrap().pop_front().or_else(|| {
            (state.script.then_at_once.load(Ordering::Relaxed)).then_some(Duration::ZERO)
        });
    if state.script.event_first.load(Ordering::SeqCst) {
        push_event(state, &id);
    } else if let Some(delay) = delay {
        let (state, id) = (Arc::clone(state), id.clone());
        tokio::spawn(async move {
            tokio::time::sleep_until(received + delay).await;
            push_event(&state, &id);
        });
    }
    format!("{id:?}")
}

fn push_event(state: &State, id: &str) {
    let now = SystemTime::now();
    let stamp = format!(
        r#"{{"iso":"{}","unix":{}}}"#,
        humantime::format_rfc3339_millis(now),
        now.duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    );
    let zeros = "00".repeat(32);
    let event = format!(
        r#"{{"type":"payment-sent","id":"{id}","paymentHash":"{zeros}","paymentPreimage":"{zeros}","recipientAmount":1000,"recipientNodeId":"02{zeros}","parts":[{{"id":"{id}","amount":1000,"feesPaid":2,"toChannelId":"{zeros}","timestamp":{stamp}}}]}}"#
    );
    if let Some(truth) = state.truth.lock().unwrap().get_mut(id) {
        truth.1 = Some(Instant::now());
    }
    let _ = state.events.send(event);
}

fn sent_info(state: &State) -> String {
    state.sent_info_calls.fetch_add(1, Ordering::SeqCst);
    if state.script.sent_info_final.load(Ordering::SeqCst) {
        r#"[{"status":{"type":"sent","feesPaid":3,"route":[{},{}]}}]"#.into()
    } else {
        r#"[{"status":{"type":"pending"}}]"#.into()
    }
}
