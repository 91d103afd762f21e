//! What LDK's client offers beyond [`crate::node::LightningNode`]: a part limit, its
//! ledger and its channels' health.

use super::{LdkNode, channels, proto};
use crate::node::parts::Split;
use crate::node::{
    ChannelHealth, HealthCheck, Ledger, NodeError, PartLimit, PaymentHash, PaymentLedger,
    SentStatus,
};
use async_trait::async_trait;
use std::collections::HashMap;
use std::time::Duration;

#[async_trait]
impl PartLimit for LdkNode {
    /// The limit is LDK's `max_path_count`; ldk-server's payment tells no parts.
    async fn pay_invoice_split(
        &self,
        bolt11: &str,
        timeout: Duration,
        max_fee_msat: Option<u64>,
        max_parts: u32,
    ) -> Result<Split, NodeError> {
        let outcome = (self.bolt11_send(bolt11, timeout, max_fee_msat, max_parts)).await?;
        Ok(Split {
            outcome,
            parts: None,
        })
    }
}

#[async_trait]
impl Ledger for LdkNode {
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
impl HealthCheck for LdkNode {
    async fn channel_health(&self) -> Result<ChannelHealth, NodeError> {
        let open = self.channels().await?;
        let balances: proto::GetBalancesResponse = self
            .request("GetBalances", &proto::GetBalancesRequest {})
            .await?;
        Ok(channels::channel_health(
            &open,
            &balances.lightning_balances,
        ))
    }
}
