//! A fake LND gRPC server for tests and the `ruler` bench, on loopback: TLS with a
//! self-signed certificate, HTTP/2, the macaroon header checked on every call. It
//! answers `GetInfo` and routerrpc `SendPaymentV2` (one final update per payment:
//! SUCCEEDED when the keysend preimage hashes to the payment hash) at once, so what a
//! benchmark against it measures is the client's cost. Nothing else of LND is modelled.

use super::LndCredentials;
use crate::node::{Credentials, Implementation, NodeEndpoint};
use crate::tls;
use bitcoin::hashes::{Hash, sha256};
use bitcoin::hex::DisplayHex;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::pem::PemObject;
use std::convert::Infallible;
use std::future::{Ready, ready};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tonic::Status;
use tonic::server::{Grpc, ServerStreamingService, UnaryService};
use tonic_prost::ProstCodec;
use voltage_tonic_lnd::{lnrpc, routerrpc};

/// The node key the fake gives in `GetInfo` (secp256k1's generator, a valid point).
pub const PUBKEY: &str = "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798";

/// A running fake; it serves until the runtime that started it ends.
pub struct FakeLnd {
    pub addr: SocketAddr,
    /// `tls.cert` (the server's own) and `admin.macaroon`, as the tool reads them.
    pub credentials: LndCredentials,
    dir: PathBuf,
    state: Arc<State>,
}

struct State {
    /// The macaroon a call must carry, hex (as the client sends it).
    macaroon: String,
    payments: AtomicU64,
    /// Calls are taken and never answered (a node that stopped answering).
    hang: AtomicBool,
    /// The network `GetInfo` names in `chains` (LND's words: `mainnet`, `regtest`);
    /// none by default.
    network: std::sync::Mutex<Option<String>>,
}

impl FakeLnd {
    /// Writes `tls.cert` and `admin.macaroon` into `dir` and listens on a free loopback
    /// port.
    pub async fn start(dir: &Path) -> std::io::Result<FakeLnd> {
        let (cert_pem, key_pem) =
            tls::self_signed_pem(&["localhost", "127.0.0.1"]).map_err(std::io::Error::other)?;
        let credentials = credentials(dir);
        std::fs::write(&credentials.tls_cert, &cert_pem)?;
        let secret: [u8; 32] = rand::random();
        std::fs::write(&credentials.macaroon, secret)?;
        let acceptor = acceptor(&cert_pem, &key_pem)?;
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State {
            macaroon: secret.to_lower_hex_string(),
            payments: AtomicU64::new(0),
            hang: AtomicBool::new(false),
            network: std::sync::Mutex::new(None),
        });
        tokio::spawn(accept(listener, acceptor, Arc::clone(&state)));
        Ok(FakeLnd {
            addr,
            credentials,
            dir: dir.to_path_buf(),
            state,
        })
    }

    /// From now on, calls on open and new connections are taken and never answered.
    pub fn hang(&self) {
        self.state.hang.store(true, Ordering::Relaxed);
    }

    /// From now on `GetInfo` says the node runs on `network` (LND's words: `mainnet`).
    pub fn report_network(&self, network: &str) {
        *self.state.network.lock().unwrap_or_else(|e| e.into_inner()) = Some(network.into());
    }

    /// Payments (`SendPaymentV2` calls) answered so far.
    pub fn payments(&self) -> u64 {
        self.state.payments.load(Ordering::Relaxed)
    }

    /// The endpoint the tool's LND driver connects to.
    pub fn endpoint(&self, name: &str) -> NodeEndpoint {
        endpoint(name, self.addr, &self.dir)
    }
}

/// The endpoint of a fake started in `dir` and listening on `addr`, for a client that
/// has only those (the fake may run in another process).
pub fn endpoint(name: &str, addr: SocketAddr, dir: &Path) -> NodeEndpoint {
    NodeEndpoint {
        name: name.to_string(),
        implementation: Implementation::Lnd,
        rpc_addr: addr.to_string(),
        p2p_addr: "127.0.0.1:9".into(),
        credentials: Credentials::Lnd(credentials(dir)),
        data_dir: dir.to_path_buf(),
        binary: "fake-lnd".into(),
        pid: None,
        payment_engine: Default::default(),
    }
}

fn credentials(dir: &Path) -> LndCredentials {
    LndCredentials {
        tls_cert: dir.join("tls.cert"),
        macaroon: dir.join("admin.macaroon"),
    }
}

fn acceptor(cert_pem: &str, key_pem: &str) -> std::io::Result<TlsAcceptor> {
    let cert = tls::cert_from_pem(cert_pem.as_bytes())
        .ok_or_else(|| std::io::Error::other("no certificate in the generated PEM"))?;
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).map_err(std::io::Error::other)?;
    let mut config = rustls::ServerConfig::builder_with_provider(tls::provider())
        .with_safe_default_protocol_versions()
        .map_err(std::io::Error::other)?
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .map_err(std::io::Error::other)?;
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

async fn accept(listener: TcpListener, acceptor: TlsAcceptor, state: Arc<State>) {
    while let Ok((tcp, _)) = listener.accept().await {
        let _ = tcp.set_nodelay(true);
        let (acceptor, state) = (acceptor.clone(), Arc::clone(&state));
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let service =
                hyper::service::service_fn(move |request| answer(Arc::clone(&state), request));
            let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(tls), service)
                .await;
        });
    }
}

/// One call: the macaroon checked, then the method by its path.
async fn answer(
    state: Arc<State>,
    request: http::Request<Incoming>,
) -> Result<http::Response<tonic::body::Body>, Infallible> {
    if state.hang.load(Ordering::Relaxed) {
        std::future::pending::<()>().await;
    }
    let macaroon = request.headers().get("macaroon").map(|v| v.as_bytes());
    if macaroon != Some(state.macaroon.as_bytes()) {
        return Ok(Status::unauthenticated("verification failed: signature mismatch").into_http());
    }
    let response = match request.uri().path() {
        "/lnrpc.Lightning/GetInfo" => {
            (Grpc::new(ProstCodec::new()))
                .unary(GetInfo(state), request)
                .await
        }
        "/routerrpc.Router/SendPaymentV2" => {
            Grpc::new(ProstCodec::new())
                .server_streaming(SendPayment(state), request)
                .await
        }
        other => Status::unimplemented(format!("the fake LND has no {other}")).into_http(),
    };
    Ok(response)
}

struct GetInfo(Arc<State>);

impl UnaryService<lnrpc::GetInfoRequest> for GetInfo {
    type Response = lnrpc::GetInfoResponse;
    type Future = Ready<Result<tonic::Response<lnrpc::GetInfoResponse>, Status>>;

    fn call(&mut self, _: tonic::Request<lnrpc::GetInfoRequest>) -> Self::Future {
        let network = self.0.network.lock().unwrap_or_else(|e| e.into_inner());
        let chains = (network.iter())
            .map(|n| lnrpc::Chain {
                network: n.clone(),
                ..Default::default()
            })
            .collect();
        ready(Ok(tonic::Response::new(lnrpc::GetInfoResponse {
            chains,
            identity_pubkey: PUBKEY.into(),
            alias: "fake-lnd".into(),
            version: "fake".into(),
            block_height: 1,
            synced_to_chain: true,
            ..Default::default()
        })))
    }
}

struct SendPayment(Arc<State>);

type Updates = futures::stream::Once<Ready<Result<lnrpc::Payment, Status>>>;

impl ServerStreamingService<routerrpc::SendPaymentRequest> for SendPayment {
    type Response = lnrpc::Payment;
    type ResponseStream = Updates;
    type Future = Ready<Result<tonic::Response<Updates>, Status>>;

    fn call(&mut self, request: tonic::Request<routerrpc::SendPaymentRequest>) -> Self::Future {
        self.0.payments.fetch_add(1, Ordering::Relaxed);
        let update = final_update(request.get_ref());
        ready(Ok(tonic::Response::new(futures::stream::once(ready(Ok(
            update,
        ))))))
    }
}

/// The one update of a keysend: succeeded over one hop, or failed with incorrect
/// payment details when the preimage is missing or does not hash to the payment hash.
fn final_update(request: &routerrpc::SendPaymentRequest) -> lnrpc::Payment {
    use lnrpc::payment::PaymentStatus;
    let preimage = request.dest_custom_records.get(&super::KEYSEND_RECORD);
    let hash_matches = preimage.is_some_and(|p| {
        sha256::Hash::hash(p).to_byte_array().as_slice() == request.payment_hash.as_slice()
    });
    let payment_hash = request.payment_hash.to_lower_hex_string();
    if request.dest.len() != 33 || !hash_matches {
        return lnrpc::Payment {
            payment_hash,
            status: PaymentStatus::Failed as i32,
            failure_reason: lnrpc::PaymentFailureReason::FailureReasonIncorrectPaymentDetails
                as i32,
            ..Default::default()
        };
    }
    let hop = lnrpc::Hop {
        pub_key: request.dest.to_lower_hex_string(),
        amt_to_forward_msat: request.amt_msat,
        ..Default::default()
    };
    lnrpc::Payment {
        payment_hash,
        value_msat: request.amt_msat,
        status: PaymentStatus::Succeeded as i32,
        htlcs: vec![lnrpc::HtlcAttempt {
            status: lnrpc::htlc_attempt::HtlcStatus::Succeeded as i32,
            route: Some(lnrpc::Route {
                hops: vec![hop],
                ..Default::default()
            }),
            ..Default::default()
        }],
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::{FailureReason, LightningNode, NodeError, PaymentOutcome};
    use std::time::Duration;

    async fn connected(fake: &FakeLnd) -> Arc<dyn LightningNode> {
        crate::node::driver(Implementation::Lnd)
            .connect(&fake.endpoint("alice"))
            .await
            .expect("the LND driver connects to the fake")
    }

    /// The fake behind the real client (TLS, macaroon, HTTP/2, SendPaymentV2's
    /// stream): 200 concurrent keysends all succeed, and the fake saw each one.
    #[tokio::test]
    async fn two_hundred_keysends_succeed_through_the_real_client() {
        let dir = tempfile::tempdir().unwrap();
        let fake = FakeLnd::start(dir.path()).await.unwrap();
        let node = connected(&fake).await;
        assert_eq!(node.get_info().await.unwrap().pubkey, PUBKEY);
        let payments = (0..200).map(|_| node.keysend(PUBKEY, 1_000, Duration::from_secs(10)));
        for outcome in futures::future::join_all(payments).await {
            assert_eq!(
                outcome.unwrap(),
                PaymentOutcome::Succeeded {
                    fee_msat: 0,
                    hops: 1
                }
            );
        }
        assert_eq!(fake.payments(), 200);
    }

    #[tokio::test]
    async fn a_call_without_the_macaroon_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let fake = FakeLnd::start(dir.path()).await.unwrap();
        std::fs::write(&fake.credentials.macaroon, b"another macaroon").unwrap();
        let node = connected(&fake).await;
        let err = node.get_info().await.unwrap_err();
        assert!(
            matches!(&err, NodeError::Rpc { status, .. } if status.contains("verification failed")),
            "{err:?}"
        );
        let refused = node.keysend(PUBKEY, 1_000, Duration::from_secs(10)).await;
        assert!(refused.is_err(), "{refused:?}");
        assert_eq!(fake.payments(), 0);
    }

    /// A node that took the connection and stopped answering: a call fails with the
    /// deadline's message instead of waiting forever (the outer timeout only turns a
    /// hang into a failure of this test).
    #[tokio::test]
    async fn a_call_to_a_node_that_stopped_answering_fails_at_its_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let fake = FakeLnd::start(dir.path()).await.unwrap();
        let deadline = Duration::from_millis(300);
        let node = crate::node::lnd::LndNode::connect_with_deadline(
            "alice",
            &fake.endpoint("alice"),
            deadline,
        )
        .await
        .unwrap();
        fake.hang();
        let call = tokio::time::timeout(Duration::from_secs(20), node.get_info()).await;
        let err = call
            .expect("the call hung past the test's outer timeout")
            .unwrap_err();
        assert!(
            matches!(&err, NodeError::Rpc { status, .. }
                if status.contains(&format!("call deadline of {deadline:?}"))),
            "{err:?}"
        );
    }

    #[test]
    fn a_preimage_that_does_not_hash_to_the_payment_hash_fails_the_payment() {
        let mut request = super::super::keysend_request(
            vec![2; 33],
            1_000,
            [7; 32],
            Duration::from_secs(1),
            None,
        );
        assert_eq!(
            super::super::final_outcome(&final_update(&request)),
            Some(PaymentOutcome::Succeeded {
                fee_msat: 0,
                hops: 1
            })
        );
        request.payment_hash[0] ^= 1;
        assert_eq!(
            super::super::final_outcome(&final_update(&request)),
            Some(PaymentOutcome::Failed {
                reason: FailureReason::IncorrectPaymentDetails
            })
        );
    }
}
