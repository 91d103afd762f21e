//! Jamming under load (`workload: attack:`): beside the honest load, `slots` tasks
//! each keep one HTLC of the attacker held at the accomplice. A slot makes a hold
//! invoice at the accomplice for a hash whose preimage nobody keeps, has the attacker
//! pay it, waits until the accomplice holds the HTLC (ACCEPTED), keeps it `hold`,
//! cancels the invoice (the HTLC fails back) and starts again, until the window ends.
//! Slot i of n holds its first HTLC only (i + 1) / n of `hold`, so the slots' refreshes
//! are spread over the hold time: in step, every slot would free at once, and the
//! honest payments would take the freed slots each time.
//!
//! Bounded: `slots` tasks (at most [`crate::scenario::MAX_SLOTS`]), each with one
//! invoice at a time. However the attack ends (its window, the load's end, a
//! cancelled run), every slot cancels its invoice before its task returns, and the
//! engine waits for them, so no HTLC stays held.

use crate::metrics::attack::AttackStats;
use crate::node::{HoldInvoices, LightningNode, PaymentHash, PaymentOutcome};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How often a slot asks whether its HTLC arrived.
const POLL: Duration = Duration::from_millis(200);
/// A slot whose HTLC did not arrive tries again after this long.
const RETRY: Duration = Duration::from_secs(1);
/// How long a slot waits for the attacker's payment to fail back once cancelled.
const FAIL_BACK: Duration = Duration::from_secs(15);

/// The attack the engine runs.
#[derive(Clone)]
pub struct AttackPlan {
    pub attacker: Arc<dyn LightningNode>,
    pub accomplice: Arc<dyn LightningNode>,
    pub slots: u32,
    pub amount_msat: u64,
    pub hold: Duration,
    /// From the load's start.
    pub start: Duration,
    pub duration: Duration,
}

impl std::fmt::Debug for AttackPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "attack {} -> {}: {} slots",
            self.attacker.name(),
            self.accomplice.name(),
            self.slots
        )
    }
}

/// A running attack: its figures and the task that drives it.
#[derive(Debug)]
pub(super) struct Attack {
    pub plan: AttackPlan,
    pub stats: Arc<AttackStats>,
}

impl Attack {
    pub(super) fn new(plan: AttackPlan) -> Self {
        let stats = AttackStats::new(plan.start, plan.start + plan.duration);
        Attack {
            plan,
            stats: Arc::new(stats),
        }
    }

    /// The slots held now, of the plan's, for the live view.
    pub(super) fn live(&self) -> Arc<crate::metrics::attack::AttackLive> {
        let live = crate::metrics::attack::AttackLive::new(self.stats.clone(), self.plan.slots);
        Arc::new(live)
    }

    /// `results.attack`, for a load that ran `load_s` seconds.
    pub(super) fn summary(&self, load_s: f64) -> crate::metrics::attack::AttackSummary {
        let p = &self.plan;
        let who = (p.attacker.name(), p.accomplice.name());
        (self.stats).summary(who, p.slots, p.amount_msat, p.hold, load_s)
    }

    /// Runs the attack from `load_start`: waits for its window, holds the slots until
    /// the window ends or `stop`, and samples the slots held once a second until
    /// `stop`. Returns once every slot has cancelled its invoice.
    pub(super) async fn run(&self, load_start: Instant, stop: CancellationToken) {
        let (stats, accomplice) = (self.stats.clone(), self.plan.accomplice.clone());
        let sampler = sample_every_second(stats, accomplice, load_start, stop.clone());
        let window = stop.child_token();
        let attack = async {
            tokio::select! {
                _ = tokio::time::sleep_until(load_start + self.plan.start) => {}
                _ = window.cancelled() => return,
            }
            let mut slots = JoinSet::new();
            for i in 0..self.plan.slots {
                let (plan, stats) = (self.plan.clone(), self.stats.clone());
                let first = first_hold(plan.hold, i, plan.slots);
                slots.spawn(slot(plan, stats, window.clone(), first));
            }
            let end = load_start + self.plan.start + self.plan.duration;
            tokio::select! {
                _ = tokio::time::sleep_until(end) => window.cancel(),
                _ = window.cancelled() => {}
            }
            while slots.join_next().await.is_some() {}
            let after = pending_htlcs(self.plan.accomplice.as_ref()).await;
            self.stats.accomplice_after(after);
        };
        tokio::join!(sampler, attack);
    }
}

/// The node's count of HTLCs in flight on its channels; None when it does not
/// answer within a second or its client cannot tell ([`crate::node::HealthCheck`]).
async fn pending_htlcs(node: &dyn LightningNode) -> Option<u32> {
    let check = node.health_check()?;
    let health = tokio::time::timeout(Duration::from_secs(1), check.channel_health()).await;
    health.ok()?.ok()?.pending_htlcs
}

/// Notes the slots held at the end of each second of the load, and the
/// accomplice's own count right after, until `stop`.
async fn sample_every_second(
    stats: Arc<AttackStats>,
    accomplice: Arc<dyn LightningNode>,
    start: Instant,
    stop: CancellationToken,
) {
    let mut interval =
        tokio::time::interval_at(start + Duration::from_secs(1), Duration::from_secs(1));
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            at = interval.tick() => {
                let second = at.saturating_duration_since(start).as_secs();
                let second = usize::try_from(second.saturating_sub(1)).unwrap_or(usize::MAX);
                stats.sample(second);
                stats.sample_accomplice(second, pending_htlcs(accomplice.as_ref()).await);
            }
        }
    }
}

/// How long slot `i` of `n` holds its first HTLC: (i + 1) / n of `hold`.
pub(super) fn first_hold(hold: Duration, i: u32, n: u32) -> Duration {
    hold.mul_f64(f64::from(i + 1) / f64::from(n.max(1)))
}

/// One slot: hold an HTLC, release it after `first` the first time and `hold` after
/// that, again, until `window` ends. An accomplice without hold invoices (validation
/// refuses it first) ends the slot at once, with a warning that says so.
async fn slot(
    plan: AttackPlan,
    stats: Arc<AttackStats>,
    window: CancellationToken,
    first: Duration,
) {
    let accomplice = plan.accomplice.as_ref();
    let Some(invoices) = accomplice.hold_invoices() else {
        let e = crate::node::capabilities::lacking(accomplice, crate::node::Feature::HoldInvoices);
        tracing::warn!(error = %e, "attack slot");
        return;
    };
    let mut hold = first;
    while !window.is_cancelled() {
        // The preimage is dropped at once: the invoice can only be held or cancelled.
        let (_, hash) = crate::node::fresh_preimage();
        let bolt11 = match invoices.add_hold_invoice(hash, plan.amount_msat).await {
            Ok(bolt11) => bolt11,
            Err(_) => {
                pause(&window, RETRY).await;
                continue;
            }
        };
        stats.invoices.fetch_add(1, Ordering::Relaxed);
        let payer = plan.attacker.clone();
        let timeout = plan.hold + FAIL_BACK;
        let mut payment = tokio::spawn(async move { payer.pay_invoice(&bolt11, timeout).await });
        let held_at = held(invoices, plan.hold, hash, &window, || payment.is_finished()).await;
        // A try the window's end cut short is not a miss.
        let missed = held_at.is_none() && !window.is_cancelled();
        if held_at.is_some() {
            stats.accepted.fetch_add(1, Ordering::Relaxed);
            stats.hold();
            pause(&window, hold).await;
            hold = plan.hold;
        }
        match invoices.cancel_invoice(hash).await {
            Ok(()) => stats.cancelled.fetch_add(1, Ordering::Relaxed),
            Err(_) => stats.cancel_errors.fetch_add(1, Ordering::Relaxed),
        };
        if let Some(at) = held_at {
            stats.release(plan.amount_msat, at.elapsed());
        }
        let ended_first = payment.is_finished();
        let answer = tokio::time::timeout(FAIL_BACK, &mut payment).await;
        if missed {
            stats.miss(miss_reason(ended_first, &answer));
        }
        match answer {
            Ok(Ok(Ok(PaymentOutcome::Succeeded { fee_msat, .. }))) => {
                stats.fees_paid_msat.fetch_add(fee_msat, Ordering::Relaxed);
            }
            Ok(_) => {}
            // The HTLC failed back at the cancel; the payment's answer is not needed,
            // and its task must not outlive the attack.
            Err(_) => payment.abort(),
        }
        if held_at.is_none() {
            pause(&window, RETRY).await;
        }
    }
}

/// The attacker's payment as a slot waited for it: its result, unless its task failed
/// or it did not end in time.
type Answer = Result<
    Result<Result<PaymentOutcome, crate::node::NodeError>, tokio::task::JoinError>,
    tokio::time::error::Elapsed,
>;

/// Why a try's HTLC never reached the accomplice: the attacker's own answer when its
/// payment ended before the invoice was cancelled (`ended_first`), else `not_held`
/// (still on its way when the slot gave up).
fn miss_reason(ended_first: bool, answer: &Answer) -> &'static str {
    use crate::metrics::FailureKind;
    match answer {
        _ if !ended_first => "not_held",
        Ok(Ok(Ok(PaymentOutcome::Failed { reason }))) => FailureKind::Node(*reason).as_str(),
        Ok(Ok(Ok(PaymentOutcome::Succeeded { .. }))) => "not_held",
        Ok(Ok(Err(_)) | Err(_)) | Err(_) => FailureKind::RpcError.as_str(),
    }
}

/// When the accomplice (its `invoices`) held the HTLC of `hash`; None if it did not
/// within `hold`, the attacker's payment ended (`paid`: no route, ...) or the window
/// ended first.
async fn held(
    invoices: &dyn HoldInvoices,
    hold: Duration,
    hash: PaymentHash,
    window: &CancellationToken,
    paid: impl Fn() -> bool,
) -> Option<Instant> {
    let give_up = Instant::now() + hold;
    while Instant::now() < give_up && !window.is_cancelled() && !paid() {
        if let Ok(true) = invoices.hold_invoice_accepted(hash).await {
            return Some(Instant::now());
        }
        pause(window, POLL).await;
    }
    None
}

/// A measured honest payment's end, for the attack's windows.
impl super::event::Subscriber for Attack {
    fn on_payment(&self, ctx: &super::Context, event: &super::event::PaymentEvent) {
        if let Some((_, counted)) = event.measured() {
            let result = counted
                .as_ref()
                .map(|(latency, _)| *latency)
                .map_err(|k| *k);
            self.stats.record(ctx.start.elapsed(), result);
        }
    }

    /// The attack's slots, from its start into the load until `stop`; ends when its
    /// slots cancelled their invoices.
    fn beside(
        self: Arc<Self>,
        ctx: Arc<super::Context>,
        stop: CancellationToken,
    ) -> Option<futures::future::BoxFuture<'static, ()>> {
        Some(Box::pin(async move { self.run(ctx.start, stop).await }))
    }

    fn fill(&self, ctx: &super::Context, summary: &mut crate::metrics::Summary) {
        summary.attack = Some(self.summary(ctx.start.elapsed().as_secs_f64()));
    }
}

/// Sleeps `d`, or less when the window ends.
async fn pause(window: &CancellationToken, d: Duration) {
    tokio::select! {
        _ = tokio::time::sleep(d) => {}
        _ = window.cancelled() => {}
    }
}
