//! What LND's final payment status says: our outcome, failure reason and parts.

use super::{FailureReason, Parts, PaymentOutcome};
use voltage_tonic_lnd::lnrpc;

/// The outcome of a payment update, if it is final.
pub(super) fn final_outcome(payment: &lnrpc::Payment) -> Option<PaymentOutcome> {
    use lnrpc::payment::PaymentStatus;
    match payment.status() {
        PaymentStatus::Succeeded => {
            let hops = payment
                .htlcs
                .iter()
                .filter(|h| h.status() == lnrpc::htlc_attempt::HtlcStatus::Succeeded)
                .filter_map(|h| h.route.as_ref())
                .map(|r| r.hops.len() as u32)
                .max()
                .unwrap_or(0);
            Some(PaymentOutcome::Succeeded {
                fee_msat: u64::try_from(payment.fee_msat).unwrap_or(0),
                hops,
            })
        }
        PaymentStatus::Failed => Some(PaymentOutcome::Failed {
            reason: failure_reason(payment.failure_reason()),
        }),
        _ => None,
    }
}

/// The HTLC attempts of a final payment: those that settled it, and all tried.
pub(super) fn parts_of(payment: &lnrpc::Payment) -> Parts {
    let settled = (payment.htlcs.iter())
        .filter(|h| h.status() == lnrpc::htlc_attempt::HtlcStatus::Succeeded)
        .count();
    Parts {
        settled: u32::try_from(settled).unwrap_or(u32::MAX),
        attempts: u32::try_from(payment.htlcs.len()).unwrap_or(u32::MAX),
    }
}

/// Maps LND's failure reason to ours.
pub fn failure_reason(reason: lnrpc::PaymentFailureReason) -> FailureReason {
    use lnrpc::PaymentFailureReason as R;
    match reason {
        R::FailureReasonTimeout => FailureReason::Timeout,
        R::FailureReasonNoRoute => FailureReason::NoRoute,
        R::FailureReasonIncorrectPaymentDetails => FailureReason::IncorrectPaymentDetails,
        R::FailureReasonInsufficientBalance => FailureReason::InsufficientBalance,
        R::FailureReasonCanceled => FailureReason::Canceled,
        R::FailureReasonError | R::FailureReasonNone => FailureReason::Error,
    }
}
