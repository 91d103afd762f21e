//! Eclair's ledger ([`crate::node::LightningNode::payment_ledger`]) from its `audit`
//! API: the payments sent (with the fees of each part) and received (keysends
//! included). The audit keeps completed payments only: Eclair's ledger has no count
//! of failed payments or of those still in flight, so they read as 0, and the
//! indeterminate payments of an Eclair sender that did not succeed resolve as failed.

use super::EclairNode;
use crate::node::{NodeError, PaymentLedger};
use serde::Deserialize;

#[derive(Deserialize)]
struct Audit {
    #[serde(default)]
    sent: Vec<Sent>,
    #[serde(default)]
    received: Vec<Received>,
}

#[derive(Deserialize)]
struct Sent {
    #[serde(default)]
    parts: Vec<SentPart>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SentPart {
    #[serde(default)]
    fees_paid: u64,
}

#[derive(Deserialize)]
struct Received {
    #[serde(default)]
    parts: Vec<ReceivedPart>,
}

#[derive(Deserialize)]
struct ReceivedPart {
    #[serde(default)]
    amount: u64,
}

/// The audit's span: from the epoch to a day from now (unix seconds). Eclair refuses
/// a timestamp far in the future ("invalid timestamp value"), so the end is a real
/// time, not a sentinel.
fn until_unix_s() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    now + 24 * 3600
}

impl EclairNode {
    pub(super) async fn ledger(&self) -> Result<PaymentLedger, NodeError> {
        let fields = [
            ("from", "0".to_string()),
            ("to", until_unix_s().to_string()),
        ];
        let audit: Audit = self.call("audit", &fields).await?;
        Ok(ledger_of(&audit))
    }
}

fn ledger_of(audit: &Audit) -> PaymentLedger {
    PaymentLedger {
        sent_succeeded: audit.sent.len() as u64,
        fees_paid_msat: (audit.sent.iter().flat_map(|s| &s.parts))
            .map(|p| p.fees_paid)
            .sum(),
        received: audit.received.len() as u64,
        received_msat: (audit.received.iter().flat_map(|r| &r.parts))
            .map(|p| p.amount)
            .sum(),
        ..PaymentLedger::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_audit_answer_gives_the_counts_fees_and_amounts() {
        let text = r#"{
            "sent": [
                {"type": "payment-sent", "id": "a", "paymentHash": "00", "recipientAmount": 1000,
                 "parts": [{"id": "p", "amount": 1000, "feesPaid": 3, "toChannelId": "c"},
                           {"id": "q", "amount": 500, "feesPaid": 2, "toChannelId": "c"}]},
                {"type": "payment-sent", "id": "b", "paymentHash": "01", "recipientAmount": 1000,
                 "parts": [{"id": "r", "amount": 1000, "feesPaid": 0, "toChannelId": "c"}]}
            ],
            "received": [
                {"type": "payment-received", "paymentHash": "02",
                 "parts": [{"amount": 700, "fromChannelId": "c"}]}
            ],
            "relayed": []
        }"#;
        let ledger = ledger_of(&serde_json::from_str(text).unwrap());
        assert_eq!((ledger.sent_succeeded, ledger.fees_paid_msat), (2, 5));
        assert_eq!((ledger.received, ledger.received_msat), (1, 700));
        assert_eq!(ledger.sent_in_flight, 0);
    }
}
