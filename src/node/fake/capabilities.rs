//! What the fake offers beyond [`LightningNode`]: custom records (paid, not kept),
//! payments to itself, and its ledger until a test hides it.

use super::FakeNode;
use crate::node::{
    CircularPayments, CustomRecords, Ledger, LightningNode, NodeError, PaymentHash, PaymentLedger,
    PaymentOutcome, SentStatus,
};
use async_trait::async_trait;
use std::collections::HashMap;
use std::time::Duration;

#[async_trait]
impl CustomRecords for FakeNode {
    /// Paid like any keysend; the records are not kept.
    async fn keysend_records(
        &self,
        dest: &str,
        amount_msat: u64,
        preimage: [u8; 32],
        timeout: Duration,
        _records: &[(u64, Vec<u8>)],
    ) -> Result<PaymentOutcome, NodeError> {
        self.keysend_capped(dest, amount_msat, preimage, timeout, None)
            .await
    }
}

#[async_trait]
impl CircularPayments for FakeNode {
    /// Pays its own invoice: sent and received on its own ledger, like LND's.
    async fn pay_self(
        &self,
        amount_msat: u64,
        _hops: (&str, &str),
        max_fee_msat: u64,
        timeout: Duration,
    ) -> Result<PaymentOutcome, NodeError> {
        let invoice = self.create_invoice(amount_msat).await?;
        (self.pay_invoice_capped(&invoice.bolt11, timeout, Some(max_fee_msat))).await
    }
}

#[async_trait]
impl Ledger for FakeNode {
    async fn payment_ledger(&self) -> Result<PaymentLedger, NodeError> {
        Ok(*self.ledger())
    }

    async fn sent_statuses(
        &self,
        hashes: &[PaymentHash],
    ) -> Result<HashMap<PaymentHash, SentStatus>, NodeError> {
        let statuses = self.statuses();
        let known = (hashes.iter())
            .filter_map(|h| statuses.get(h).map(|s| (*h, *s)))
            .collect();
        Ok(known)
    }
}
