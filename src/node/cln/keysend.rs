//! Keysend through `xkeysend`, with or without extra TLV records (a podcast stream's
//! split carries one).

use super::{ClnNode, FEE_LIMIT_BASE_MSAT, msat, retry_for, succeeded};
use crate::node::{NodeError, PaymentOutcome};
use cln_grpc::pb;
use std::time::Duration;

impl ClnNode {
    /// A keysend through `xkeysend`, with the client's fee limit (a tenth of the
    /// amount above the base, or `max_fee_msat` below it) and extra TLV records.
    pub(super) async fn xkeysend(
        &self,
        dest: &str,
        amount_msat: u64,
        timeout: Duration,
        max_fee_msat: Option<u64>,
        extratlvs: std::collections::HashMap<String, String>,
    ) -> Result<PaymentOutcome, NodeError> {
        const CALL: &str = "Xkeysend";
        let default = amount_msat / 10 + FEE_LIMIT_BASE_MSAT;
        let request = pb::XkeysendRequest {
            destination: self.pubkey_bytes(CALL, dest)?,
            amount_msat: msat(amount_msat),
            maxfee: msat(crate::node::fee_limit_msat(default, max_fee_msat)),
            retry_for: retry_for(timeout),
            extratlvs,
            ..Default::default()
        };
        let mut client = self.client.clone();
        self.settle(CALL, client.xkeysend(request), timeout, |r| {
            succeeded(r.amount_msat, r.amount_sent_msat)
        })
        .await
    }
}
