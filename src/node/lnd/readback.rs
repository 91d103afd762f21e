//! LND's ledger ([`crate::node::Ledger::payment_ledger`]): `ListPayments` (incomplete ones
//! included) and `ListInvoices` (keysends arrive as invoices LND creates), each read
//! a page at a time by index offset.

use super::LndNode;
use crate::node::{NodeError, PaymentHash, PaymentLedger, SentStatus};
use std::collections::HashMap;
use voltage_tonic_lnd::lnrpc::{self, invoice::InvoiceState, payment::PaymentStatus};

/// Entries per page.
const PAGE: u64 = 1_000;

impl LndNode {
    pub(super) async fn ledger(&self) -> Result<PaymentLedger, NodeError> {
        let mut ledger = PaymentLedger::default();
        self.add_payments(&mut ledger).await?;
        self.add_invoices(&mut ledger).await?;
        Ok(ledger)
    }

    async fn add_payments(&self, ledger: &mut PaymentLedger) -> Result<(), NodeError> {
        self.each_payment(|p| match status(p) {
            SentStatus::Succeeded => {
                ledger.sent_succeeded += 1;
                ledger.fees_paid_msat += u64::try_from(p.fee_msat).unwrap_or(0);
            }
            SentStatus::Failed => ledger.sent_failed += 1,
            SentStatus::InFlight => ledger.sent_in_flight += 1,
        })
        .await
    }

    /// The status of each payment sent with one of `hashes`.
    pub(super) async fn statuses(
        &self,
        hashes: &[PaymentHash],
    ) -> Result<HashMap<PaymentHash, SentStatus>, NodeError> {
        let wanted = crate::node::hashes_by_hex(hashes);
        let mut found = HashMap::new();
        self.each_payment(|p| {
            if let Some(hash) = wanted.get(&p.payment_hash) {
                found.insert(*hash, status(p));
            }
        })
        .await?;
        Ok(found)
    }

    /// Calls `visit` on every payment the node sent, incomplete ones included.
    async fn each_payment(&self, mut visit: impl FnMut(&lnrpc::Payment)) -> Result<(), NodeError> {
        let mut offset = 0;
        loop {
            let page = (self.lightning.clone())
                .list_payments(lnrpc::ListPaymentsRequest {
                    include_incomplete: true,
                    index_offset: offset,
                    max_payments: PAGE,
                    omit_hops: true,
                    ..Default::default()
                })
                .await
                .map_err(self.rpc("ListPayments"))?
                .into_inner();
            page.payments.iter().for_each(&mut visit);
            if page.payments.is_empty() || page.last_index_offset <= offset {
                return Ok(());
            }
            offset = page.last_index_offset;
        }
    }

    async fn add_invoices(&self, ledger: &mut PaymentLedger) -> Result<(), NodeError> {
        self.each_invoice(|i| {
            if InvoiceState::try_from(i.state) == Ok(InvoiceState::Settled) {
                ledger.received += 1;
                ledger.received_msat += u64::try_from(i.amt_paid_msat).unwrap_or(0);
            }
        })
        .await
    }

    /// Settled invoices (keysends arrive as invoices) whose HTLCs carried a custom
    /// record of `record_type`.
    pub(super) async fn count_records(&self, record_type: u64) -> Result<u64, NodeError> {
        let mut n = 0;
        self.each_invoice(|i| {
            let settled = InvoiceState::try_from(i.state) == Ok(InvoiceState::Settled);
            if settled && carries(i, record_type) {
                n += 1;
            }
        })
        .await?;
        Ok(n)
    }

    /// Calls `visit` on every invoice of the node.
    async fn each_invoice(&self, mut visit: impl FnMut(&lnrpc::Invoice)) -> Result<(), NodeError> {
        let mut offset = 0;
        loop {
            let page = (self.lightning.clone())
                .list_invoices(lnrpc::ListInvoiceRequest {
                    index_offset: offset,
                    num_max_invoices: PAGE,
                    ..Default::default()
                })
                .await
                .map_err(self.rpc("ListInvoices"))?
                .into_inner();
            page.invoices.iter().for_each(&mut visit);
            if page.invoices.is_empty() || page.last_index_offset <= offset {
                return Ok(());
            }
            offset = page.last_index_offset;
        }
    }
}

/// Whether one of the invoice's HTLCs carried a custom record of `record_type`.
fn carries(invoice: &lnrpc::Invoice, record_type: u64) -> bool {
    (invoice.htlcs.iter()).any(|h| h.custom_records.contains_key(&record_type))
}

/// A payment's status as the ledger counts it: anything not ended is in flight.
fn status(p: &lnrpc::Payment) -> SentStatus {
    match PaymentStatus::try_from(p.status) {
        Ok(PaymentStatus::Succeeded) => SentStatus::Succeeded,
        Ok(PaymentStatus::Failed) => SentStatus::Failed,
        _ => SentStatus::InFlight,
    }
}
