//! Multi-part payments (`max_parts:`) and draining channels (`stop:
//! liquidity_failures:`): how the workers pay in parts and what they note for the
//! report's `results.parts` and `results.drain`.

use super::{Context, Route, StopReason};
use crate::metrics::parts::{DrainWatch, PartsStats};
use crate::node::parts::Parts;
use crate::node::{FailureReason, NodeError, PaymentOutcome};
use std::time::Duration;

/// What the engine gathers for the two workloads, when the plan asks for them.
#[derive(Debug)]
pub(super) struct Notes {
    pub max_parts: Option<u32>,
    pub parts: Option<PartsStats>,
    pub drain: Option<DrainWatch>,
}

impl Notes {
    pub(super) fn new(max_parts: Option<u32>, liquidity_failures: Option<u64>) -> Self {
        Notes {
            max_parts,
            parts: max_parts.map(PartsStats::new),
            drain: liquidity_failures.map(DrainWatch::new),
        }
    }
}

/// Pays `bolt11` from the route's sender, in at most `max_parts` parts when the plan
/// sets them; `parts` gets how the node split it. A sender without a part limit
/// ([`crate::node::PartLimit`]; validation refuses it, the fake has none) pays without
/// one and tells no parts.
pub(super) async fn pay_invoice(
    ctx: &Context,
    route: &Route,
    bolt11: &str,
    max_fee_msat: Option<u64>,
    parts: &mut Option<Parts>,
) -> Result<PaymentOutcome, NodeError> {
    let timeout = ctx.payment_timeout;
    let (Some(max_parts), Some(limit)) = (ctx.notes.max_parts, route.sender.part_limit()) else {
        return (route.sender)
            .pay_invoice_capped(bolt11, timeout, max_fee_msat)
            .await;
    };
    let split = (limit.pay_invoice_split(bolt11, timeout, max_fee_msat, max_parts)).await?;
    *parts = split.parts;
    Ok(split.outcome)
}

/// Notes a measured payment's end: a success's parts and latency, a failure for lack
/// of liquidity (which ends a drain at its limit).
impl super::event::Subscriber for Notes {
    fn on_payment(&self, ctx: &Context, event: &super::event::PaymentEvent) {
        let Some((result, counted)) = event.measured() else {
            return;
        };
        match result {
            Ok(PaymentOutcome::Succeeded { .. }) => {
                if let (Some(stats), Ok((latency, _))) = (&self.parts, counted) {
                    stats.record(event.parts.map(|p| (p.settled, p.attempts)), *latency);
                }
            }
            Ok(PaymentOutcome::Failed {
                reason: FailureReason::NoRoute | FailureReason::InsufficientBalance,
            }) => {
                // On the run's clock, that of the series and the events, so the first
                // failure lines up with the TPS chart (the ledger readings and any
                // invoices made before the load would otherwise shift it).
                let at = Duration::from_secs_f64(ctx.recorder.elapsed_s());
                if let Some(drain) = &self.drain
                    && drain.record(at)
                {
                    ctx.end(StopReason::LiquidityFailures);
                }
            }
            _ => {}
        }
    }

    /// The summaries for `results.parts` and `results.drain`.
    fn fill(&self, _: &Context, summary: &mut crate::metrics::Summary) {
        summary.parts = self.parts.as_ref().map(PartsStats::summary);
        summary.drain = self.drain.as_ref().map(DrainWatch::summary);
    }
}
