//! Circular rebalancing (`workload: rebalance:`): the node pays an invoice of its
//! own through `SendPaymentV2` with `allow_self_payment`, leaving through its
//! channels with the first hop (`outgoing_chan_ids`) and coming back from the last
//! hop (`last_hop_pubkey`).

use super::{LndNode, timeout_seconds};
use crate::node::{FailureReason, LightningNode, NodeError, PaymentOutcome};
use std::time::Duration;
use voltage_tonic_lnd::{lnrpc, routerrpc};

impl LndNode {
    pub(super) async fn circle(
        &self,
        amount_msat: u64,
        (first_hop, last_hop): (&str, &str),
        max_fee_msat: u64,
        timeout: Duration,
    ) -> Result<PaymentOutcome, NodeError> {
        const CALL: &str = "SendPaymentV2";
        self.pubkey_bytes(CALL, first_hop)?;
        let last_hop_pubkey = self.pubkey_bytes(CALL, last_hop)?;
        let outgoing_chan_ids = self.active_channels_with(first_hop).await?;
        if outgoing_chan_ids.is_empty() {
            // No active channel to leave through: as LND answers a route it cannot find.
            return Ok(PaymentOutcome::Failed {
                reason: FailureReason::NoRoute,
            });
        }
        let invoice = self.create_invoice(amount_msat).await?;
        let request = routerrpc::SendPaymentRequest {
            payment_request: invoice.bolt11,
            allow_self_payment: true,
            outgoing_chan_ids,
            last_hop_pubkey,
            timeout_seconds: timeout_seconds(timeout),
            fee_limit_msat: i64::try_from(max_fee_msat).unwrap_or(i64::MAX),
            max_parts: 1,
            no_inflight_updates: true,
            ..Default::default()
        };
        self.send_payment(request, timeout).await
    }

    /// The ids of the node's active channels with `peer`.
    async fn active_channels_with(&self, peer: &str) -> Result<Vec<u64>, NodeError> {
        let channels = (self.lightning.clone())
            .list_channels(lnrpc::ListChannelsRequest {
                active_only: true,
                ..Default::default()
            })
            .await
            .map_err(self.rpc("ListChannels"))?
            .into_inner()
            .channels;
        Ok((channels.into_iter())
            .filter(|c| c.remote_pubkey == peer)
            .map(|c| c.chan_id)
            .collect())
    }
}
