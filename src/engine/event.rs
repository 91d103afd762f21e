//! The end of one payment, as every part that counts it sees it: the worker makes one
//! [`PaymentEvent`] and hands it to the run's [`Subscriber`]s in turn; it does not
//! know who they are (`subscribers.rs` does).

use super::Context;
use super::ledger::{Reservation, Settled, SpendLedger};
use crate::metrics::FailureKind;
use crate::node::parts::Parts;
use crate::node::{FailureReason, NodeError, PaymentOutcome};
use futures::future::BoxFuture;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How the tool counted an answered payment: its latency (taken off the pauses)
/// and the node's hop count, or its failure.
pub(super) type Counted = Result<(Duration, Option<u32>), FailureKind>;

/// How the tool counts a payment: done, failed, or not known (timed out, abandoned).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    Ok,
    Failed,
    Indeterminate,
}

impl Verdict {
    pub(super) fn of(result: &Result<PaymentOutcome, NodeError>) -> Verdict {
        match result {
            Ok(PaymentOutcome::Succeeded { .. }) => Verdict::Ok,
            Ok(PaymentOutcome::Failed {
                reason: FailureReason::Timeout,
            }) => Verdict::Indeterminate,
            Ok(PaymentOutcome::Failed { .. }) | Err(_) => Verdict::Failed,
        }
    }
}

/// One payment's end.
pub(super) struct PaymentEvent<'a> {
    /// Index of the plan's routes.
    pub route: usize,
    /// A warm-up payment counts for the tally and the caps, not in the figures.
    pub warm_up: bool,
    pub end: End<'a>,
    /// Under mainnet caps, what the payment reserved before it started.
    pub reservation: Option<Reservation>,
    /// How the node split it, when it told (`max_parts:`).
    pub parts: Option<Parts>,
    /// `kind: stream`: each split's answer.
    pub slots: &'a super::slots::Slots,
}

/// How the payment ended.
pub(super) enum End<'a> {
    /// In flight when the load gave up on it: the node may still complete it.
    Abandoned,
    /// Invoice-pregenerated: the route's invoices were used up; nothing was paid.
    NoInvoice,
    Answered {
        result: &'a Result<PaymentOutcome, NodeError>,
        counted: &'a Counted,
    },
}

impl PaymentEvent<'_> {
    /// How the tally counts it; None when no payment was made.
    pub fn verdict(&self) -> Option<Verdict> {
        match &self.end {
            End::Abandoned => Some(Verdict::Indeterminate),
            End::NoInvoice => None,
            End::Answered { result, .. } => Some(Verdict::of(result)),
        }
    }

    /// An answered payment outside the warm-up: its answer and how it was counted.
    pub fn measured(&self) -> Option<(&Result<PaymentOutcome, NodeError>, &Counted)> {
        match &self.end {
            End::Answered { result, counted } if !self.warm_up => Some((result, counted)),
            _ => None,
        }
    }

    /// What the payment spent, for the caps: only a success or a failure the node
    /// reported is known; anything else (abandoned, timed out, an RPC error) may
    /// still be paid.
    pub fn spend(&self) -> Settled {
        match &self.end {
            End::Answered {
                result: Ok(PaymentOutcome::Succeeded { fee_msat, .. }),
                ..
            } => Settled::Paid {
                fee_msat: *fee_msat,
            },
            End::Answered {
                result: Ok(PaymentOutcome::Failed { reason }),
                ..
            } if *reason != FailureReason::Timeout => Settled::Failed,
            End::NoInvoice => Settled::Failed,
            _ => Settled::Unknown,
        }
    }
}

/// A part of the run that counts payments as they end, may run work of its own
/// beside the load, and fills its figures into the summary.
pub(super) trait Subscriber: Send + Sync + std::fmt::Debug {
    fn on_payment(&self, _ctx: &Context, _event: &PaymentEvent) {}

    /// Work beside the load (an attack's slots, a rebalancing), started with it;
    /// it ends soon after `stop`, which the load's end cancels.
    fn beside(
        self: Arc<Self>,
        _ctx: Arc<Context>,
        _stop: CancellationToken,
    ) -> Option<BoxFuture<'static, ()>> {
        None
    }

    /// After the load: what it counted, into its part of the run's summary (the
    /// ledger keeps its figures for the run, across loads: it writes none).
    fn fill(&self, _ctx: &Context, _summary: &mut crate::metrics::Summary) {}
}

impl Subscriber for SpendLedger {
    fn on_payment(&self, _: &Context, event: &PaymentEvent) {
        if let Some(reservation) = event.reservation {
            self.settle(reservation, event.spend());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::FailureReason::{NoRoute, Timeout};

    fn check(end: End, warm_up: bool) -> (Option<Verdict>, bool, Settled) {
        let slots = super::super::slots::Slots::default();
        let event = PaymentEvent {
            route: 0,
            warm_up,
            end,
            reservation: None,
            parts: None,
            slots: &slots,
        };
        (event.verdict(), event.measured().is_some(), event.spend())
    }

    #[test]
    fn each_end_is_counted_once_and_only_a_known_end_settles_the_caps() {
        let ok = Ok(PaymentOutcome::Succeeded {
            fee_msat: 3,
            hops: 2,
        });
        let latency: Counted = Ok((Duration::from_millis(5), Some(2)));
        let answered = || End::Answered {
            result: &ok,
            counted: &latency,
        };
        let paid = Settled::Paid { fee_msat: 3 };
        assert_eq!(check(answered(), false), (Some(Verdict::Ok), true, paid));
        // A warm-up payment is tallied and settled, not measured.
        assert_eq!(check(answered(), true), (Some(Verdict::Ok), false, paid));

        let no_route = Ok(PaymentOutcome::Failed { reason: NoRoute });
        let failed: Counted = Err(FailureKind::Node(NoRoute));
        let end = End::Answered {
            result: &no_route,
            counted: &failed,
        };
        assert_eq!(
            check(end, false),
            (Some(Verdict::Failed), true, Settled::Failed)
        );

        // The tool stopped waiting: the node may still pay it.
        let timed_out = Ok(PaymentOutcome::Failed { reason: Timeout });
        let timeout: Counted = Err(FailureKind::Node(Timeout));
        let end = End::Answered {
            result: &timed_out,
            counted: &timeout,
        };
        let unknown = (Some(Verdict::Indeterminate), true, Settled::Unknown);
        assert_eq!(check(end, false), unknown);

        let rpc = Err(NodeError::protocol("alice", "pay", "broken pipe"));
        let rpc_error: Counted = Err(FailureKind::RpcError);
        let end = End::Answered {
            result: &rpc,
            counted: &rpc_error,
        };
        assert_eq!(
            check(end, false),
            (Some(Verdict::Failed), true, Settled::Unknown)
        );

        let abandoned = (Some(Verdict::Indeterminate), false, Settled::Unknown);
        assert_eq!(check(End::Abandoned, false), abandoned);
        // No invoice left: nothing was paid, nothing is tallied.
        assert_eq!(check(End::NoInvoice, false), (None, false, Settled::Failed));
    }
}
