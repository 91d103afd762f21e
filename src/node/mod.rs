//! Lightning node drivers: one trait, one file per implementation, and the
//! capabilities only some clients offer ([`capabilities`]).
//!
//! Every driver is cheap to clone (it holds gRPC / HTTP clients, which are themselves
//! handles) and takes `&self`, so many payment workers can use one node at once
//! without a lock.

pub mod capabilities;
pub mod cln;
pub mod completion;
pub mod deadline;
pub mod driver;
pub mod eclair;
pub mod fake;
#[doc(hidden)]
pub mod fake_http;
pub mod ldk;
pub mod lnd;
pub mod parts;

pub use capabilities::{
    CircularPayments, CustomRecords, HealthCheck, HoldInvoices, Ledger, NetworkName, PartLimit,
    RecordCounts,
};
pub use completion::Completion;
pub use driver::{Connector, Feature, NodeDriver, NodeEndpoint};

use async_trait::async_trait;
use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

/// Which Lightning implementation a node runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Implementation {
    /// The implementation of a generated node when the topology names none.
    #[default]
    Lnd,
    Cln,
    Eclair,
    Ldk,
}

impl Implementation {
    pub const ALL: [Implementation; 4] = [
        Implementation::Lnd,
        Implementation::Cln,
        Implementation::Eclair,
        Implementation::Ldk,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Implementation::Lnd => "lnd",
            Implementation::Cln => "cln",
            Implementation::Eclair => "eclair",
            Implementation::Ldk => "ldk",
        }
    }
}

/// The files a client needs to talk to a node, where the tool reads them: one variant
/// per implementation, its content defined by the implementation's module. Here, where
/// the implementations are registered, so the driver trait names none of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credentials {
    Lnd(lnd::LndCredentials),
    Cln(cln::ClnCredentials),
    Eclair(eclair::EclairCredentials),
    Ldk(ldk::LdkCredentials),
}

impl Credentials {
    /// Every credential file, in the order of [`NodeDriver::credential_files`], for
    /// checks that they exist and stay private.
    pub fn files(&self) -> Vec<&Path> {
        match self {
            Credentials::Lnd(c) => c.files(),
            Credentials::Cln(c) => c.files(),
            Credentials::Eclair(c) => c.files(),
            Credentials::Ldk(c) => c.files(),
        }
    }
}

/// A node's database (`database:` in the scenario). Defined beside the drivers, which
/// each say what a kind means for their implementation; the scenario names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Database {
    /// The implementation's own default (bbolt for LND, SQLite for Core Lightning).
    #[default]
    Default,
    /// A database of its own on the run's PostgreSQL server.
    Postgres,
}

/// Which of Core Lightning's commands pays an invoice (`payment_engine:` in the
/// scenario): `xpay` (askrene routing, the default), the older `pay` plugin, or
/// `renepay` (not in CLN's gRPC interface: through the node's JSON-RPC socket, so on
/// the local runtime only). Keysend goes through `xkeysend` whatever the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PaymentEngine {
    #[default]
    Xpay,
    Pay,
    Renepay,
}

impl PaymentEngine {
    pub fn as_str(self) -> &'static str {
        match self {
            PaymentEngine::Xpay => "xpay",
            PaymentEngine::Pay => "pay",
            PaymentEngine::Renepay => "renepay",
        }
    }
}

/// The name of the database server (PostgreSQL) a runtime starts for nodes whose
/// driver asks for one: its hostname, container and directory. No node may take it.
pub const DATABASE_HOST: &str = "postgres";

/// The driver of an implementation: the one registration line per implementation.
pub fn driver(implementation: Implementation) -> &'static dyn NodeDriver {
    match implementation {
        Implementation::Lnd => &lnd::LND,
        Implementation::Cln => &cln::CLN,
        Implementation::Eclair => &eclair::ECLAIR,
        Implementation::Ldk => &ldk::LDK,
    }
}

impl std::fmt::Display for Implementation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What `get_info` tells about a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInfo {
    pub pubkey: String,
    pub alias: String,
    pub version: String,
    pub block_height: u32,
    pub synced_to_chain: bool,
    pub num_active_channels: u32,
}

/// One channel as seen from the local node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelInfo {
    pub remote_pubkey: String,
    pub channel_point: String,
    pub capacity_sat: u64,
    pub local_balance_sat: u64,
    pub active: bool,
}

/// What faults may leave on a node's channels, read at the end of a run with faults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ChannelHealth {
    /// Open channels, and how many of them are active.
    pub channels: u32,
    pub active: u32,
    /// HTLCs still pending on the open channels; None where the implementation's API
    /// does not count them (ldk-server gives their amounts only).
    pub pending_htlcs: Option<u32>,
    /// Channels force-closed (being closed, or closed) by either side.
    pub force_closed: u32,
}

/// A database migration a node ran at its start, as its log tells it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoggedMigration {
    /// The implementation's name for it (`kv_invoice_migration`).
    pub name: String,
    /// From its start to its end, by the node's own log timestamps.
    pub seconds: f64,
    /// What it says it moved (invoices, payments), where it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<u64>,
}

/// On-chain wallet balance in satoshis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WalletBalance {
    pub confirmed_sat: u64,
    pub unconfirmed_sat: u64,
}

/// An invoice created by a receiver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invoice {
    pub bolt11: String,
    pub payment_hash: [u8; 32],
}

/// Why a payment failed, as the paying node reports it. A closed set, so failures
/// can be counted by reason without unbounded memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureReason {
    /// The node found no route with enough capacity.
    NoRoute,
    /// The payment did not complete within its timeout.
    Timeout,
    /// The receiver rejected the payment (unknown hash, wrong amount, keysend refused).
    IncorrectPaymentDetails,
    /// The sender's channels lack the balance.
    InsufficientBalance,
    /// The payment was canceled.
    Canceled,
    /// The node reported an error without a more specific reason.
    Error,
}

impl FailureReason {
    pub fn as_str(self) -> &'static str {
        match self {
            FailureReason::NoRoute => "no_route",
            FailureReason::Timeout => "timeout",
            FailureReason::IncorrectPaymentDetails => "incorrect_payment_details",
            FailureReason::InsufficientBalance => "insufficient_balance",
            FailureReason::Canceled => "canceled",
            FailureReason::Error => "error",
        }
    }
}

/// The result of a payment attempt that the node answered. Transport problems are
/// a `NodeError`, not an outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaymentOutcome {
    Succeeded { fee_msat: u64, hops: u32 },
    Failed { reason: FailureReason },
}

/// What a node's own records say about the payments it sent and received: totals over
/// the history it keeps. Read once before a load and once after it, the difference
/// ([`PaymentLedger::since`]) is what the load did, as the node saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct PaymentLedger {
    /// Outgoing payments that succeeded, failed, or are still in flight.
    pub sent_succeeded: u64,
    pub sent_failed: u64,
    pub sent_in_flight: u64,
    /// Routing fees the node paid on its succeeded payments, msat.
    pub fees_paid_msat: u64,
    /// Incoming payments settled (paid invoices and keysends), and their amount.
    pub received: u64,
    pub received_msat: u64,
}

impl PaymentLedger {
    /// What happened after `mark` (an earlier reading of the same node). Payments in
    /// flight are the ones in flight now, whenever they started.
    pub fn since(&self, mark: &PaymentLedger) -> PaymentLedger {
        PaymentLedger {
            sent_succeeded: self.sent_succeeded.saturating_sub(mark.sent_succeeded),
            sent_failed: self.sent_failed.saturating_sub(mark.sent_failed),
            sent_in_flight: self.sent_in_flight,
            fees_paid_msat: self.fees_paid_msat.saturating_sub(mark.fees_paid_msat),
            received: self.received.saturating_sub(mark.received),
            received_msat: self.received_msat.saturating_sub(mark.received_msat),
        }
    }
}

/// What a sender's own records say became of one payment it sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SentStatus {
    Succeeded,
    Failed,
    InFlight,
}

/// The fee limit a client gives its node: its own `default_msat`, lowered to
/// `max_fee_msat` when given (mainnet caps), never raised by it.
pub fn fee_limit_msat(default_msat: u64, max_fee_msat: Option<u64>) -> u64 {
    max_fee_msat.map_or(default_msat, |cap| cap.min(default_msat))
}

/// A payment's hash.
pub type PaymentHash = [u8; 32];

/// The hashes asked about, keyed by their lower-case hex (as node APIs list them).
pub(crate) fn hashes_by_hex(hashes: &[PaymentHash]) -> HashMap<String, PaymentHash> {
    use bitcoin::hex::DisplayHex;
    hashes
        .iter()
        .map(|h| (h.to_lower_hex_string(), *h))
        .collect()
}

/// A fresh random keysend preimage and its payment hash.
pub fn fresh_preimage() -> ([u8; 32], PaymentHash) {
    use bitcoin::hashes::{Hash, sha256};
    use rand::RngCore;
    let mut preimage = [0u8; 32];
    rand::rng().fill_bytes(&mut preimage);
    (preimage, sha256::Hash::hash(&preimage).to_byte_array())
}

/// An error talking to a node (connection, RPC status, malformed answer), or asking
/// its client for what it does not offer.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    #[error("cannot connect to {node} at {endpoint}")]
    Connect {
        node: String,
        endpoint: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("cannot read {what} of {node} from {path}")]
    Credentials {
        node: String,
        what: &'static str,
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{node}: {call} failed: {status}")]
    Rpc {
        node: String,
        call: &'static str,
        status: String,
    },
    #[error("{node}: {call} returned an unexpected answer: {detail}")]
    Protocol {
        node: String,
        call: &'static str,
        detail: String,
    },
    /// A caller needed a capability the node's client does not offer
    /// ([`capabilities::lacking`]).
    #[error("{node}: this client has no {feature}")]
    Unsupported { node: String, feature: &'static str },
}

impl NodeError {
    /// A gRPC call that the node answered with an error status.
    pub fn grpc(node: &str, call: &'static str, status: &tonic::Status) -> NodeError {
        NodeError::Rpc {
            node: node.to_string(),
            call,
            status: format!("{:?}: {}", status.code(), status.message()),
        }
    }

    /// An answer the client could not make sense of.
    pub fn protocol(node: &str, call: &'static str, detail: impl Into<String>) -> NodeError {
        NodeError::Protocol {
            node: node.to_string(),
            call,
            detail: detail.into(),
        }
    }
}

/// A node public key given as hex, as the 33 bytes the RPCs take.
pub fn pubkey_bytes(node: &str, call: &'static str, pubkey: &str) -> Result<Vec<u8>, NodeError> {
    use bitcoin::hex::FromHex;
    match Vec::<u8>::from_hex(pubkey) {
        Ok(bytes) if bytes.len() == 33 => Ok(bytes),
        _ => Err(NodeError::protocol(
            node,
            call,
            format!("not a node public key: {pubkey:?}"),
        )),
    }
}

/// A Lightning node the tool can set up and drive: what every client does. What only
/// some do is a capability ([`capabilities`]), asked of the client through its
/// accessor here, `None` by default.
#[async_trait]
pub trait LightningNode: Send + Sync {
    /// The instance name from the scenario (e.g. `alice-2`).
    fn name(&self) -> &str;
    fn implementation(&self) -> Implementation;
    /// How this client learns that a payment it sent ended, and how late that can be
    /// (with what it fell back on since it connected).
    fn completion(&self) -> Completion;

    async fn get_info(&self) -> Result<NodeInfo, NodeError>;
    async fn new_address(&self) -> Result<String, NodeError>;
    async fn wallet_balance(&self) -> Result<WalletBalance, NodeError>;
    /// Connect to a peer at `host` (`ip:port` of its P2P listener).
    async fn connect_peer(&self, pubkey: &str, host: &str) -> Result<(), NodeError>;
    /// Open a channel and return its channel point (`txid:index`) once the funding
    /// transaction is published.
    async fn open_channel(&self, pubkey: &str, capacity_sat: u64) -> Result<String, NodeError>;
    async fn list_channels(&self) -> Result<Vec<ChannelInfo>, NodeError>;
    async fn create_invoice(&self, amount_msat: u64) -> Result<Invoice, NodeError>;
    /// Pay `amount_msat` to `dest` by keysend and wait for the final result, with the
    /// client's own fee limit. Provided, like [`LightningNode::keysend_with`] and
    /// [`LightningNode::pay_invoice`]: each is a required call with its defaults, the
    /// same for every client, so no client overrides them.
    async fn keysend(
        &self,
        dest: &str,
        amount_msat: u64,
        timeout: Duration,
    ) -> Result<PaymentOutcome, NodeError> {
        let (preimage, _) = fresh_preimage();
        self.keysend_capped(dest, amount_msat, preimage, timeout, None)
            .await
    }
    /// Whether [`LightningNode::keysend_with`] sends the preimage it is given, so the
    /// tool knows the payment's hash before it starts.
    fn keysend_takes_preimage(&self) -> bool {
        false
    }
    /// Like [`LightningNode::keysend`], with the preimage the tool chose where the
    /// client can send it ([`LightningNode::keysend_takes_preimage`]); others make
    /// their own.
    async fn keysend_with(
        &self,
        dest: &str,
        amount_msat: u64,
        preimage: [u8; 32],
        timeout: Duration,
    ) -> Result<PaymentOutcome, NodeError> {
        self.keysend_capped(dest, amount_msat, preimage, timeout, None)
            .await
    }
    /// Like [`LightningNode::keysend_with`], paying at most `max_fee_msat` in routing
    /// fees when given ([`fee_limit_msat`]: never above the client's own limit).
    async fn keysend_capped(
        &self,
        dest: &str,
        amount_msat: u64,
        preimage: [u8; 32],
        timeout: Duration,
        max_fee_msat: Option<u64>,
    ) -> Result<PaymentOutcome, NodeError>;
    /// Pay a BOLT 11 invoice and wait for the final result, with the client's own
    /// fee limit.
    async fn pay_invoice(
        &self,
        bolt11: &str,
        timeout: Duration,
    ) -> Result<PaymentOutcome, NodeError> {
        self.pay_invoice_capped(bolt11, timeout, None).await
    }
    /// Like [`LightningNode::pay_invoice`], paying at most `max_fee_msat` in routing
    /// fees when given ([`fee_limit_msat`]).
    async fn pay_invoice_capped(
        &self,
        bolt11: &str,
        timeout: Duration,
        max_fee_msat: Option<u64>,
    ) -> Result<PaymentOutcome, NodeError>;

    /// Hold invoices, where the client has them (the attack's accomplice).
    fn hold_invoices(&self) -> Option<&dyn HoldInvoices> {
        None
    }
    /// Payments to itself around a chosen circle, where the client makes them
    /// (rebalancing).
    fn circular_payments(&self) -> Option<&dyn CircularPayments> {
        None
    }
    /// Keysends with custom TLV records, where the client sends them (a stream).
    fn custom_records(&self) -> Option<&dyn CustomRecords> {
        None
    }
    /// Counts of the custom records received, where the client reads them.
    fn record_counts(&self) -> Option<&dyn RecordCounts> {
        None
    }
    /// Payments with a limit on their parts, where the client sets one (`max_parts:`).
    fn part_limit(&self) -> Option<&dyn PartLimit> {
        None
    }
    /// The node's own ledger of payments, where the client reads it (reconciliation).
    fn own_ledger(&self) -> Option<&dyn Ledger> {
        None
    }
    /// Pending HTLCs and force closes, where the client reads them (after faults).
    fn health_check(&self) -> Option<&dyn HealthCheck> {
        None
    }
    /// The node's Bitcoin network, where the client reads it (`runtime: external`).
    fn network_name(&self) -> Option<&dyn NetworkName> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::{Implementation, driver};

    /// An external node's credential fields name the driver's credential files one
    /// for one, as `runtime: external` builds the credentials through the driver.
    #[test]
    fn external_credential_fields_match_the_credential_files() {
        for implementation in Implementation::ALL {
            let driver = driver(implementation);
            if let Some(fields) = driver.external().map(|e| e.credential_fields()) {
                assert_eq!(
                    fields.len(),
                    driver.credential_files().len(),
                    "{implementation}"
                );
            }
        }
    }
}
