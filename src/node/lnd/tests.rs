//! Unit tests of the LND client: failure reasons and status texts.

use super::*;
use lnrpc::PaymentFailureReason as R;
use lnrpc::payment::PaymentStatus;

#[test]
fn failure_reasons_map_one_to_one() {
    let cases = [
        (R::FailureReasonTimeout, FailureReason::Timeout),
        (R::FailureReasonNoRoute, FailureReason::NoRoute),
        (R::FailureReasonError, FailureReason::Error),
        (
            R::FailureReasonIncorrectPaymentDetails,
            FailureReason::IncorrectPaymentDetails,
        ),
        (
            R::FailureReasonInsufficientBalance,
            FailureReason::InsufficientBalance,
        ),
        (R::FailureReasonCanceled, FailureReason::Canceled),
        (R::FailureReasonNone, FailureReason::Error),
    ];
    for (lnd, ours) in cases {
        assert_eq!(failure_reason(lnd), ours, "{lnd:?}");
    }
}

fn payment(status: PaymentStatus) -> lnrpc::Payment {
    lnrpc::Payment {
        status: status as i32,
        ..Default::default()
    }
}

#[test]
fn success_takes_fee_and_hops_from_the_settled_htlc() {
    let route = |hops: usize| lnrpc::Route {
        hops: vec![lnrpc::Hop::default(); hops],
        ..Default::default()
    };
    let htlc = |status: lnrpc::htlc_attempt::HtlcStatus, hops| lnrpc::HtlcAttempt {
        status: status as i32,
        route: Some(route(hops)),
        ..Default::default()
    };
    let mut p = payment(PaymentStatus::Succeeded);
    p.fee_msat = 1_234;
    p.htlcs = vec![
        htlc(lnrpc::htlc_attempt::HtlcStatus::Failed, 5),
        htlc(lnrpc::htlc_attempt::HtlcStatus::Succeeded, 2),
    ];
    assert_eq!(
        final_outcome(&p),
        Some(PaymentOutcome::Succeeded {
            fee_msat: 1_234,
            hops: 2
        })
    );
}

#[test]
fn failure_and_in_flight_updates() {
    let mut p = payment(PaymentStatus::Failed);
    p.failure_reason = R::FailureReasonNoRoute as i32;
    assert_eq!(
        final_outcome(&p),
        Some(PaymentOutcome::Failed {
            reason: FailureReason::NoRoute
        })
    );
    assert_eq!(final_outcome(&payment(PaymentStatus::InFlight)), None);
    assert_eq!(final_outcome(&payment(PaymentStatus::Initiated)), None);
}

#[test]
fn keysend_request_carries_the_preimage_of_its_hash() {
    let dest = vec![2u8; 33];
    let a = keysend_request(
        dest.clone(),
        1_000,
        crate::node::fresh_preimage().0,
        Duration::from_millis(1500),
        None,
    );
    let b = keysend_request(
        dest.clone(),
        1_000,
        crate::node::fresh_preimage().0,
        Duration::from_secs(60),
        None,
    );
    let preimage = &a.dest_custom_records[&KEYSEND_RECORD];
    assert_eq!(preimage.len(), 32);
    assert_eq!(
        a.payment_hash,
        sha256::Hash::hash(preimage).to_byte_array().to_vec()
    );
    assert_ne!(a.payment_hash, b.payment_hash, "fresh preimage per payment");
    assert_eq!(a.dest, dest);
    assert_eq!(a.amt_msat, 1_000);
    assert_eq!(a.timeout_seconds, 1);
    assert_eq!(b.timeout_seconds, 60);
    assert!(a.no_inflight_updates);
    assert!(a.fee_limit_msat >= FEE_LIMIT_BASE_MSAT);
}

#[test]
fn channel_point_txid_is_shown_reversed() {
    let mut bytes = [0u8; 32];
    bytes[0] = 0xab;
    let point = lnrpc::ChannelPoint {
        funding_txid: Some(lnrpc::channel_point::FundingTxid::FundingTxidBytes(
            bytes.to_vec(),
        )),
        output_index: 3,
    };
    let shown = channel_point_string(&point).unwrap();
    assert_eq!(shown, format!("{}ab:3", "00".repeat(31)));
}

#[test]
fn starting_up_is_recognised() {
    let rpc = |status: &str| NodeError::Rpc {
        node: "alice".into(),
        call: "GetInfo",
        status: status.into(),
    };
    assert!(is_starting_up(&rpc(
        "Unknown: the RPC server is in the process of starting up, but not yet ready to accept calls"
    )));
    assert!(!is_starting_up(&rpc("Unknown: permission denied")));
}

/// Under mainnet caps the request carries the caps' fee limit when it is below LND's
/// default, and the default otherwise (a cap never raises it).
#[test]
fn keysend_request_takes_the_lower_of_the_default_and_the_caps_fee_limit() {
    let request = |cap| keysend_request(vec![2; 33], 1_000, [7; 32], Duration::from_secs(1), cap);
    let default = request(None).fee_limit_msat;
    assert!(default > 500, "the default is generous: {default}");
    assert_eq!(request(Some(500)).fee_limit_msat, 500);
    assert_eq!(request(Some(0)).fee_limit_msat, 0);
    assert_eq!(request(Some(u64::MAX)).fee_limit_msat, default);
}

#[test]
fn records_request_carries_the_records_beside_the_preimage() {
    let records = [
        (7_629_169, b"{\"action\":\"stream\"}".to_vec()),
        (KEYSEND_RECORD, vec![0; 32]),
    ];
    let preimage = [9u8; 32];
    let r = records_request(
        vec![2; 33],
        5_000,
        preimage,
        Duration::from_secs(5),
        &records,
    );
    assert_eq!(r.dest_custom_records[&7_629_169], records[0].1);
    // A record of the preimage's type cannot replace the preimage.
    assert_eq!(r.dest_custom_records[&KEYSEND_RECORD], preimage.to_vec());
    assert_eq!(r.dest_custom_records.len(), 2);
    assert_eq!(r.amt_msat, 5_000);
}

/// A multi-part payment's parts are its settled HTLCs; its attempts are every HTLC,
/// the failed ones included.
#[test]
fn parts_count_settled_htlcs_and_attempts_count_them_all() {
    use lnrpc::htlc_attempt::HtlcStatus;
    let htlc = |status: HtlcStatus| lnrpc::HtlcAttempt {
        status: status as i32,
        ..Default::default()
    };
    let mut p = payment(PaymentStatus::Succeeded);
    p.htlcs = vec![
        htlc(HtlcStatus::Failed),
        htlc(HtlcStatus::Succeeded),
        htlc(HtlcStatus::Failed),
        htlc(HtlcStatus::Succeeded),
        htlc(HtlcStatus::Succeeded),
    ];
    assert_eq!(
        parts_of(&p),
        Parts {
            settled: 3,
            attempts: 5
        }
    );
    let failed = payment(PaymentStatus::Failed);
    assert_eq!(
        parts_of(&failed),
        Parts {
            settled: 0,
            attempts: 0
        }
    );
}
