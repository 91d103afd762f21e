//! The load engine: drives payments over routes, closed loop or open loop, records
//! every result into [`crate::metrics`], obeys [`Command`]s and one cancellation token.
//!
//! Stopping: when the stop condition is met (payment count, duration, end of the
//! schedule) or on [`Command::Stop`], no new payment starts; payments in flight get
//! [`stop_grace`] to finish, then they are abandoned and counted as indeterminate
//! (the node may still complete them). On cancellation (Ctrl-C) in-flight payments
//! are counted indeterminate at once; so is a payment that timed out. Reconciliation
//! (`run/reconcile.rs`) asks the nodes their fate after the load. Open-loop arrivals
//! still queued at the end count as `dropped`, never as payments. Either way
//! `ok + failed + indeterminate` is every payment started.

pub mod activity;
pub mod attack;
#[cfg(test)]
mod attack_tests;
mod control;
mod dispatch;
mod event;
mod invoices;
pub mod ledger;
pub mod rebalance;
pub mod schedule;
mod slots;
mod split;
pub mod stream;
mod subscribers;
mod tally;
mod worker;

pub use control::Command;

use crate::metrics::{EventKind, LoadSetting, Recorder, Stage, Summary};
use crate::node::{LightningNode, NodeError};
use crate::scenario::{Load, PaymentKind, StopCondition};
use control::Control;
use invoices::InvoicePool;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use worker::Tickets;

/// Most closed-loop workers (`SetConcurrency` is clamped to it).
pub const MAX_CONCURRENCY: u32 = 10_000;
/// Open loop: payments in flight at once. Arrivals beyond it wait in the backlog
/// (their latency still counts from the intended start).
pub const OPEN_LOOP_IN_FLIGHT: u32 = 1_000;
/// Open loop: arrivals waiting for a free worker; beyond it they are dropped.
pub const OPEN_LOOP_BACKLOG: usize = 100_000;

/// A sender paying a receiver.
#[derive(Clone)]
pub struct Route {
    pub sender: Arc<dyn LightningNode>,
    pub receiver: Arc<dyn LightningNode>,
    pub receiver_pubkey: String,
}

impl std::fmt::Debug for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} -> {}", self.sender.name(), self.receiver.name())
    }
}

/// Everything the engine needs to run a workload.
#[derive(Debug, Clone)]
pub struct Plan {
    pub routes: Vec<Route>,
    pub kind: PaymentKind,
    pub amount_msat: u64,
    pub load: Load,
    pub stop: StopCondition,
    pub payment_timeout: Duration,
    /// Mainnet caps: every payment (warm-up included) is reserved here first, and
    /// the load stops when the next one would cross the total. Shared by the run's
    /// loads, so the total holds across points and repeats.
    pub ledger: Option<Arc<ledger::SpendLedger>>,
    /// `kind: stream`: each recipient's share of a tick (the routes are senders by
    /// recipients, sender-major).
    pub stream: Option<stream::StreamPlan>,
    /// Invoice payments: the most parts the sender may split one into.
    pub max_parts: Option<u32>,
    /// `workload: attack:`: jamming beside the honest load.
    pub attack: Option<attack::AttackPlan>,
    /// `workload: rebalance:`: circular rebalancing beside the load.
    pub rebalance: Option<rebalance::RebalancePlan>,
}

/// Why the load ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    PaymentCount,
    Duration,
    /// Open loop: every phase ran to its end.
    ScheduleEnd,
    /// [`Command::Stop`].
    Command,
    /// The cancellation token (Ctrl-C, a failed node, ...).
    Cancelled,
    /// Invoice-pregenerated: the invoices made before the run were used up.
    InvoicesExhausted,
    /// Mainnet caps: the next payment would have crossed `max_total_msat`.
    CapReached,
    /// `stop: liquidity_failures:`: that many payments failed for lack of liquidity.
    LiquidityFailures,
}

#[derive(Debug, Clone)]
pub struct EngineOutcome {
    pub stop_reason: StopReason,
    pub summary: Summary,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("the workload has no routes: give at least one sender and one receiver")]
    NoRoutes,
    #[error("closed-loop concurrency is 0: set it to 1 or more (at most {MAX_CONCURRENCY})")]
    ZeroConcurrency,
    #[error("the open-loop load has no phases: add at least one phase with a rate")]
    NoPhases,
    #[error("cannot pre-generate invoices on {node}: check that the node is up")]
    Pregenerate {
        node: String,
        #[source]
        source: NodeError,
    },
    #[error("a payment task panicked; the results so far are incomplete")]
    TaskPanicked(#[source] tokio::task::JoinError),
}

/// How long payments in flight may take to finish once the load stops.
pub fn stop_grace(payment_timeout: Duration) -> Duration {
    payment_timeout.min(Duration::from_secs(10))
}

/// State shared by the controller, workers and dispatcher.
#[derive(Debug)]
struct Context {
    routes: Vec<Route>,
    /// Network-wide activity: picks each payment's route and amount.
    activity: Option<Arc<activity::ActivityPlan>>,
    kind: PaymentKind,
    amount_msat: u64,
    payment_timeout: Duration,
    ledger: Option<Arc<ledger::SpendLedger>>,
    stream: Option<Arc<stream::StreamState>>,
    invoices: Vec<InvoicePool>,
    /// Each route's payments as counted (index of `routes`).
    tally: Vec<tally::RouteTally>,
    tickets: Tickets,
    control: Control,
    recorder: Recorder,
    /// No new payments.
    stop: CancellationToken,
    /// Give up on payments in flight.
    abort: CancellationToken,
    /// Closed loop: payments handed out, and the limit.
    issued: AtomicU64,
    payment_limit: Option<u64>,
    stop_reason: OnceLock<StopReason>,
    start: Instant,
    /// Parts of multi-part payments, liquidity failures of a drain.
    notes: Arc<split::Notes>,
    /// Who hears of each payment's end (event.rs).
    subscribers: Vec<Arc<dyn event::Subscriber>>,
}

impl Context {
    /// Ends the load (the first reason given wins).
    fn end(&self, reason: StopReason) {
        let _ = self.stop_reason.set(reason);
        self.stop.cancel();
    }
}

/// Runs the plan to its stop condition, a [`Command::Stop`] or `cancel`, and returns
/// the summary. Snapshots go to the watch channel of `recorder` about every second.
pub async fn run(
    plan: Plan,
    recorder: Recorder,
    commands: mpsc::UnboundedReceiver<Command>,
    cancel: CancellationToken,
) -> Result<EngineOutcome, EngineError> {
    run_with_activity(plan, None, recorder, commands, cancel).await
}

/// [`run`], with payments spread over the network by `activity` (its routes are the
/// plan's) and counted per sender and route length in its stats.
pub async fn run_with_activity(
    plan: Plan,
    activity: Option<Arc<activity::ActivityPlan>>,
    recorder: Recorder,
    mut commands: mpsc::UnboundedReceiver<Command>,
    cancel: CancellationToken,
) -> Result<EngineOutcome, EngineError> {
    if plan.routes.is_empty() {
        return Err(EngineError::NoRoutes);
    }
    let LoadStart {
        workers: workers_at_start,
        tickets,
        queue: queue_tx,
        setting: load_setting,
    } = start_load(&plan.load)?;
    recorder.set_load(load_setting);

    let Some(invoices) = pregenerated_invoices(&plan, &recorder, &cancel).await? else {
        return Ok(EngineOutcome {
            stop_reason: StopReason::Cancelled,
            summary: recorder.finish(),
        });
    };

    let stream = (plan.stream).map(|s| Arc::new(stream::StreamState::new(s, &plan.routes)));
    if let Some(stream) = &stream {
        stream.mark(&plan.routes).await;
    }
    let closed = matches!(plan.load, Load::Closed { .. });
    let notes = Arc::new(split::Notes::new(
        plan.max_parts,
        plan.stop.liquidity_failures,
    ));
    let listeners = subscribers::Listeners {
        ledger: plan.ledger.clone(),
        stream: stream.clone(),
        activity: activity.clone(),
        attack: plan.attack.map(|a| Arc::new(attack::Attack::new(a))),
        notes: notes.clone(),
        rebalance: (plan.rebalance).map(|r| Arc::new(rebalance::Rebalancer::new(r))),
    };
    let subscribers = subscribers::of(listeners, &recorder);
    let ctx = Arc::new(Context {
        tally: plan.routes.iter().map(|_| Default::default()).collect(),
        stream,
        routes: plan.routes,
        activity,
        kind: plan.kind,
        amount_msat: plan.amount_msat,
        payment_timeout: plan.payment_timeout,
        ledger: plan.ledger,
        invoices,
        tickets,
        control: Control::new(workers_at_start),
        recorder: recorder.clone(),
        stop: cancel.child_token(),
        abort: cancel.child_token(),
        issued: AtomicU64::new(0),
        payment_limit: if closed { plan.stop.payments } else { None },
        stop_reason: OnceLock::new(),
        start: Instant::now(),
        notes,
        subscribers,
    });
    let beside = subscribers::start_beside(&ctx, &cancel);

    let ticker = tokio::spawn(tick_every_second(recorder.clone(), ctx.abort.clone()));
    let mut workers = JoinSet::new();
    let mut spawned = 0;
    spawn_workers(&ctx, &mut workers, &mut spawned, workers_at_start);
    let mut dispatcher = match (&plan.load, queue_tx) {
        (Load::Open { phases }, Some(tx)) => Some(tokio::spawn(dispatch::dispatch(
            ctx.clone(),
            phases.clone(),
            plan.stop,
            tx,
        ))),
        _ => {
            recorder.set_stage(Stage::Closed);
            recorder.begin_timed();
            None
        }
    };

    let running = Running {
        ctx: &ctx,
        cancel: &cancel,
        duration_limit: if closed { plan.stop.duration } else { None },
    };
    let panicked = running
        .drive(&mut workers, &mut spawned, &mut dispatcher, &mut commands)
        .await;
    subscribers::end_beside(beside).await;
    wind_down(
        ctx,
        closed,
        plan.payment_timeout,
        workers,
        dispatcher,
        ticker,
        panicked,
    )
    .await
}

/// The load while it runs: what ends it.
struct Running<'a> {
    ctx: &'a Arc<Context>,
    cancel: &'a CancellationToken,
    /// A closed loop's `stop.duration` (the open loop's dispatcher keeps its own).
    duration_limit: Option<Duration>,
}

impl Running<'_> {
    /// Applies live commands until a stop condition, `cancel`, the dispatcher's end or
    /// the end of every worker; returns a worker's panic, if one ended the load.
    async fn drive(
        &self,
        workers: &mut JoinSet<()>,
        spawned: &mut u32,
        dispatcher: &mut Option<tokio::task::JoinHandle<StopReason>>,
        commands: &mut mpsc::UnboundedReceiver<Command>,
    ) -> Option<tokio::task::JoinError> {
        let ctx = self.ctx;
        let mut commands_open = true;
        loop {
            let deadline =
                (self.duration_limit).map(|d| ctx.start + d + ctx.control.completed_pause());
            tokio::select! {
                _ = self.cancel.cancelled() => {
                    ctx.end(StopReason::Cancelled);
                    return None;
                }
                _ = ctx.stop.cancelled() => return None,
                _ = sleep_until_opt(deadline), if !ctx.control.is_paused() => {
                    ctx.end(StopReason::Duration);
                    return None;
                }
                reason = async { dispatcher.as_mut().expect("guarded").await }, if dispatcher.is_some() => {
                    *dispatcher = None;
                    let _ = ctx.stop_reason.set(reason.unwrap_or(StopReason::Cancelled));
                    return None;
                }
                joined = workers.join_next() => match joined {
                    Some(Err(e)) if e.is_panic() => {
                        ctx.end(StopReason::Cancelled);
                        return Some(e);
                    }
                    Some(_) => {}
                    // Every worker ended by itself (e.g. a closed-loop count was reached).
                    None => return None,
                },
                command = commands.recv(), if commands_open => match command {
                    Some(command) => apply(command, ctx, &ctx.recorder, workers, spawned),
                    None => commands_open = false,
                },
            }
        }
    }
}

/// The pregenerated invoices of an `InvoicePregenerated` plan (none for other kinds), or
/// `None` when the run was cancelled while they were made.
async fn pregenerated_invoices(
    plan: &Plan,
    recorder: &Recorder,
    cancel: &CancellationToken,
) -> Result<Option<Vec<InvoicePool>>, EngineError> {
    if plan.kind != PaymentKind::InvoicePregenerated {
        return Ok(Some(Vec::new()));
    }
    recorder.set_stage(Stage::Preparing);
    let wanted = invoices::wanted(&plan.load, plan.stop);
    tokio::select! {
        _ = cancel.cancelled() => Ok(None),
        pools = invoices::pregenerate(&plan.routes, plan.amount_msat, wanted) => Ok(Some(pools?)),
    }
}

/// After the load's loop: stops new payments, waits for the workers (a grace period,
/// then aborts them), counts what the open loop's queue still held, and totals the
/// summary.
async fn wind_down(
    ctx: Arc<Context>,
    closed: bool,
    payment_timeout: Duration,
    mut workers: JoinSet<()>,
    dispatcher: Option<tokio::task::JoinHandle<StopReason>>,
    ticker: tokio::task::JoinHandle<()>,
    mut panicked: Option<tokio::task::JoinError>,
) -> Result<EngineOutcome, EngineError> {
    let recorder = &ctx.recorder;
    recorder.set_stage(Stage::Draining);
    // Open loop at its natural end keeps starting arrivals already due (within the
    // grace period); every other end stops new payments now.
    let natural_end = matches!(
        ctx.stop_reason.get(),
        Some(StopReason::ScheduleEnd | StopReason::Duration | StopReason::PaymentCount)
    );
    if closed || !natural_end {
        ctx.stop.cancel();
    }
    if let Some(d) = dispatcher {
        d.abort();
    }
    let grace = stop_grace(payment_timeout);
    let drained = tokio::time::timeout(grace, join_all(&mut workers, &mut panicked)).await;
    if drained.is_err() {
        ctx.abort.cancel();
        join_all(&mut workers, &mut panicked).await;
    }
    ctx.abort.cancel();
    let _ = ticker.await;
    if let Tickets::Open(queue) = &ctx.tickets {
        let mut queue = queue.lock().await;
        let mut left = 0;
        while queue.try_recv().is_ok() {
            left += 1;
        }
        recorder.add_dropped(left);
    }
    if let Some(e) = panicked {
        return Err(EngineError::TaskPanicked(e));
    }
    let mut summary = recorder.finish();
    // Read after the summary is taken, so the reads are not load time.
    if let Some(stream) = &ctx.stream {
        stream.read_back(&ctx.routes).await;
    }
    for subscriber in &ctx.subscribers {
        subscriber.fill(&ctx, &mut summary);
    }
    Ok(EngineOutcome {
        stop_reason: *ctx.stop_reason.get().unwrap_or(&StopReason::Cancelled),
        summary,
    })
}

/// How the load starts (see [`start_load`]).
struct LoadStart {
    /// Workers spawned at first.
    workers: u32,
    /// Where the workers take their tickets.
    tickets: Tickets,
    /// The dispatcher's end of the open loop's queue.
    queue: Option<mpsc::Sender<worker::Ticket>>,
    /// The setting the recorder shows.
    setting: LoadSetting,
}

/// The workers, tickets and queue the load starts with.
fn start_load(load: &Load) -> Result<LoadStart, EngineError> {
    match load {
        Load::Closed { concurrency: 0 } => Err(EngineError::ZeroConcurrency),
        Load::Closed { concurrency } => {
            let n = (*concurrency).min(MAX_CONCURRENCY);
            Ok(LoadStart {
                workers: n,
                tickets: Tickets::Closed,
                queue: None,
                setting: LoadSetting::Closed { concurrency: n },
            })
        }
        Load::Open { phases } if phases.is_empty() => Err(EngineError::NoPhases),
        Load::Open { phases } => {
            let (tx, rx) = mpsc::channel(OPEN_LOOP_BACKLOG);
            Ok(LoadStart {
                workers: OPEN_LOOP_IN_FLIGHT,
                tickets: Tickets::Open(tokio::sync::Mutex::new(rx)),
                queue: Some(tx),
                setting: LoadSetting::Open {
                    rate: phases[0].from_rate,
                },
            })
        }
    }
}

fn spawn_workers(ctx: &Arc<Context>, workers: &mut JoinSet<()>, spawned: &mut u32, upto: u32) {
    while *spawned < upto {
        workers.spawn(worker::worker(ctx.clone(), *spawned));
        *spawned += 1;
    }
}

/// Applies one command and records it as a run event (the one place commands
/// become events). A command that changes nothing records nothing: `Pause` while
/// paused, `Resume` while running, a load step to the value already set, `Stop`
/// after the load already ended, and a command that does not apply to the load
/// model (`SetRate` in closed loop, `SetConcurrency` in open loop) or has an
/// invalid value (a rate that is not a positive number), which is logged instead.
fn apply(
    command: Command,
    ctx: &Arc<Context>,
    recorder: &Recorder,
    workers: &mut JoinSet<()>,
    spawned: &mut u32,
) {
    let closed = matches!(ctx.tickets, Tickets::Closed);
    match command {
        Command::Pause => {
            if ctx.control.set_paused(true) {
                recorder.set_paused(true);
                recorder.event(EventKind::Paused);
            }
        }
        Command::Resume => {
            if ctx.control.set_paused(false) {
                recorder.set_paused(false);
                recorder.event(EventKind::Resumed);
            }
        }
        Command::SetConcurrency(n) if closed => {
            let n = n.clamp(1, MAX_CONCURRENCY);
            let from = ctx.control.concurrency();
            ctx.control.set_concurrency(n);
            spawn_workers(ctx, workers, spawned, n);
            recorder.set_load(LoadSetting::Closed { concurrency: n });
            if from != n {
                recorder.event(EventKind::ConcurrencyChanged { from, to: n });
            }
        }
        Command::SetRate(rate) if !closed && rate.is_finite() && rate > 0.0 => {
            let from = match recorder.load() {
                LoadSetting::Open { rate } => rate,
                LoadSetting::Closed { .. } => 0.0,
            };
            let changed = ctx.control.rate_override() != Some(rate);
            ctx.control.set_rate(rate);
            recorder.set_load(LoadSetting::Open { rate });
            if changed {
                recorder.event(EventKind::RateChanged { from, to: rate });
            }
        }
        Command::SetConcurrency(_) | Command::SetRate(_) => {
            tracing::warn!(
                ?command,
                "ignored: it does not apply to this load model or value"
            );
        }
        Command::Stop => {
            if !ctx.stop.is_cancelled() {
                recorder.event(EventKind::StopRequested);
            }
            ctx.end(StopReason::Command);
        }
    }
}

async fn join_all(workers: &mut JoinSet<()>, panicked: &mut Option<tokio::task::JoinError>) {
    while let Some(joined) = workers.join_next().await {
        if let Err(e) = joined
            && e.is_panic()
        {
            panicked.get_or_insert(e);
        }
    }
}

async fn sleep_until_opt(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// Closes a metrics interval every second, aligned to the engine start.
async fn tick_every_second(recorder: Recorder, done: CancellationToken) {
    let mut interval = tokio::time::interval_at(
        Instant::now() + Duration::from_secs(1),
        Duration::from_secs(1),
    );
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = done.cancelled() => return,
            _ = interval.tick() => recorder.tick(),
        }
    }
}

#[cfg(test)]
mod cap_tests;
#[cfg(test)]
mod rebalance_tests;
#[cfg(test)]
mod split_tests;
#[cfg(test)]
mod stream_tests;
#[cfg(test)]
mod tests;
