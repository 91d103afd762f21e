//! Circular rebalancing beside the load (`workload: rebalance:`): every `every` from
//! the load's start, the node reads its balance toward the last hop and, when it is
//! below `below_sat` (or always, without it), pays itself `amount_msat` around the
//! circle. One payment at a time: a tick that comes while one is in flight is
//! skipped by the interval, not queued.
//!
//! Bounded: one task, one payment at a time. When the load ends no new payment
//! starts; the one in flight runs to its answer (the client bounds it by the payment
//! timeout), so what it did is counted and the nodes' ledgers can be reconciled.

use crate::metrics::rebalance::{RebalanceStats, TryResult};
use crate::node::capabilities::lacking;
use crate::node::{LightningNode, NodeError, PaymentOutcome};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How long the balance read before a payment may take.
const READ_BALANCE: Duration = Duration::from_secs(2);

/// The rebalancing the engine runs.
#[derive(Clone)]
pub struct RebalancePlan {
    pub node: Arc<dyn LightningNode>,
    /// Names and public keys of the first and last hop.
    pub first_hop: (String, String),
    pub last_hop: (String, String),
    pub amount_msat: u64,
    pub every: Duration,
    pub below_sat: Option<u64>,
    pub max_fee_msat: u64,
    pub timeout: Duration,
}

impl std::fmt::Debug for RebalancePlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "rebalance {} -> {} -> ... -> {} -> {}",
            self.node.name(),
            self.first_hop.0,
            self.last_hop.0,
            self.node.name()
        )
    }
}

/// Running rebalancing: its plan and figures.
#[derive(Debug)]
pub(super) struct Rebalancer {
    pub plan: RebalancePlan,
    pub stats: Arc<RebalanceStats>,
}

impl Rebalancer {
    pub(super) fn new(plan: RebalancePlan) -> Self {
        let who = (
            plan.node.name(),
            plan.first_hop.0.as_str(),
            plan.last_hop.0.as_str(),
        );
        let stats = RebalanceStats::new(
            who,
            plan.amount_msat,
            plan.every,
            plan.below_sat,
            plan.max_fee_msat,
        );
        Rebalancer {
            plan,
            stats: Arc::new(stats),
        }
    }

    /// Ticks every `every` from `load_start` until `stop`; a payment in flight is
    /// waited for unless `abort` (the run cancelled) comes first.
    pub(super) async fn run(
        &self,
        load_start: Instant,
        stop: CancellationToken,
        abort: &CancellationToken,
    ) {
        let every = self.plan.every;
        let mut interval = tokio::time::interval_at(load_start + every, every);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                // The stop first: a tick missed during a long payment is ready too.
                biased;
                _ = stop.cancelled() => return,
                _ = interval.tick() => {}
            }
            tokio::select! {
                _ = self.once(load_start) => {}
                // Not counted: its end is the node's to tell, and the run is over.
                _ = abort.cancelled() => return,
            }
        }
    }

    /// One tick: the balance, then a payment if it is due.
    async fn once(&self, load_start: Instant) {
        let p = &self.plan;
        let balance = balance_toward(p.node.as_ref(), &p.last_hop.1).await;
        let due = match (p.below_sat, balance) {
            (None, _) => true,
            (Some(below), Some(b)) => b < below,
            (Some(_), None) => false,
        };
        self.stats.tick(!due);
        if !due {
            return;
        }
        let started = Instant::now();
        let hops = (p.first_hop.1.as_str(), p.last_hop.1.as_str());
        let result = match p.node.circular_payments() {
            Some(circle) => (circle.pay_self(p.amount_msat, hops, p.max_fee_msat, p.timeout)).await,
            None => Err(lacking(
                p.node.as_ref(),
                crate::node::Feature::CircularPayments,
            )),
        };
        let start = started.saturating_duration_since(load_start);
        self.stats
            .record(start, started.elapsed(), balance, try_result(&result));
    }
}

fn try_result(result: &Result<PaymentOutcome, NodeError>) -> TryResult {
    match result {
        Ok(PaymentOutcome::Succeeded { fee_msat, .. }) => TryResult::Succeeded {
            fee_msat: *fee_msat,
        },
        Ok(PaymentOutcome::Failed { reason }) => TryResult::Failed(reason.as_str()),
        Err(_) => TryResult::Error,
    }
}

/// The node's local balance on its channels with `peer` (public key), sat; None
/// when it does not answer in time.
async fn balance_toward(node: &dyn LightningNode, peer: &str) -> Option<u64> {
    let channels = tokio::time::timeout(READ_BALANCE, node.list_channels()).await;
    let channels = channels.ok()?.ok()?;
    Some(
        (channels.iter())
            .filter(|c| c.remote_pubkey == peer)
            .map(|c| c.local_balance_sat)
            .sum(),
    )
}

/// The rebalancing beside the load; its figures into `results.rebalance`.
impl super::event::Subscriber for Rebalancer {
    /// Ticks until `stop`; the payment in flight then is waited for, unless the run
    /// is cancelled.
    fn beside(
        self: Arc<Self>,
        ctx: Arc<super::Context>,
        stop: CancellationToken,
    ) -> Option<futures::future::BoxFuture<'static, ()>> {
        Some(Box::pin(async move {
            self.run(ctx.start, stop, &ctx.abort).await
        }))
    }

    fn fill(&self, _: &super::Context, summary: &mut crate::metrics::Summary) {
        summary.rebalance = Some(self.stats.summary());
    }
}
