//! `renepay` through lightningd's JSON-RPC socket (`<lightning-dir>/regtest/lightning-rpc`):
//! Core Lightning's gRPC interface has no call for it. One connection per payment; on
//! it, `deprecations` first (renepay is deprecated since v26.06, refused unless the
//! connection turns deprecated calls on), then the payment; each answer read up to the
//! blank line lightningd ends it with. The socket is
//! on this machine only: the scenario allows `payment_engine: renepay` on `runtime:
//! local` alone.

use super::{FINAL_ANSWER_GRACE, FailureReason, NodeError, PaymentOutcome, failure_of_code};
use std::path::Path;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The socket under a node's lightning dir.
pub(super) const SOCKET: &str = "regtest/lightning-rpc";
/// Turns deprecated calls on for this connection only.
const DEPRECATIONS: &str =
    r#"{"jsonrpc":"2.0","id":0,"method":"deprecations","params":{"enable":true}}"#;

/// Sends `request` on `stream` and reads its answer.
async fn exchange(
    stream: &mut tokio::net::UnixStream,
    request: &str,
) -> Result<serde_json::Value, String> {
    (stream.write_all(request.as_bytes()).await).map_err(|e| e.to_string())?;
    let mut answer = Vec::new();
    let mut chunk = [0u8; 4096];
    while !answer.ends_with(b"\n\n") {
        let n = stream.read(&mut chunk).await.map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("the socket closed before the answer ended".to_string());
        }
        answer.extend_from_slice(&chunk[..n]);
    }
    serde_json::from_slice(&answer).map_err(|e| e.to_string())
}

/// The request line of `renepay` for `bolt11` with the fee budget and retry time.
pub(super) fn renepay_request(bolt11: &str, maxfee_msat: u64, retry_for: u32) -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "renepay",
        "params": {
            "invstring": bolt11,
            "maxfee": format!("{maxfee_msat}msat"),
            "retry_for": retry_for,
        },
    })
    .to_string()
}

/// What lightningd's answer says of the payment: its outcome, or (an answer that is
/// not about the payment) what went wrong.
pub(super) fn outcome_of(answer: &serde_json::Value) -> Result<PaymentOutcome, String> {
    if let Some(error) = answer.get("error") {
        let code = error["code"].as_i64().unwrap_or_default();
        let message = error["message"].as_str().unwrap_or_default();
        return match failure_of_code(code, message) {
            Some(reason) => Ok(PaymentOutcome::Failed { reason }),
            None => Err(format!("error {code}: {message}")),
        };
    }
    let result = &answer["result"];
    let (amount, sent) = (
        result["amount_msat"].as_u64(),
        result["amount_sent_msat"].as_u64(),
    );
    match (result["status"].as_str(), amount, sent) {
        (Some("complete"), Some(amount), Some(sent)) => Ok(PaymentOutcome::Succeeded {
            fee_msat: sent.saturating_sub(amount),
            hops: 0,
        }),
        _ => Err(format!("an answer without a complete payment: {answer}")),
    }
}

/// Pays `bolt11` with `renepay` through the socket under `lightning_dir`.
pub(super) async fn renepay(
    node: &str,
    lightning_dir: &Path,
    bolt11: &str,
    maxfee_msat: u64,
    timeout: Duration,
) -> Result<PaymentOutcome, NodeError> {
    const CALL: &str = "renepay";
    let protocol = |detail: String| NodeError::protocol(node, CALL, detail);
    let retry_for = u32::try_from(timeout.as_secs().max(1)).unwrap_or(u32::MAX);
    let call = async {
        let socket = lightning_dir.join(SOCKET);
        let mut stream = tokio::net::UnixStream::connect(&socket)
            .await
            .map_err(|e| format!("{}: {e}", socket.display()))?;
        let allowed = exchange(&mut stream, DEPRECATIONS).await?;
        if let Some(error) = allowed.get("error") {
            return Err(format!("deprecations: {error}"));
        }
        exchange(
            &mut stream,
            &renepay_request(bolt11, maxfee_msat, retry_for),
        )
        .await
    };
    match tokio::time::timeout(timeout + FINAL_ANSWER_GRACE, call).await {
        Err(_) => Ok(PaymentOutcome::Failed {
            reason: FailureReason::Timeout,
        }),
        Ok(Err(detail)) => Err(protocol(detail)),
        Ok(Ok(answer)) => outcome_of(&answer).map_err(protocol),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_names_the_invoice_fee_budget_and_retry_time() {
        let request: serde_json::Value =
            serde_json::from_str(&renepay_request("lnbcrt1", 10_000, 60)).unwrap();
        assert_eq!(request["method"], "renepay");
        assert_eq!(request["params"]["invstring"], "lnbcrt1");
        assert_eq!(request["params"]["maxfee"], "10000msat");
        assert_eq!(request["params"]["retry_for"], 60);
    }

    #[test]
    fn answers_become_outcomes() {
        let ok = serde_json::json!({"result": {"status": "complete", "amount_msat": 1000, "amount_sent_msat": 1002}});
        assert_eq!(
            outcome_of(&ok),
            Ok(PaymentOutcome::Succeeded {
                fee_msat: 2,
                hops: 0
            })
        );
        let no_route = serde_json::json!({"error": {"code": 205, "message": "no route"}});
        assert_eq!(
            outcome_of(&no_route),
            Ok(PaymentOutcome::Failed {
                reason: FailureReason::NoRoute
            })
        );
        let bad = serde_json::json!({"error": {"code": -32602, "message": "invstring: bad"}});
        assert!(outcome_of(&bad).unwrap_err().contains("-32602"));
    }
}
