//! What LND's client offers beyond [`crate::node::LightningNode`]: every capability, each through
//! the module that makes its calls (hold.rs, rebalance.rs, records.rs, readback.rs),
//! or here when it is one call.

use super::{FEE_LIMIT_BASE_MSAT, LndNode, fee_limit, records_request, timeout_seconds};
use crate::node::parts::Split;
use crate::node::{
    ChannelHealth, CircularPayments, CustomRecords, HealthCheck, HoldInvoices, Ledger, NetworkName,
    NodeError, PartLimit, PaymentHash, PaymentLedger, PaymentOutcome, RecordCounts, SentStatus,
};
use async_trait::async_trait;
use std::collections::HashMap;
use std::time::Duration;
use voltage_tonic_lnd::{lnrpc, routerrpc};

#[async_trait]
impl HoldInvoices for LndNode {
    async fn add_hold_invoice(&self, hash: PaymentHash, msat: u64) -> Result<String, NodeError> {
        self.hold_add(hash, msat).await
    }

    async fn hold_invoice_accepted(&self, hash: PaymentHash) -> Result<bool, NodeError> {
        self.hold_accepted(hash).await
    }

    async fn cancel_invoice(&self, hash: PaymentHash) -> Result<(), NodeError> {
        self.hold_cancel(hash).await
    }
}

#[async_trait]
impl CircularPayments for LndNode {
    async fn pay_self(
        &self,
        amount_msat: u64,
        hops: (&str, &str),
        max_fee_msat: u64,
        timeout: Duration,
    ) -> Result<PaymentOutcome, NodeError> {
        self.circle(amount_msat, hops, max_fee_msat, timeout).await
    }
}

#[async_trait]
impl CustomRecords for LndNode {
    async fn keysend_records(
        &self,
        dest: &str,
        amount_msat: u64,
        preimage: [u8; 32],
        timeout: Duration,
        records: &[(u64, Vec<u8>)],
    ) -> Result<PaymentOutcome, NodeError> {
        let dest = self.pubkey_bytes("SendPaymentV2", dest)?;
        let request = records_request(dest, amount_msat, preimage, timeout, records);
        self.send_payment(request, timeout).await
    }
}

#[async_trait]
impl RecordCounts for LndNode {
    async fn records_received(&self, record_type: u64) -> Result<u64, NodeError> {
        self.count_records(record_type).await
    }
}

#[async_trait]
impl PartLimit for LndNode {
    /// `max_parts` goes to `SendPaymentV2`; the final status lists the HTLCs.
    async fn pay_invoice_split(
        &self,
        bolt11: &str,
        timeout: Duration,
        max_fee_msat: Option<u64>,
        max_parts: u32,
    ) -> Result<Split, NodeError> {
        let request = routerrpc::SendPaymentRequest {
            payment_request: bolt11.to_string(),
            timeout_seconds: timeout_seconds(timeout),
            fee_limit_msat: fee_limit(FEE_LIMIT_BASE_MSAT, max_fee_msat),
            max_parts,
            no_inflight_updates: true,
            ..Default::default()
        };
        self.send_payment_split(request, timeout).await
    }
}

#[async_trait]
impl Ledger for LndNode {
    async fn payment_ledger(&self) -> Result<PaymentLedger, NodeError> {
        self.ledger().await
    }

    async fn sent_statuses(
        &self,
        hashes: &[PaymentHash],
    ) -> Result<HashMap<PaymentHash, SentStatus>, NodeError> {
        self.statuses(hashes).await
    }
}

#[async_trait]
impl HealthCheck for LndNode {
    async fn channel_health(&self) -> Result<ChannelHealth, NodeError> {
        let mut lightning = self.lightning.clone();
        let open = (lightning
            .list_channels(lnrpc::ListChannelsRequest::default())
            .await)
            .map_err(self.rpc("ListChannels"))?
            .into_inner()
            .channels;
        let pending = (lightning
            .pending_channels(lnrpc::PendingChannelsRequest::default())
            .await)
            .map_err(self.rpc("PendingChannels"))?
            .into_inner();
        let closed = lightning
            .closed_channels(lnrpc::ClosedChannelsRequest {
                local_force: true,
                remote_force: true,
                breach: true,
                ..Default::default()
            })
            .await
            .map_err(self.rpc("ClosedChannels"))?
            .into_inner()
            .channels;
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Ok(ChannelHealth {
            channels: count(open.len()),
            active: count(open.iter().filter(|c| c.active).count()),
            pending_htlcs: Some(count(open.iter().map(|c| c.pending_htlcs.len()).sum())),
            force_closed: count(pending.pending_force_closing_channels.len() + closed.len()),
        })
    }
}

#[async_trait]
impl NetworkName for LndNode {
    async fn network(&self) -> Result<Option<String>, NodeError> {
        let info = self
            .lightning
            .clone()
            .get_info(lnrpc::GetInfoRequest {})
            .await
            .map_err(self.rpc("GetInfo"))?
            .into_inner();
        // LND says `mainnet` and `testnet` (testnet3).
        Ok(info.chains.first().map(|c| match c.network.as_str() {
            "mainnet" => "main".to_string(),
            other => other.to_string(),
        }))
    }
}
