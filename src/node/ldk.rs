//! LDK driver: ldk-server's API, `POST http://<rest address>/<Call>` with protobuf
//! bodies (our own message definitions, `proto.rs`), each request signed with the API
//! key: header `X-Auth: HMAC <unix secs>:<hex HMAC-SHA256(api key, secs as 8 bytes
//! big-endian || body)>`, accepted within a minute of the server's clock. Failures
//! answer a non-200 status with an `ErrorResponse`.
//!
//! ldk-server at the commit the build script pins (ee1c96c) has no keysend and no
//! ConnectPeer: `OpenChannel` takes the peer's address and connects itself, so
//! `connect_peer` only notes the address. A payment is `Bolt11Send` (it answers with a
//! payment id at once) and then `GetPaymentDetails` every [`POLL_EVERY`] until the
//! payment is final: the API offers no event stream without RabbitMQ (a build feature
//! and a broker). A failed payment carries no reason there.
//! `driver.rs` holds the rest of what the tool knows about ldk-server.

mod bolt11;
mod capabilities;
mod channels;
mod driver;
pub mod fake_server;
mod proto;
mod readback;

pub use driver::{DEFAULT_VERSION, LDK, LdkCredentials};

use super::Credentials;
use super::driver::NodeEndpoint;
use super::{
    ChannelInfo, FailureReason, Implementation, Invoice, LightningNode, NodeError, NodeInfo,
    PaymentOutcome, WalletBalance,
};
use async_trait::async_trait;
use bitcoin::hashes::{Hash, HashEngine, hmac, sha256};
use bolt11::payment_hash_of;
use channels::channel_info;
use prost::Message;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Fee budget of a payment: generous, so a benchmark never fails on fees in a regtest
/// network where the scenario sets the fee policy (as for LND and CLN).
const FEE_LIMIT_MSAT: u64 = 10_000_000;
/// How long past the payment timeout we keep asking for the final state before calling
/// it a timeout ourselves (an HTLC can stay in flight after LDK stops retrying).
const FINAL_ANSWER_GRACE: Duration = Duration::from_secs(30);
/// `GetPaymentDetails` is asked at this fixed cadence (a tick, not a pause after each
/// answer, so a slow answer does not stretch it): a payment's end is seen by the next
/// poll, at most one interval and one answer later. The interval is a trade: each poll
/// costs the tool and the node under test an HTTP request (ldk-server answers from
/// memory), and a payment of L ms costs L / interval of them.
const POLL_EVERY: Duration = Duration::from_millis(5);
/// Up to how late a poll sees an end: the interval, plus tokio's timer, which rounds
/// up to whole milliseconds, plus the poll's own round trip on loopback.
const POLL_LATE_UP_TO: Duration = Duration::from_millis(7);
/// How long an invoice stays payable: longer than any run.
const INVOICE_EXPIRY_SECS: u32 = 24 * 3600;
/// `OpenChannel` answers before the funding transaction exists: how long we wait for
/// it to be broadcast (setup mines right after `open_channel` returns).
const FUNDING_WAIT: Duration = Duration::from_secs(30);
/// Any one HTTP request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// The most parts of a payment without `max_parts:` (LDK's own default, MAX_PATH_COUNT).
const MAX_PATH_COUNT: u32 = 10;

/// One ldk-server node. Clones share the HTTP connection pool and the noted peer
/// addresses. No `Debug`: it holds the API key.
#[derive(Clone)]
pub struct LdkNode {
    name: Arc<str>,
    /// `http://<rest address>/`.
    base: Arc<str>,
    api_key: Arc<[u8]>,
    http: reqwest::Client,
    /// Peer addresses given to `connect_peer`, by public key, for `OpenChannel`.
    peers: Arc<Mutex<HashMap<String, String>>>,
    /// What the build cache or image says the node runs (the API does not tell).
    version: Arc<str>,
}

/// An answer other than 200 from ldk-server.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ServerError {
    http: u16,
    code: Option<proto::ErrorCode>,
    message: String,
}

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.code {
            Some(code) => write!(f, "HTTP {} {code:?}: {}", self.http, self.message),
            None => write!(f, "HTTP {}: {}", self.http, self.message),
        }
    }
}

/// Why a call failed: the request did not get an answer, or the server refused it.
enum CallError {
    Node(NodeError),
    Server(ServerError),
}

/// The `X-Auth` header value for `body` sent at `secs` (Unix time).
fn auth_header(api_key: &[u8], secs: u64, body: &[u8]) -> String {
    let mut engine = hmac::HmacEngine::<sha256::Hash>::new(api_key);
    engine.input(&secs.to_be_bytes());
    engine.input(body);
    let mac = hmac::Hmac::<sha256::Hash>::from_engine(engine);
    format!("HMAC {secs}:{mac}")
}

/// The error an answer other than 200 carries: its `ErrorResponse`, or the raw text
/// (an unknown path answers plain text).
fn server_error(http: u16, body: &[u8]) -> ServerError {
    match proto::ErrorResponse::decode(body) {
        Ok(e) if !e.message.is_empty() => ServerError {
            http,
            code: proto::ErrorCode::try_from(e.error_code).ok(),
            message: e.message,
        },
        _ => ServerError {
            http,
            code: None,
            message: String::from_utf8_lossy(body).trim().to_string(),
        },
    }
}

/// The failure reason when `Bolt11Send` itself refuses a payment; None for errors of
/// the request (a malformed invoice) or of the node.
fn send_failure(e: &ServerError) -> Option<FailureReason> {
    use proto::ErrorCode::LightningError;
    if e.code != Some(LightningError) {
        return None;
    }
    // ldk-node's messages for its errors (`ldk_node::NodeError`'s Display): "Failed to
    // send the given payment." for PaymentSendingFailed (ldk-node 0.7), which is also
    // what a drained channel gives (LDK logs RouteNotFound).
    let m = e.message.to_ascii_lowercase();
    Some(if m.contains("failed to send") {
        // PaymentSendingFailed: LDK found no route (with enough liquidity), or the
        // invoice expired; the route is what fails in a benchmark.
        FailureReason::NoRoute
    } else if m.contains("insufficient") {
        FailureReason::InsufficientBalance
    } else if m.contains("already been initiated") || m.contains("duplicate") {
        FailureReason::IncorrectPaymentDetails
    } else {
        FailureReason::Error
    })
}

/// The outcome of a payment the node reports, if final. ldk-server keeps no failure
/// reason (ldk-node's `PaymentFailed` event has one; the API drops it).
fn final_outcome(payment: &proto::Payment) -> Option<PaymentOutcome> {
    match proto::PaymentStatus::try_from(payment.status) {
        Ok(proto::PaymentStatus::Succeeded) => Some(PaymentOutcome::Succeeded {
            fee_msat: payment.fee_paid_msat.unwrap_or(0),
            // Not told: 0 stands for "unknown", as for CLN.
            hops: 0,
        }),
        Ok(proto::PaymentStatus::Failed) => Some(PaymentOutcome::Failed {
            reason: FailureReason::Error,
        }),
        Ok(proto::PaymentStatus::Pending) | Err(_) => None,
    }
}

/// True for the errors ldk-server gives while it is still starting: its REST listener
/// opens only once the node has started, so until then nothing answers.
fn is_starting_up(err: &NodeError) -> bool {
    matches!(err, NodeError::Connect { .. })
}

/// The version to report: the build cache's stamp beside a local binary (`v0.1.0
/// <commit>`), else the image the node runs.
fn version_of(endpoint: &NodeEndpoint) -> String {
    let binary = &endpoint.binary;
    let stamp = binary
        .file_name()
        .and_then(|n| n.to_str())
        .zip(binary.parent())
        .and_then(|(n, dir)| crate::cache::stamp_in(dir, n));
    match stamp
        .as_deref()
        .map(|s| s.split_once(' ').unwrap_or((s, "")))
    {
        Some((version, "")) => format!("ldk-server {version}"),
        Some((version, commit)) => format!("ldk-server {version} (source {commit})"),
        None if binary.is_absolute() => "ldk-server".to_string(),
        None => format!("ldk-server ({})", binary.display()),
    }
}

impl LdkNode {
    /// Reads the API key and makes the HTTP client; no request is made here (the
    /// runtime's readiness check has made one already).
    pub fn connect(name: &str, endpoint: &NodeEndpoint) -> Result<LdkNode, NodeError> {
        let Credentials::Ldk(credentials) = &endpoint.credentials else {
            return Err(NodeError::protocol(
                name,
                "connect",
                format!("not LDK credentials: {:?}", endpoint.credentials),
            ));
        };
        let api_key = credentials.read_api_key(name)?;
        // reqwest needs the process's provider even for plain HTTP (main installs it;
        // tests may not have).
        crate::tls::install_crypto_provider();
        let http = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(Duration::from_secs(10))
            .tcp_nodelay(true)
            .http1_only()
            .build()
            .map_err(|e| NodeError::Connect {
                node: name.to_string(),
                endpoint: endpoint.rpc_addr.clone(),
                source: Box::new(e),
            })?;
        Ok(LdkNode {
            name: Arc::from(name),
            base: Arc::from(format!("http://{}/", endpoint.rpc_addr)),
            api_key: Arc::from(api_key.into_bytes()),
            http,
            peers: Arc::default(),
            version: Arc::from(version_of(endpoint)),
        })
    }

    fn protocol(&self, call: &'static str, detail: impl Into<String>) -> NodeError {
        NodeError::protocol(&self.name, call, detail)
    }

    fn rpc(&self, call: &'static str, e: &ServerError) -> NodeError {
        NodeError::Rpc {
            node: self.name.to_string(),
            call,
            status: e.to_string(),
        }
    }

    /// One signed request and its decoded answer.
    async fn call<Req: Message, Resp: Message + Default>(
        &self,
        call: &'static str,
        request: &Req,
    ) -> Result<Resp, CallError> {
        let body = request.encode_to_vec();
        let secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let auth = auth_header(&self.api_key, secs, &body);
        let answer = self
            .http
            .post(format!("{}{call}", self.base))
            .header("X-Auth", auth)
            .header("Content-Type", "application/octet-stream")
            .body(body)
            .send()
            .await
            .map_err(|e| {
                CallError::Node(if e.is_connect() {
                    NodeError::Connect {
                        node: self.name.to_string(),
                        endpoint: self.base.trim_end_matches('/').to_string(),
                        source: Box::new(e),
                    }
                } else {
                    NodeError::Rpc {
                        node: self.name.to_string(),
                        call,
                        status: format!("no answer: {e}"),
                    }
                })
            })?;
        let status = answer.status();
        let bytes = answer.bytes().await.map_err(|e| {
            CallError::Node(NodeError::Rpc {
                node: self.name.to_string(),
                call,
                status: format!("answer cut short: {e}"),
            })
        })?;
        if !status.is_success() {
            return Err(CallError::Server(server_error(status.as_u16(), &bytes)));
        }
        Resp::decode(bytes).map_err(|e| CallError::Node(self.protocol(call, e.to_string())))
    }

    /// [`LdkNode::call`] where any refusal is an error.
    async fn request<Req: Message, Resp: Message + Default>(
        &self,
        call: &'static str,
        request: &Req,
    ) -> Result<Resp, NodeError> {
        self.call(call, request).await.map_err(|e| match e {
            CallError::Node(e) => e,
            CallError::Server(e) => self.rpc(call, &e),
        })
    }

    /// Asks for the payment's state until it is final, or until well after `timeout`.
    /// Pays `bolt11` in at most `max_path_count` parts and waits for its end.
    async fn bolt11_send(
        &self,
        bolt11: &str,
        timeout: Duration,
        max_fee_msat: Option<u64>,
        max_path_count: u32,
    ) -> Result<PaymentOutcome, NodeError> {
        const CALL: &str = "Bolt11Send";
        let fee_limit = super::fee_limit_msat(FEE_LIMIT_MSAT, max_fee_msat);
        let request = proto::Bolt11SendRequest {
            invoice: bolt11.to_string(),
            route_parameters: Some(proto::RouteParametersConfig {
                max_total_routing_fee_msat: Some(fee_limit),
                // LDK's defaults (DEFAULT_MAX_TOTAL_CLTV_EXPIRY_DELTA,
                // DEFAULT_MAX_CHANNEL_SATURATION_POW_HALF): a config replaces them all.
                max_total_cltv_expiry_delta: 1008,
                max_path_count,
                max_channel_saturation_power_of_half: 2,
            }),
        };
        let sent: Result<proto::Bolt11SendResponse, _> = self.call(CALL, &request).await;
        match sent {
            Ok(sent) => self.wait_final(sent.payment_id, timeout).await,
            Err(CallError::Node(e)) => Err(e),
            Err(CallError::Server(e)) => match send_failure(&e) {
                Some(reason) => Ok(PaymentOutcome::Failed { reason }),
                None => Err(self.rpc(CALL, &e)),
            },
        }
    }

    async fn wait_final(
        &self,
        payment_id: String,
        timeout: Duration,
    ) -> Result<PaymentOutcome, NodeError> {
        let deadline = Instant::now() + timeout + FINAL_ANSWER_GRACE;
        let request = proto::GetPaymentDetailsRequest { payment_id };
        let mut tick = tokio::time::interval(POLL_EVERY);
        // A late answer delays the next poll, never makes polls bunch up after it.
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let details: proto::GetPaymentDetailsResponse =
                self.request("GetPaymentDetails", &request).await?;
            if let Some(outcome) = details.payment.as_ref().and_then(final_outcome) {
                return Ok(outcome);
            }
            if Instant::now() >= deadline {
                return Ok(PaymentOutcome::Failed {
                    reason: FailureReason::Timeout,
                });
            }
        }
    }
}

#[async_trait]
impl LightningNode for LdkNode {
    fn name(&self) -> &str {
        &self.name
    }

    fn implementation(&self) -> Implementation {
        Implementation::Ldk
    }

    fn completion(&self) -> super::Completion {
        super::Completion::polling("GetPaymentDetails", POLL_EVERY, POLL_LATE_UP_TO)
    }

    /// Synced once both wallets (on-chain and Lightning) have synced with the chain at
    /// least once; the height is the node's best block. The alias is the instance name
    /// (the config sets it; the API does not tell it back).
    async fn get_info(&self) -> Result<NodeInfo, NodeError> {
        let info: proto::GetNodeInfoResponse = self
            .request("GetNodeInfo", &proto::GetNodeInfoRequest {})
            .await?;
        let active = self
            .channels()
            .await?
            .iter()
            .filter(|c| c.is_usable)
            .count();
        Ok(NodeInfo {
            pubkey: info.node_id,
            alias: self.name.to_string(),
            version: self.version.to_string(),
            block_height: info.current_best_block.map_or(0, |b| b.height),
            synced_to_chain: info.latest_onchain_wallet_sync_timestamp.is_some()
                && info.latest_lightning_wallet_sync_timestamp.is_some(),
            num_active_channels: u32::try_from(active).unwrap_or(u32::MAX),
        })
    }

    async fn new_address(&self) -> Result<String, NodeError> {
        let answer: proto::OnchainReceiveResponse = self
            .request("OnchainReceive", &proto::OnchainReceiveRequest {})
            .await?;
        Ok(answer.address)
    }

    /// Spendable is what the wallet may spend (confirmed, and its own unconfirmed
    /// change, less the reserve for anchor channels); the rest of the total is pending.
    async fn wallet_balance(&self) -> Result<WalletBalance, NodeError> {
        let b: proto::GetBalancesResponse = self
            .request("GetBalances", &proto::GetBalancesRequest {})
            .await?;
        Ok(WalletBalance {
            confirmed_sat: b.spendable_onchain_balance_sats,
            unconfirmed_sat: b
                .total_onchain_balance_sats
                .saturating_sub(b.spendable_onchain_balance_sats),
        })
    }

    /// ldk-server has no ConnectPeer at this commit: the address is noted for
    /// `OpenChannel`, which connects. ldk-node reconnects to its channel peers itself.
    async fn connect_peer(&self, pubkey: &str, host: &str) -> Result<(), NodeError> {
        super::pubkey_bytes(&self.name, "ConnectPeer", pubkey)?;
        self.peers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(pubkey.to_string(), host.to_string());
        Ok(())
    }

    async fn open_channel(&self, pubkey: &str, capacity_sat: u64) -> Result<String, NodeError> {
        const CALL: &str = "OpenChannel";
        let address = self
            .peers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(pubkey)
            .cloned()
            .ok_or_else(|| {
                self.protocol(
                    CALL,
                    format!("no address for peer {pubkey}: connect_peer comes first"),
                )
            })?;
        let request = proto::OpenChannelRequest {
            node_pubkey: pubkey.to_string(),
            address,
            channel_amount_sats: capacity_sat,
            // Announced, so other nodes can route through it, as LND's and CLN's are.
            announce_channel: true,
        };
        let before = self.wallet_balance().await?.confirmed_sat;
        let opened: proto::OpenChannelResponse = self.request(CALL, &request).await?;
        // The answer comes before the peer accepted and before the funding transaction
        // exists. Wait for its outpoint, and then until the wallet shows it spent: the
        // wallet learns of it from Bitcoin Core's mempool (polled every 2 s), which
        // proves it was broadcast (setup mines right after), and the next channel's
        // funding then cannot pick the same coins.
        let deadline = Instant::now() + FUNDING_WAIT;
        let mut point = None;
        loop {
            if point.is_none() {
                point = self
                    .channels()
                    .await?
                    .iter()
                    .find(|c| c.user_channel_id == opened.user_channel_id)
                    .and_then(|c| c.funding_txo.as_ref())
                    .map(|o| format!("{}:{}", o.txid, o.vout));
            }
            if let Some(point) = &point {
                let now = self.wallet_balance().await?.confirmed_sat;
                if now <= before.saturating_sub(capacity_sat) {
                    return Ok(point.clone());
                }
            }
            if Instant::now() >= deadline {
                let what = match &point {
                    None => "got no funding transaction",
                    Some(_) => "has a funding transaction the wallet never saw in the mempool",
                };
                return Err(self.protocol(
                    CALL,
                    format!(
                        "channel {} to {pubkey} {what} in {} s",
                        opened.user_channel_id,
                        FUNDING_WAIT.as_secs()
                    ),
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn list_channels(&self) -> Result<Vec<ChannelInfo>, NodeError> {
        Ok(self.channels().await?.iter().map(channel_info).collect())
    }

    async fn create_invoice(&self, amount_msat: u64) -> Result<Invoice, NodeError> {
        const CALL: &str = "Bolt11Receive";
        let request = proto::Bolt11ReceiveRequest {
            amount_msat: Some(amount_msat),
            description: Some(proto::Bolt11InvoiceDescription {
                direct: Some("lnbench".into()),
            }),
            expiry_secs: INVOICE_EXPIRY_SECS,
        };
        let answer: proto::Bolt11ReceiveResponse = self.request(CALL, &request).await?;
        let payment_hash = payment_hash_of(&answer.invoice)
            .ok_or_else(|| self.protocol(CALL, format!("no payment hash in {}", answer.invoice)))?;
        Ok(Invoice {
            bolt11: answer.invoice,
            payment_hash,
        })
    }

    /// Validation refuses keysend with an LDK node (`NodeDriver::missing`, `Feature::Keysend`);
    /// reaching here is a bug of the tool, said as an error.
    async fn keysend_capped(
        &self,
        _dest: &str,
        _amount_msat: u64,
        _preimage: [u8; 32],
        _timeout: Duration,
        _max_fee_msat: Option<u64>,
    ) -> Result<PaymentOutcome, NodeError> {
        Err(self.protocol(
            "SpontaneousSend",
            "this ldk-server has no keysend (SpontaneousSend came after commit ee1c96c)",
        ))
    }

    async fn pay_invoice_capped(
        &self,
        bolt11: &str,
        timeout: Duration,
        max_fee_msat: Option<u64>,
    ) -> Result<PaymentOutcome, NodeError> {
        self.bolt11_send(bolt11, timeout, max_fee_msat, MAX_PATH_COUNT)
            .await
    }

    fn part_limit(&self) -> Option<&dyn super::PartLimit> {
        Some(self)
    }

    fn own_ledger(&self) -> Option<&dyn super::Ledger> {
        Some(self)
    }

    fn health_check(&self) -> Option<&dyn super::HealthCheck> {
        Some(self)
    }
}

#[cfg(test)]
mod poll_tests;
#[cfg(test)]
mod tests;
