//! How the tool counts each route's payments: a verdict per payment (ok, failed, or
//! not known), tallied per route without a lock, for the reconciliation with the
//! nodes' ledgers.

use super::event::Verdict;
use std::sync::atomic::{AtomicU64, Ordering};

/// One route's payments as the tool counted them (warm-up included), without a lock.
#[derive(Debug, Default)]
pub(super) struct RouteTally {
    ok: AtomicU64,
    failed: AtomicU64,
    indeterminate: AtomicU64,
}

impl RouteTally {
    pub(super) fn add(&self, verdict: Verdict) {
        let counter = match verdict {
            Verdict::Ok => &self.ok,
            Verdict::Failed => &self.failed,
            Verdict::Indeterminate => &self.indeterminate,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The counts, named by the route's ends.
    pub(super) fn count(&self, route: &super::Route) -> crate::metrics::RouteCount {
        crate::metrics::RouteCount {
            sender: route.sender.name().to_string(),
            receiver: route.receiver.name().to_string(),
            ok: self.ok.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            indeterminate: self.indeterminate.load(Ordering::Relaxed),
        }
    }
}

/// Counts each payment on its route's tally (a stream counts its splits itself).
#[derive(Debug)]
pub(super) struct RouteTallies;

impl super::event::Subscriber for RouteTallies {
    fn on_payment(&self, ctx: &super::Context, event: &super::event::PaymentEvent) {
        if let Some(verdict) = event.verdict() {
            ctx.tally[event.route].add(verdict);
        }
    }

    fn fill(&self, ctx: &super::Context, summary: &mut crate::metrics::Summary) {
        summary.routes = (ctx.tally.iter().zip(&ctx.routes))
            .map(|(tally, route)| tally.count(route))
            .collect();
    }
}
