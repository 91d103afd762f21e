//! Invoice-pregenerated payments: invoices made before the timed load, so only
//! paying them is timed (Blockstream's method).

use super::schedule::Arrivals;
use super::{EngineError, Route};
use crate::node::Invoice;
use crate::scenario::{Load, StopCondition};
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::task::JoinSet;

/// Most invoices made before a run (about 300 bytes each). A run without a payment
/// count stops with `invoices_exhausted` when they are used up.
pub const MAX_PREGENERATED: u64 = 100_000;
/// Invoice calls in flight at once while pre-generating.
const PARALLEL: usize = 16;

/// Invoices of one route, taken in order without a lock.
#[derive(Debug, Default)]
pub(super) struct InvoicePool {
    invoices: Vec<Invoice>,
    next: AtomicUsize,
}

impl InvoicePool {
    pub(super) fn take(&self) -> Option<&Invoice> {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        self.invoices.get(i)
    }
}

/// How many invoices the run can use: the payment count (plus open-loop warm-up),
/// or the open-loop schedule's arrivals within the duration, capped at
/// [`MAX_PREGENERATED`].
pub(super) fn wanted(load: &Load, stop: StopCondition) -> u64 {
    let counted = stop.payments.unwrap_or(MAX_PREGENERATED);
    let n = match load {
        Load::Closed { .. } => counted,
        Load::Open { phases } => {
            let end = stop
                .duration
                .map(|d| super::schedule::warm_up_length(phases) + d);
            let mut warm = 0u64;
            let mut timed = 0u64;
            for a in Arrivals::new(phases).take(MAX_PREGENERATED as usize * 2) {
                if end.is_some_and(|end| a.offset >= end) || timed >= counted {
                    break;
                }
                if a.phase == crate::scenario::PhaseKind::WarmUp {
                    warm += 1;
                } else {
                    timed += 1;
                }
            }
            warm + timed
        }
    };
    n.min(MAX_PREGENERATED)
}

/// Creates `total` invoices spread evenly over the routes' receivers.
pub(super) async fn pregenerate(
    routes: &[Route],
    amount_msat: u64,
    total: u64,
) -> Result<Vec<InvoicePool>, EngineError> {
    let per_route = total.div_ceil(routes.len() as u64) as usize;
    let mut pools = Vec::with_capacity(routes.len());
    for route in routes {
        let mut tasks = JoinSet::new();
        for part in 0..PARALLEL {
            let count = per_route / PARALLEL + usize::from(part < per_route % PARALLEL);
            let receiver = route.receiver.clone();
            tasks.spawn(async move {
                let mut made = Vec::with_capacity(count);
                for _ in 0..count {
                    made.push(receiver.create_invoice(amount_msat).await?);
                }
                Ok::<_, crate::node::NodeError>(made)
            });
        }
        let mut invoices = Vec::with_capacity(per_route);
        while let Some(joined) = tasks.join_next().await {
            let made = joined
                .map_err(EngineError::TaskPanicked)?
                .map_err(|source| EngineError::Pregenerate {
                    node: route.receiver.name().to_string(),
                    source,
                })?;
            invoices.extend(made);
        }
        pools.push(InvoicePool {
            invoices,
            next: AtomicUsize::new(0),
        });
    }
    Ok(pools)
}
