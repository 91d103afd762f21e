//! Core Lightning's ledger ([`crate::node::Ledger::payment_ledger`]):
//! `listpays` (one entry per payment, its parts merged) and `listinvoices` (a
//! keysend received appears there as an invoice CLN creates), each read whole.

use super::ClnNode;
use crate::node::{ChannelHealth, NodeError, PaymentHash, PaymentLedger, SentStatus};
use cln_grpc::pb::{
    self, listinvoices_invoices::ListinvoicesInvoicesStatus as Invoice,
    listpays_pays::ListpaysPaysStatus as Pay,
};
use std::collections::{HashMap, HashSet};

fn msat(amount: Option<&pb::Amount>) -> u64 {
    amount.map_or(0, |a| a.msat)
}

impl ClnNode {
    pub(super) async fn ledger(&self) -> Result<PaymentLedger, NodeError> {
        let mut client = self.client.clone();
        let mut ledger = PaymentLedger::default();
        for p in &self.pays().await? {
            match status(p) {
                SentStatus::Succeeded => {
                    ledger.sent_succeeded += 1;
                    let sent = msat(p.amount_sent_msat.as_ref());
                    ledger.fees_paid_msat += sent.saturating_sub(msat(p.amount_msat.as_ref()));
                }
                SentStatus::Failed => ledger.sent_failed += 1,
                SentStatus::InFlight => ledger.sent_in_flight += 1,
            }
        }
        let invoices = (client
            .list_invoices(pb::ListinvoicesRequest::default())
            .await)
            .map_err(self.rpc("ListInvoices"))?
            .into_inner()
            .invoices;
        for i in invoices.iter().filter(|i| i.status == Invoice::Paid as i32) {
            ledger.received += 1;
            ledger.received_msat += msat(i.amount_received_msat.as_ref());
        }
        Ok(ledger)
    }

    /// The status of each payment sent with one of `hashes`.
    pub(super) async fn statuses(
        &self,
        hashes: &[PaymentHash],
    ) -> Result<HashMap<PaymentHash, SentStatus>, NodeError> {
        let wanted: HashSet<&[u8]> = hashes.iter().map(|h| &h[..]).collect();
        let pays = self.pays().await?;
        let found = (pays.iter())
            .filter(|p| wanted.contains(p.payment_hash.as_slice()))
            .filter_map(|p| {
                Some((
                    PaymentHash::try_from(p.payment_hash.as_slice()).ok()?,
                    status(p),
                ))
            })
            .collect();
        Ok(found)
    }

    /// Every payment sent (`listpays`: one entry per payment, its parts merged).
    async fn pays(&self) -> Result<Vec<pb::ListpaysPays>, NodeError> {
        let mut client = self.client.clone();
        Ok((client.list_pays(pb::ListpaysRequest::default()).await)
            .map_err(self.rpc("ListPays"))?
            .into_inner()
            .pays)
    }
}

fn status(p: &pb::ListpaysPays) -> SentStatus {
    match Pay::try_from(p.status) {
        Ok(Pay::Complete) => SentStatus::Succeeded,
        Ok(Pay::Failed) => SentStatus::Failed,
        _ => SentStatus::InFlight,
    }
}

/// The channels at the end of a run with faults, from `listpeerchannels`: open ones
/// (any state before closing) with their HTLCs, and those force-closed (a unilateral
/// close awaited, or its commitment seen on chain; the tool closes no channel
/// cooperatively during a run). CLN forgets closed channels 100 blocks on.
pub(super) fn channel_health(channels: &[pb::ListpeerchannelsChannels]) -> ChannelHealth {
    use pb::ChannelState as S;
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let closing = |c: &&pb::ListpeerchannelsChannels| {
        matches!(
            c.state(),
            S::ChanneldShuttingDown
                | S::ClosingdSigexchange
                | S::ClosingdComplete
                | S::AwaitingUnilateral
                | S::FundingSpendSeen
                | S::Onchain
                | S::Closed
        )
    };
    let forced = |c: &&pb::ListpeerchannelsChannels| {
        matches!(
            c.state(),
            S::AwaitingUnilateral | S::FundingSpendSeen | S::Onchain
        )
    };
    let open: Vec<_> = channels.iter().filter(|c| !closing(c)).collect();
    ChannelHealth {
        channels: count(open.len()),
        active: count(
            (open.iter())
                .filter(|c| c.state() == S::ChanneldNormal && c.peer_connected)
                .count(),
        ),
        pending_htlcs: Some(count(open.iter().map(|c| c.htlcs.len()).sum())),
        force_closed: count(channels.iter().filter(forced).count()),
    }
}
