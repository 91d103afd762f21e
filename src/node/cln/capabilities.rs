//! What Core Lightning's client offers beyond [`crate::node::LightningNode`]: custom
//! records on a keysend, its ledger, its channels' health and its network.

use super::{ClnNode, readback};
use crate::node::{
    ChannelHealth, CustomRecords, HealthCheck, Ledger, NetworkName, NodeError, PaymentHash,
    PaymentLedger, PaymentOutcome, SentStatus,
};
use async_trait::async_trait;
use bitcoin::hex::DisplayHex;
use cln_grpc::pb;
use std::collections::HashMap;
use std::time::Duration;

#[async_trait]
impl CustomRecords for ClnNode {
    /// `xkeysend` with `extratlvs` (type as decimal text, value as hex): CLN makes
    /// the preimage itself.
    async fn keysend_records(
        &self,
        dest: &str,
        amount_msat: u64,
        _preimage: [u8; 32],
        timeout: Duration,
        records: &[(u64, Vec<u8>)],
    ) -> Result<PaymentOutcome, NodeError> {
        let extratlvs = (records.iter())
            .map(|(t, v)| (t.to_string(), v.to_lower_hex_string()))
            .collect();
        self.xkeysend(dest, amount_msat, timeout, None, extratlvs)
            .await
    }
}

#[async_trait]
impl Ledger for ClnNode {
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
impl HealthCheck for ClnNode {
    async fn channel_health(&self) -> Result<ChannelHealth, NodeError> {
        let channels = (self.client.clone())
            .list_peer_channels(pb::ListpeerchannelsRequest::default())
            .await
            .map_err(self.rpc("ListPeerChannels"))?
            .into_inner()
            .channels;
        Ok(readback::channel_health(&channels))
    }
}

#[async_trait]
impl NetworkName for ClnNode {
    async fn network(&self) -> Result<Option<String>, NodeError> {
        let info = self
            .client
            .clone()
            .getinfo(pb::GetinfoRequest {})
            .await
            .map_err(self.rpc("Getinfo"))?
            .into_inner();
        // Core Lightning says `bitcoin` for mainnet.
        Ok(Some(match info.network.as_str() {
            "bitcoin" => "main".to_string(),
            other => other.to_string(),
        }))
    }
}
