//! `history:`'s phase: before a point's measured load, the network pays until it has
//! made the payments the scenario asks for, unmeasured, in a closed loop paying like
//! the workload. Bounded in count (the target) and time (`within:`); a phase where
//! most payments fail ends the run with their reasons rather than looping.

use super::bring_up::Network;
use crate::engine::{self, StopReason};
use crate::metrics;
use crate::report::history_phase::HistoryPhase;
use crate::scenario::{Load, Scenario, StopCondition};
use crate::setup::StepLog;
use anyhow::{Result, bail};
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Rounds of top-up payments at most: a round pays what is still missing, so more
/// than a few means payments keep failing.
const MAX_ROUNDS: u32 = 5;

/// Pays on `network` until it has made `scenario.history`'s payments; `made` is what
/// the run has paid on it so far and grows with what the phase paid. None without
/// `history:`. A signal ends the phase early, with what it did.
pub(super) async fn top_up(
    scenario: &Scenario,
    network: &Network,
    made: &mut u64,
    cancel: &CancellationToken,
    log: &mut StepLog,
) -> Result<Option<HistoryPhase>> {
    let Some(history) = &scenario.history else {
        return Ok(None);
    };
    let mut phase = HistoryPhase {
        target: history.payments,
        before: *made,
        paid: 0,
        failed: 0,
        failures_by_reason: Default::default(),
        seconds: 0.0,
        tps: 0.0,
        concurrency: history.concurrency,
    };
    if *made >= history.payments {
        return Ok(Some(phase));
    }
    log.begin(&format!(
        "history: paying {} payments before the load",
        history.payments - *made
    ));
    let started = Instant::now();
    let deadline = started + history.within;
    for round in 1..=MAX_ROUNDS {
        let missing = history.payments - *made;
        let left = deadline.saturating_duration_since(Instant::now());
        if missing == 0 || left.is_zero() || cancel.is_cancelled() {
            break;
        }
        let plan = round_plan(scenario, network, history.concurrency, missing, left);
        let summary = pay(plan, cancel, log, (*made, history.payments)).await?;
        *made += summary.ok;
        phase.paid += summary.ok;
        phase.failed += summary.failed;
        for (reason, n) in &summary.failures_by_reason {
            *phase
                .failures_by_reason
                .entry(reason.to_string())
                .or_default() += n;
        }
        let tried = summary.ok + summary.failed;
        // A signal ends the phase with what it did, not with an error.
        let failing = summary.ok * 2 < tried || (summary.ok == 0 && round > 1);
        if failing && !cancel.is_cancelled() {
            log.fail("most history payments failed");
            bail!(
                "history: {} of {tried} payments failed in the phase's round {round} ({}); \
                 the network cannot carry the history this scenario asks for (a channel \
                 drained by a one-way flow?): give the channels more capacity, or ask for \
                 fewer payments",
                summary.failed,
                reasons(&phase)
            );
        }
    }
    phase.seconds = started.elapsed().as_secs_f64();
    phase.tps = if phase.seconds > 0.0 {
        phase.paid as f64 / phase.seconds
    } else {
        0.0
    };
    if *made < history.payments && !cancel.is_cancelled() {
        log.fail("history not reached");
        bail!(
            "history: made {} of {} payments in {:.0} s (within {}, at most {MAX_ROUNDS} \
             rounds; {} failed: {}); give it longer (history: {{ within: ... }}) or ask \
             for fewer payments",
            *made,
            history.payments,
            phase.seconds,
            humantime::format_duration(history.within),
            phase.failed,
            reasons(&phase)
        );
    }
    log.end();
    Ok(Some(phase))
}

/// One round's engine plan: the workload's payments in a closed loop, stopping
/// after `missing` payments or when the phase's time is up.
fn round_plan(
    scenario: &Scenario,
    network: &Network,
    concurrency: u32,
    missing: u64,
    left: Duration,
) -> engine::Plan {
    let mut s = scenario.clone();
    s.workload.load = Load::Closed { concurrency };
    s.workload.stop = StopCondition {
        payments: Some(missing),
        duration: Some(left),
        liquidity_failures: None,
    };
    s.workload.attack = None;
    // History drives the payments only: no rebalancing between them.
    s.workload.rebalance = None;
    super::load::plan_of(&s, network, None, None).0
}

/// Runs one round, showing `made of target` every two seconds.
async fn pay(
    plan: engine::Plan,
    cancel: &CancellationToken,
    log: &mut StepLog,
    (made, target): (u64, u64),
) -> Result<metrics::Summary> {
    let (recorder, snapshots) = metrics::Recorder::new();
    let (_commands, command_rx) = tokio::sync::mpsc::unbounded_channel();
    let engine = engine::run_with_activity(plan, None, recorder, command_rx, cancel.clone());
    tokio::pin!(engine);
    let mut tick = tokio::time::interval(Duration::from_secs(2));
    let outcome = loop {
        tokio::select! {
            res = &mut engine => break res?,
            _ = tick.tick() => {
                let now = snapshots.borrow().clone();
                log.progress(&format!(
                    "{} of {target} payments made, {:.1}/s, {} failed",
                    made + now.ok,
                    now.tps_avg,
                    now.failed
                ));
            }
        }
    };
    if outcome.stop_reason == StopReason::Cancelled {
        log.fail("interrupted");
    }
    Ok(outcome.summary)
}

/// The phase's failures by reason, for an error.
fn reasons(phase: &HistoryPhase) -> String {
    match phase.failures_by_reason.is_empty() {
        true => "no reason given".into(),
        false => phase.reasons(),
    }
}
