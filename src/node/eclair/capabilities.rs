//! What Eclair's client offers beyond [`crate::node::LightningNode`]: its ledger and
//! its channels' health.

use super::{EclairNode, channels};
use crate::node::{
    ChannelHealth, HealthCheck, Ledger, NodeError, PaymentHash, PaymentLedger, SentStatus,
};
use async_trait::async_trait;
use serde_json::Value;
use std::collections::HashMap;

#[async_trait]
impl Ledger for EclairNode {
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
impl HealthCheck for EclairNode {
    async fn channel_health(&self) -> Result<ChannelHealth, NodeError> {
        let channels: Vec<Value> = self.call("channels", &[]).await?;
        Ok(channels::channel_health(&channels))
    }
}
