//! Eclair's ledger ([`crate::node::Ledger::payment_ledger`]) from its `audit`
//! API: the payments sent (with the fees of each part) and received (keysends
//! included). The audit keeps completed payments only: Eclair's ledger has no count
//! of failed payments or of those still in flight, so they read as 0, and the
//! indeterminate payments of an Eclair sender that did not succeed resolve as failed.

use super::EclairNode;
use crate::node::{NodeError, PaymentHash, PaymentLedger, SentStatus};
use bitcoin::hex::DisplayHex;
use serde::Deserialize;
use std::collections::HashMap;

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

/// One attempt of a payment as `getsentinfo` lists it.
#[derive(Deserialize)]
struct SentInfo {
    status: SentInfoStatus,
}

#[derive(Deserialize)]
struct SentInfoStatus {
    #[serde(rename = "type")]
    kind: String,
}

impl EclairNode {
    /// The status of each payment sent with one of `hashes`, from `getsentinfo` (one
    /// call per hash: the hashes asked about are the few the tool left indeterminate).
    pub(super) async fn statuses(
        &self,
        hashes: &[PaymentHash],
    ) -> Result<HashMap<PaymentHash, SentStatus>, NodeError> {
        let mut found = HashMap::new();
        for hash in hashes {
            let fields = [("paymentHash", hash.to_lower_hex_string())];
            let attempts: Vec<SentInfo> = self.call("getsentinfo", &fields).await?;
            if let Some(status) = status_of(&attempts) {
                found.insert(*hash, status);
            }
        }
        Ok(found)
    }
}

/// A payment's status from its attempts: succeeded if one was sent, in flight while
/// one is pending, failed when all failed; None when Eclair has no attempt.
fn status_of(attempts: &[SentInfo]) -> Option<SentStatus> {
    let any = |kind: &str| attempts.iter().any(|a| a.status.kind == kind);
    if attempts.is_empty() {
        None
    } else if any("sent") {
        Some(SentStatus::Succeeded)
    } else if any("pending") {
        Some(SentStatus::InFlight)
    } else {
        Some(SentStatus::Failed)
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

    #[test]
    fn a_payment_is_sent_if_an_attempt_was_and_unknown_without_attempts() {
        let attempts = |text: &str| serde_json::from_str::<Vec<SentInfo>>(text).unwrap();
        let failed = r#"{"id": "a", "status": {"type": "failed", "failures": []}}"#;
        let sent = r#"{"id": "b", "status": {"type": "sent", "feesPaid": 1}}"#;
        let pending = r#"{"id": "c", "status": {"type": "pending"}}"#;
        let both = attempts(&format!("[{failed}, {sent}]"));
        assert_eq!(status_of(&both), Some(SentStatus::Succeeded));
        let waiting = attempts(&format!("[{failed}, {pending}]"));
        assert_eq!(status_of(&waiting), Some(SentStatus::InFlight));
        assert_eq!(
            status_of(&attempts(&format!("[{failed}]"))),
            Some(SentStatus::Failed)
        );
        assert_eq!(status_of(&[]), None);
    }
}
