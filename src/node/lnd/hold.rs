//! Hold invoices through invoicesrpc: the accomplice of `workload: attack:` makes an
//! invoice for a hash whose preimage it never learns, sees the HTLC ACCEPTED, and
//! cancels it.

use super::LndNode;
use crate::node::{NodeError, PaymentHash};
use voltage_tonic_lnd::invoicesrpc::{self, lookup_invoice_msg::InvoiceRef};
use voltage_tonic_lnd::lnrpc::invoice::InvoiceState;

/// Seconds an unpaid hold invoice stays payable.
const EXPIRY_S: i64 = 3_600;

impl LndNode {
    pub(super) async fn hold_add(
        &self,
        hash: PaymentHash,
        amount_msat: u64,
    ) -> Result<String, NodeError> {
        const CALL: &str = "AddHoldInvoice";
        let request = invoicesrpc::AddHoldInvoiceRequest {
            memo: "lnbench attack".into(),
            hash: hash.to_vec(),
            value_msat: i64::try_from(amount_msat).unwrap_or(i64::MAX),
            expiry: EXPIRY_S,
            ..Default::default()
        };
        let added = (self.invoices.clone())
            .add_hold_invoice(request)
            .await
            .map_err(self.rpc(CALL))?
            .into_inner();
        Ok(added.payment_request)
    }

    pub(super) async fn hold_accepted(&self, hash: PaymentHash) -> Result<bool, NodeError> {
        const CALL: &str = "LookupInvoiceV2";
        let request = invoicesrpc::LookupInvoiceMsg {
            invoice_ref: Some(InvoiceRef::PaymentHash(hash.to_vec())),
            ..Default::default()
        };
        let invoice = (self.invoices.clone())
            .lookup_invoice_v2(request)
            .await
            .map_err(self.rpc(CALL))?
            .into_inner();
        Ok(invoice.state() == InvoiceState::Accepted)
    }

    pub(super) async fn hold_cancel(&self, hash: PaymentHash) -> Result<(), NodeError> {
        const CALL: &str = "CancelInvoice";
        let request = invoicesrpc::CancelInvoiceMsg {
            payment_hash: hash.to_vec(),
        };
        (self.invoices.clone())
            .cancel_invoice(request)
            .await
            .map_err(self.rpc(CALL))?;
        Ok(())
    }
}
