//! Eclair driver: its HTTP API (`POST /<call>` with form parameters, basic auth with the
//! API password and an empty user), over one pooled reqwest client per node.
//!
//! Eclair answers payments at once with a payment id (`sendtonode` always,
//! `payinvoice` unless blocking): the client then waits for the payment's event on
//! Eclair's websocket (`events.rs`, one socket per node), and asks `getsentinfo` only
//! when the socket is down or the event was lost (`wait.rs`).
//! `driver.rs` holds the rest of what the tool knows about Eclair.

mod capabilities;
mod channels;
mod driver;
mod events;
#[doc(hidden)]
pub mod fake_api;
mod readback;
mod wait;

use channels::channel_info;
pub use driver::{API_PASSWORD_FILE, DEFAULT_VERSION, ECLAIR, EclairCredentials};

use super::Credentials;
use super::driver::NodeEndpoint;
use super::{
    ChannelInfo, FailureReason, Implementation, Invoice, LightningNode, NodeError, NodeInfo,
    PaymentOutcome, WalletBalance,
};
use async_trait::async_trait;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// Fee budget on top of a share of the amount: generous, so a benchmark never fails on
/// fees in a regtest network where the scenario sets the fee policy (as for LND, CLN).
const FEE_LIMIT_BASE_SAT: u64 = 10_000;
const FEE_LIMIT_PERCENT: u32 = 10;
/// Fee rate of channel funding transactions (sat/vB), as LND's and CLN's.
const FUNDING_SAT_PER_VB: u32 = 2;
/// Eclair refuses a funding whose fee exceeds its budget; its default is too small for
/// regtest's fallback fee rate.
const FUNDING_FEE_BUDGET_SAT: u64 = 100_000;
/// How long a channel's funding transaction may take to reach bitcoind after `open`.
const PUBLISH_WAIT: Duration = Duration::from_secs(60);
/// How the status of a call that got no HTTP answer starts.
const TRANSPORT: &str = "no answer";
/// Time limit of one API call (payments are not waited for inside one).
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// One Eclair node. Clones share the connection pool.
#[derive(Clone)]
pub struct EclairNode {
    name: Arc<str>,
    http: reqwest::Client,
    /// `http://127.0.0.1:<port>/`.
    base: Arc<str>,
    password: Arc<str>,
    /// The websocket, once [`EclairNode::open_events`] opened it; without it payments
    /// poll `getsentinfo`.
    events: Option<Arc<events::EventSocket>>,
    /// `host:port` of the API, for the websocket.
    addr: Arc<str>,
}

/// The message of an error answer: Eclair's `{"error": "..."}`, else the body as is.
fn error_message(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| body.trim().chars().take(300).collect())
}

/// True for the errors Eclair gives while it is still starting: the JVM takes seconds
/// before the API listens, and the port is closed until then.
fn is_starting_up(err: &NodeError) -> bool {
    match err {
        NodeError::Connect { .. } => true,
        // A container engine's port proxy accepts and then drops the connection while
        // nothing listens behind it yet.
        NodeError::Rpc { status, .. } => {
            status.starts_with(TRANSPORT) || status.starts_with("HTTP 503")
        }
        _ => false,
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GetInfo {
    version: String,
    node_id: String,
    #[serde(default)]
    alias: String,
    block_height: u32,
}

#[derive(Debug, Deserialize)]
struct OnChainBalance {
    confirmed: u64,
    unconfirmed: u64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CreatedInvoice {
    serialized: String,
    payment_hash: String,
}

/// One part of a payment in `getsentinfo`.
#[derive(Debug, Deserialize)]
struct SentPart {
    status: SentStatus,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum SentStatus {
    Pending,
    #[serde(rename_all = "camelCase")]
    Sent {
        #[serde(default)]
        fees_paid: u64,
        #[serde(default)]
        route: Vec<Value>,
    },
    Failed {
        #[serde(default)]
        failures: Vec<FailureSummary>,
    },
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FailureSummary {
    #[serde(default)]
    failure_message: String,
}

/// The final outcome of a payment from its parts, or None while it is still pending (or
/// not yet recorded).
fn payment_outcome(parts: &[SentPart]) -> Option<PaymentOutcome> {
    let mut fee_msat = 0;
    let mut hops = 0;
    let mut sent = false;
    for part in parts {
        match &part.status {
            SentStatus::Pending => return None,
            SentStatus::Sent { fees_paid, route } => {
                sent = true;
                fee_msat += fees_paid;
                hops = hops.max(route.len() as u32);
            }
            SentStatus::Failed { .. } => {}
        }
    }
    if sent {
        return Some(PaymentOutcome::Succeeded { fee_msat, hops });
    }
    let messages: Vec<&str> = parts
        .iter()
        .filter_map(|p| match &p.status {
            SentStatus::Failed { failures } => Some(failures),
            _ => None,
        })
        .flatten()
        .map(|f| f.failure_message.as_str())
        .collect();
    if parts.is_empty() {
        return None;
    }
    Some(PaymentOutcome::Failed {
        reason: failure_reason(&messages),
    })
}

/// Our reason for a payment whose attempts failed with these messages (Eclair's
/// router errors and BOLT 4 failure messages, oldest first).
fn failure_reason(messages: &[&str]) -> FailureReason {
    let any = |needle: &str| messages.iter().any(|m| m.contains(needle));
    if any("incorrect payment details or unknown payment hash") {
        FailureReason::IncorrectPaymentDetails
    } else if any("balance too low") {
        FailureReason::InsufficientBalance
    } else if any("complete payment amount was not received") {
        FailureReason::Timeout
    } else if any("route not found")
        || any("payment attempts exhausted")
        || any("channel is currently unavailable")
        || any("channel is currently disabled")
        || any("does not know the next peer")
    {
        FailureReason::NoRoute
    } else {
        FailureReason::Error
    }
}

/// `getsentinfo` errors that are about the payment, not the call: none today; a
/// payment refused before it started (bad invoice) is an error of `payinvoice` itself.
fn refused_payment(status: &str) -> Option<FailureReason> {
    if status.contains("balance too low") {
        Some(FailureReason::InsufficientBalance)
    } else if status.contains("route not found") {
        Some(FailureReason::NoRoute)
    } else {
        None
    }
}

impl EclairNode {
    /// Reads the API password once and builds the client; nothing is sent yet.
    pub async fn connect(name: &str, endpoint: &NodeEndpoint) -> Result<EclairNode, NodeError> {
        let Credentials::Eclair(credentials) = &endpoint.credentials else {
            return Err(NodeError::protocol(
                name,
                "connect",
                format!("not Eclair credentials: {:?}", endpoint.credentials),
            ));
        };
        let password =
            crate::files::read_text(&credentials.api_password, crate::files::SMALL_MAX_BYTES)
                .map_err(|source| NodeError::Credentials {
                    node: name.to_string(),
                    what: "API password",
                    path: credentials.api_password.clone(),
                    source,
                })?;
        crate::secrets::register_secret(&password);
        // reqwest needs the process's provider even for plain HTTP (main installs it;
        // tests may not have).
        crate::tls::install_crypto_provider();
        let http = reqwest::Client::builder()
            .timeout(CALL_TIMEOUT)
            .connect_timeout(Duration::from_secs(10))
            .tcp_nodelay(true)
            .pool_max_idle_per_host(256)
            .build()
            .map_err(|e| NodeError::Connect {
                node: name.to_string(),
                endpoint: endpoint.rpc_addr.clone(),
                source: Box::new(e),
            })?;
        Ok(EclairNode {
            name: Arc::from(name),
            http,
            base: Arc::from(format!("http://{}/", endpoint.rpc_addr)),
            password: Arc::from(password.trim()),
            events: None,
            addr: Arc::from(endpoint.rpc_addr.as_str()),
        })
    }

    /// Opens the node's websocket, through which payments learn that they ended.
    pub async fn open_events(&mut self) {
        let socket = events::EventSocket::open(&self.name, &self.addr, &self.password).await;
        self.events = Some(Arc::new(socket));
    }

    fn protocol(&self, call: &'static str, detail: impl Into<String>) -> NodeError {
        NodeError::protocol(&self.name, call, detail)
    }

    /// `POST /<call>` with `fields`, the JSON answer parsed as `T`.
    async fn call<T: DeserializeOwned>(
        &self,
        call: &'static str,
        fields: &[(&str, String)],
    ) -> Result<T, NodeError> {
        let response = self
            .http
            .post(format!("{}{call}", self.base))
            .basic_auth("", Some(&*self.password))
            // application/x-www-form-urlencoded: what Eclair's API reads.
            .form(fields)
            .send()
            .await
            .map_err(|e| {
                if e.is_connect() {
                    NodeError::Connect {
                        node: self.name.to_string(),
                        endpoint: self.base.trim_end_matches('/').to_string(),
                        source: Box::new(e),
                    }
                } else {
                    NodeError::Rpc {
                        node: self.name.to_string(),
                        call,
                        status: format!("{TRANSPORT}: {e:#}"),
                    }
                }
            })?;
        let status = response.status();
        let body = response.text().await.map_err(|e| NodeError::Rpc {
            node: self.name.to_string(),
            call,
            status: format!("reading the answer: {e}"),
        })?;
        if !status.is_success() {
            return Err(NodeError::Rpc {
                node: self.name.to_string(),
                call,
                status: format!("HTTP {}: {}", status.as_u16(), error_message(&body)),
            });
        }
        serde_json::from_str(&body).map_err(|e| {
            let shown: String = body.chars().take(200).collect();
            self.protocol(call, format!("{e}: {shown}"))
        })
    }

    /// Starts a payment with `call` (which answers its id) and waits for its outcome.
    async fn pay(
        &self,
        call: &'static str,
        fields: &[(&str, String)],
        timeout: Duration,
    ) -> Result<PaymentOutcome, NodeError> {
        let id: String = match self.call(call, fields).await {
            Ok(id) => id,
            Err(NodeError::Rpc { status, .. }) if refused_payment(&status).is_some() => {
                let reason = refused_payment(&status).unwrap_or(FailureReason::Error);
                return Ok(PaymentOutcome::Failed { reason });
            }
            Err(e) => return Err(e),
        };
        self.wait_outcome(&id, timeout).await
    }

    /// Waits (up to [`PUBLISH_WAIT`]) until `txid` is among the wallet's transactions
    /// (`onchaintransactions`: bitcoind's `listtransactions`, mempool included).
    async fn wait_published(&self, txid: &str) -> Result<(), NodeError> {
        let deadline = tokio::time::Instant::now() + PUBLISH_WAIT;
        loop {
            let txs: Vec<Value> = self
                .call(
                    "onchaintransactions",
                    &[("count", "1000".to_string()), ("skip", "0".to_string())],
                )
                .await?;
            if txs
                .iter()
                .any(|t| t.get("txid").and_then(Value::as_str) == Some(txid))
            {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(self.protocol(
                    "open",
                    format!("funding transaction {txid} not published after {PUBLISH_WAIT:?}"),
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The fee budget: a flat part (sat) and a percentage; under `max_fee_msat`, the
    /// cap rounded down to whole sat (at most the default) and no percentage.
    fn fee_fields(&self, max_fee_msat: Option<u64>) -> [(&'static str, String); 2] {
        let (flat_sat, pct) = match max_fee_msat {
            None => (FEE_LIMIT_BASE_SAT, FEE_LIMIT_PERCENT),
            Some(cap) => ((cap / 1000).min(FEE_LIMIT_BASE_SAT), 0),
        };
        [
            ("maxFeeFlatSat", flat_sat.to_string()),
            ("maxFeePct", pct.to_string()),
        ]
    }
}

#[async_trait]
impl LightningNode for EclairNode {
    fn name(&self) -> &str {
        &self.name
    }

    fn implementation(&self) -> Implementation {
        Implementation::Eclair
    }

    fn completion(&self) -> super::Completion {
        wait::completion(self.events.as_deref().map(events::EventSocket::counts))
    }

    /// Eclair's `getinfo` has no channel count nor sync flag: the channels are counted
    /// from `channels`, and Eclair is synced once it answers with a block height (it
    /// serves the API only after catching up with bitcoind).
    async fn get_info(&self) -> Result<NodeInfo, NodeError> {
        let info: GetInfo = self.call("getinfo", &[]).await?;
        let channels = self.list_channels().await?;
        Ok(NodeInfo {
            pubkey: info.node_id,
            alias: info.alias,
            version: info.version,
            block_height: info.block_height,
            synced_to_chain: true,
            num_active_channels: channels.iter().filter(|c| c.active).count() as u32,
        })
    }

    async fn new_address(&self) -> Result<String, NodeError> {
        self.call("getnewaddress", &[]).await
    }

    async fn wallet_balance(&self) -> Result<WalletBalance, NodeError> {
        let b: OnChainBalance = self.call("onchainbalance", &[]).await?;
        Ok(WalletBalance {
            confirmed_sat: b.confirmed,
            unconfirmed_sat: b.unconfirmed,
        })
    }

    async fn connect_peer(&self, pubkey: &str, host: &str) -> Result<(), NodeError> {
        const CALL: &str = "connect";
        super::pubkey_bytes(&self.name, CALL, pubkey)?;
        // "connected" or "already connected".
        let _: Value = self
            .call(CALL, &[("uri", format!("{pubkey}@{host}"))])
            .await?;
        Ok(())
    }

    /// `open` answers once the funding transaction is published ("created channel <id>
    /// with fundingTxId=<txid> and fees=<n> sat"); the output index is read from the
    /// channel's commitment.
    async fn open_channel(&self, pubkey: &str, capacity_sat: u64) -> Result<String, NodeError> {
        const CALL: &str = "open";
        super::pubkey_bytes(&self.name, CALL, pubkey)?;
        let answer: String = self
            .call(
                CALL,
                &[
                    ("nodeId", pubkey.to_string()),
                    ("fundingSatoshis", capacity_sat.to_string()),
                    ("fundingFeerateSatByte", FUNDING_SAT_PER_VB.to_string()),
                    (
                        "fundingFeeBudgetSatoshis",
                        FUNDING_FEE_BUDGET_SAT.to_string(),
                    ),
                ],
            )
            .await?;
        let word = |key: &str| {
            answer
                .split_whitespace()
                .find_map(|w| w.strip_prefix(key))
                .map(str::to_string)
        };
        // A failed funding is answered with 200 and a sentence ("channel funding error").
        let txid = word("fundingTxId=").ok_or_else(|| NodeError::Rpc {
            node: self.name.to_string(),
            call: CALL,
            status: answer.clone(),
        })?;
        // Eclair answers once the funding is signed; it publishes the transaction a
        // moment later. Setup mines right after: wait until bitcoind's wallet has it.
        self.wait_published(&txid).await?;
        let channel_id = answer.split_whitespace().nth(2).unwrap_or("").to_string();
        let channels: Vec<Value> = self
            .call("channels", &[("nodeId", pubkey.to_string())])
            .await?;
        let point = channels
            .iter()
            .filter(|c| c.get("channelId").and_then(Value::as_str) == Some(channel_id.as_str()))
            .map(channel_info)
            .map(|c| c.channel_point)
            .find(|p| p.starts_with(&txid));
        Ok(point.unwrap_or_else(|| format!("{txid}:0")))
    }

    async fn list_channels(&self) -> Result<Vec<ChannelInfo>, NodeError> {
        let channels: Vec<Value> = self.call("channels", &[]).await?;
        Ok(channels.iter().map(channel_info).collect())
    }

    async fn create_invoice(&self, amount_msat: u64) -> Result<Invoice, NodeError> {
        const CALL: &str = "createinvoice";
        let created: CreatedInvoice = self
            .call(
                CALL,
                &[
                    ("description", "lnbench".to_string()),
                    ("amountMsat", amount_msat.to_string()),
                ],
            )
            .await?;
        let mut payment_hash = [0u8; 32];
        let bytes = <Vec<u8> as bitcoin::hex::FromHex>::from_hex(&created.payment_hash)
            .ok()
            .filter(|b| b.len() == 32)
            .ok_or_else(|| {
                self.protocol(CALL, format!("payment hash {:?}", created.payment_hash))
            })?;
        payment_hash.copy_from_slice(&bytes);
        Ok(Invoice {
            bolt11: created.serialized,
            payment_hash,
        })
    }

    async fn keysend_capped(
        &self,
        dest: &str,
        amount_msat: u64,
        _preimage: [u8; 32],
        timeout: Duration,
        max_fee_msat: Option<u64>,
    ) -> Result<PaymentOutcome, NodeError> {
        const CALL: &str = "sendtonode";
        super::pubkey_bytes(&self.name, CALL, dest)?;
        let mut fields = vec![
            ("nodeId", dest.to_string()),
            ("amountMsat", amount_msat.to_string()),
        ];
        fields.extend(self.fee_fields(max_fee_msat));
        self.pay(CALL, &fields, timeout).await
    }

    async fn pay_invoice_capped(
        &self,
        bolt11: &str,
        timeout: Duration,
        max_fee_msat: Option<u64>,
    ) -> Result<PaymentOutcome, NodeError> {
        let mut fields = vec![("invoice", bolt11.to_string())];
        fields.extend(self.fee_fields(max_fee_msat));
        self.pay("payinvoice", &fields, timeout).await
    }

    fn own_ledger(&self) -> Option<&dyn super::Ledger> {
        Some(self)
    }

    fn health_check(&self) -> Option<&dyn super::HealthCheck> {
        Some(self)
    }
}

#[cfg(test)]
mod tests;
