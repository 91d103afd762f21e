//! What only some node clients can do, each a trait of its own: a client offers one by
//! implementing it on its own type and answering `Some(self)` from the accessor on
//! [`LightningNode`] ([`LightningNode::hold_invoices`], ...), whose default is `None`.
//! A caller asks the accessor and, without the capability, either does without (a
//! reading the report leaves blank) or fails with [`lacking`]: an error that names
//! the node and the feature. Scenario validation refuses the workloads a node cannot
//! serve before a run ([`super::NodeDriver::missing`]), so that error is the tool's
//! bug, or a test's double, said plainly.

use super::parts::Split;
use super::{
    ChannelHealth, Feature, LightningNode, NodeError, PaymentHash, PaymentLedger, PaymentOutcome,
    SentStatus,
};
use async_trait::async_trait;
use std::collections::HashMap;
use std::time::Duration;

/// The error of a caller that needed `feature` of `node` and found its client without
/// it (the accessor answered `None`).
pub fn lacking(node: &dyn LightningNode, feature: Feature) -> NodeError {
    NodeError::Unsupported {
        node: node.name().to_string(),
        feature: feature.name(),
    }
}

/// Hold invoices (the accomplice of `workload: attack:`): an invoice for a hash whose
/// preimage the node does not know, so it can only hold the HTLC that pays it, then
/// cancel it. Offered by LND's client ([`LightningNode::hold_invoices`]).
#[async_trait]
pub trait HoldInvoices: Send + Sync {
    /// A hold invoice of `amount_msat` for `hash`; its BOLT 11 text.
    async fn add_hold_invoice(
        &self,
        hash: PaymentHash,
        amount_msat: u64,
    ) -> Result<String, NodeError>;
    /// Whether the HTLC paying the hold invoice `hash` is held (ACCEPTED).
    async fn hold_invoice_accepted(&self, hash: PaymentHash) -> Result<bool, NodeError>;
    /// Cancels the invoice `hash`, failing back the HTLC it holds.
    async fn cancel_invoice(&self, hash: PaymentHash) -> Result<(), NodeError>;
}

/// Circular rebalancing (`workload: rebalance:`). Offered by LND's client and the
/// fake ([`LightningNode::circular_payments`]).
#[async_trait]
pub trait CircularPayments: Send + Sync {
    /// Pays an invoice of the node's own of `amount_msat`, out through its channels
    /// with `first_hop` and back in through its channel with `last_hop` (public keys,
    /// in `hops`), with at most `max_fee_msat` in fees.
    async fn pay_self(
        &self,
        amount_msat: u64,
        hops: (&str, &str),
        max_fee_msat: u64,
        timeout: Duration,
    ) -> Result<PaymentOutcome, NodeError>;
}

/// Custom TLV records sent with a keysend (a podcast stream's split). Offered by the
/// clients of LND and Core Lightning, and the fake ([`LightningNode::custom_records`]).
#[async_trait]
pub trait CustomRecords: Send + Sync {
    /// Like [`LightningNode::keysend_capped`] with the client's own fee limit,
    /// carrying `records` (TLV type and value) beside the preimage record. A client
    /// that makes its own preimage ignores `preimage`.
    async fn keysend_records(
        &self,
        dest: &str,
        amount_msat: u64,
        preimage: [u8; 32],
        timeout: Duration,
        records: &[(u64, Vec<u8>)],
    ) -> Result<PaymentOutcome, NodeError>;
}

/// The custom records a node received, counted. Offered by LND's client
/// ([`LightningNode::record_counts`]); elsewhere the stream's report leaves the count
/// blank.
#[async_trait]
pub trait RecordCounts: Send + Sync {
    /// How many settled incoming keysends carried a custom record of `record_type`,
    /// over the node's history.
    async fn records_received(&self, record_type: u64) -> Result<u64, NodeError>;
}

/// A limit on the parts of a multi-part payment (`workload: max_parts:`). Offered by
/// the clients of LND and LDK ([`LightningNode::part_limit`]).
#[async_trait]
pub trait PartLimit: Send + Sync {
    /// Like [`LightningNode::pay_invoice_capped`], letting the node split the payment
    /// into at most `max_parts` parts, and telling how it was split where the client
    /// reads it.
    async fn pay_invoice_split(
        &self,
        bolt11: &str,
        timeout: Duration,
        max_fee_msat: Option<u64>,
        max_parts: u32,
    ) -> Result<Split, NodeError>;
}

/// The node's own record of the payments it sent and received, for reconciling the
/// tool's counts after a load. Offered by the clients of LND, Core Lightning, Eclair
/// and LDK, and the fake ([`LightningNode::own_ledger`]).
#[async_trait]
pub trait Ledger: Send + Sync {
    /// Totals over the history the node keeps.
    async fn payment_ledger(&self) -> Result<PaymentLedger, NodeError>;
    /// What became of the payments it sent with these hashes, for resolving the
    /// payments the tool left indeterminate one by one; hashes the node does not know
    /// are left out.
    async fn sent_statuses(
        &self,
        hashes: &[PaymentHash],
    ) -> Result<HashMap<PaymentHash, SentStatus>, NodeError>;
}

/// What faults may leave on a node's channels: pending HTLCs and force closes. Offered
/// by the clients of LND, Core Lightning, Eclair and LDK
/// ([`LightningNode::health_check`]); elsewhere the report leaves it blank.
#[async_trait]
pub trait HealthCheck: Send + Sync {
    async fn channel_health(&self) -> Result<ChannelHealth, NodeError>;
}

/// The Bitcoin network a node runs on. Offered by the clients of LND and Core
/// Lightning ([`LightningNode::network_name`]); `runtime: external` refuses a node
/// whose network it cannot tell unless mainnet is allowed.
#[async_trait]
pub trait NetworkName: Send + Sync {
    /// The network in Bitcoin Core's words (`regtest`, `signet`, `testnet`,
    /// `testnet4`, `main`); None when the node does not say.
    async fn network(&self) -> Result<Option<String>, NodeError>;
}

#[cfg(test)]
mod tests {
    use super::{Feature, lacking};
    use crate::node::fake::{FakeConfig, FakeNode};

    /// A caller without the capability it needs says which node lacks which feature.
    #[test]
    fn a_missing_capability_names_the_node_and_the_feature() {
        let node = FakeNode::new(FakeConfig::instant("alice"));
        let e = lacking(&node, Feature::HoldInvoices).to_string();
        assert_eq!(e, "alice: this client has no hold invoices");
    }
}
