//! LDK's ledger ([`crate::node::Ledger::payment_ledger`]) from ldk-server's
//! `ListPayments`, page by page: its Lightning payments (on-chain ones left out),
//! outbound by status with their fees, inbound succeeded with their amounts.

use super::LdkNode;
use super::proto::{self, PaymentDirection, PaymentStatus};
use crate::node::{NodeError, PaymentHash, PaymentLedger, SentStatus};
use std::collections::HashMap;

impl LdkNode {
    pub(super) async fn ledger(&self) -> Result<PaymentLedger, NodeError> {
        let mut ledger = PaymentLedger::default();
        self.each_payment(|p| add(&mut ledger, p)).await?;
        Ok(ledger)
    }

    /// The status of each outbound payment whose id is one of `hashes` (ldk-node
    /// gives a BOLT 11 payment it sends its payment hash as id; a keysend's id is
    /// its own, so keysends are not found here).
    pub(super) async fn statuses(
        &self,
        hashes: &[PaymentHash],
    ) -> Result<HashMap<PaymentHash, SentStatus>, NodeError> {
        let wanted = crate::node::hashes_by_hex(hashes);
        let mut found = HashMap::new();
        self.each_payment(|p| {
            if let (Some(hash), Some(status)) = (wanted.get(&p.id.to_lowercase()), sent(p)) {
                found.insert(*hash, status);
            }
        })
        .await?;
        Ok(found)
    }

    async fn each_payment(
        &self,
        mut visit: impl FnMut(&proto::ListedPayment),
    ) -> Result<(), NodeError> {
        let mut request = proto::ListPaymentsRequest::default();
        loop {
            let page: proto::ListPaymentsResponse = self.request("ListPayments", &request).await?;
            page.payments.iter().for_each(&mut visit);
            match page.next_page_token {
                Some(token) if !page.payments.is_empty() => request.page_token = Some(token),
                _ => return Ok(()),
            }
        }
    }
}

/// An outbound Lightning payment's status; None for others.
fn sent(p: &proto::ListedPayment) -> Option<SentStatus> {
    if p.kind.as_ref().is_some_and(|k| k.onchain.is_some())
        || PaymentDirection::try_from(p.direction) != Ok(PaymentDirection::Outbound)
    {
        return None;
    }
    Some(match PaymentStatus::try_from(p.status) {
        Ok(PaymentStatus::Succeeded) => SentStatus::Succeeded,
        Ok(PaymentStatus::Failed) => SentStatus::Failed,
        _ => SentStatus::InFlight,
    })
}

fn add(ledger: &mut PaymentLedger, p: &proto::ListedPayment) {
    if p.kind.as_ref().is_some_and(|k| k.onchain.is_some()) {
        return;
    }
    let status = PaymentStatus::try_from(p.status);
    match (PaymentDirection::try_from(p.direction), status) {
        (Ok(PaymentDirection::Outbound), Ok(PaymentStatus::Succeeded)) => {
            ledger.sent_succeeded += 1;
            ledger.fees_paid_msat += p.fee_paid_msat.unwrap_or(0);
        }
        (Ok(PaymentDirection::Outbound), Ok(PaymentStatus::Failed)) => ledger.sent_failed += 1,
        (Ok(PaymentDirection::Outbound), _) => ledger.sent_in_flight += 1,
        (Ok(PaymentDirection::Inbound), Ok(PaymentStatus::Succeeded)) => {
            ledger.received += 1;
            ledger.received_msat += p.amount_msat.unwrap_or(0);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn lightning_payments_are_counted_by_direction_and_status_and_on_chain_ones_left_out() {
        let payment = |direction: PaymentDirection, status: PaymentStatus, onchain: bool| {
            proto::ListedPayment {
                id: String::new(),
                kind: Some(proto::PaymentKind {
                    onchain: onchain.then_some(proto::Onchain {}),
                }),
                amount_msat: Some(1_000),
                direction: direction as i32,
                status: status as i32,
                fee_paid_msat: Some(3),
            }
        };
        let page = proto::ListPaymentsResponse {
            payments: vec![
                payment(PaymentDirection::Outbound, PaymentStatus::Succeeded, false),
                payment(PaymentDirection::Outbound, PaymentStatus::Failed, false),
                payment(PaymentDirection::Outbound, PaymentStatus::Pending, false),
                payment(PaymentDirection::Inbound, PaymentStatus::Succeeded, false),
                payment(PaymentDirection::Inbound, PaymentStatus::Succeeded, true),
            ],
            next_page_token: None,
        };
        // Through the wire format, as the server's answer arrives.
        let decoded = proto::ListPaymentsResponse::decode(&*page.encode_to_vec()).unwrap();
        let mut ledger = PaymentLedger::default();
        for p in &decoded.payments {
            add(&mut ledger, p);
        }
        let sent = (
            ledger.sent_succeeded,
            ledger.sent_failed,
            ledger.sent_in_flight,
        );
        assert_eq!(sent, (1, 1, 1));
        assert_eq!(ledger.fees_paid_msat, 3);
        assert_eq!((ledger.received, ledger.received_msat), (1, 1_000));
    }
}
