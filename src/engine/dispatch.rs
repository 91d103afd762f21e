//! Open loop: releases tickets at their intended start times.

use super::schedule::{Arrivals, warm_up_length};
use super::worker::Ticket;
use super::{Context, StopReason};
use crate::metrics::{EventKind, LoadSetting, Stage};
use crate::scenario::{Phase, PhaseKind, StopCondition};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;
use tokio::time::Instant;

/// Releases tickets until the schedule or the stop condition ends; returns why.
/// When the queue is full (every worker busy and the backlog at its cap) the
/// arrival is dropped and counted.
pub(super) async fn dispatch(
    ctx: Arc<Context>,
    phases: Vec<Phase>,
    stop: StopCondition,
    queue: mpsc::Sender<Ticket>,
) -> StopReason {
    let mut arrivals = Arrivals::new(&phases);
    let end = stop.duration.map(|d| warm_up_length(&phases) + d);
    let mut changes = ctx.control.subscribe();
    let mut rate_seen: Option<f64> = None;
    let mut stage = Stage::Preparing;
    let mut timed: u64 = 0;
    let mut seq: u64 = 0;
    let mut last_load_update: Option<Instant> = None;
    'next: loop {
        let Some(arrival) = arrivals.next() else {
            return StopReason::ScheduleEnd;
        };
        if end.is_some_and(|end| arrival.offset >= end) {
            return StopReason::Duration;
        }
        loop {
            changes.borrow_and_update();
            if let Some(rate) = ctx.control.rate_override()
                && rate_seen != Some(rate)
            {
                rate_seen = Some(rate);
                arrivals = Arrivals::constant(rate, active_offset(&ctx));
                continue 'next;
            }
            if ctx.control.is_paused() {
                tokio::select! {
                    _ = ctx.stop.cancelled() => return StopReason::Command,
                    _ = changes.changed() => continue,
                }
            }
            let due = ctx.start + ctx.control.completed_pause() + arrival.offset;
            tokio::select! {
                biased;
                _ = ctx.stop.cancelled() => return StopReason::Command,
                _ = changes.changed() => continue,
                _ = tokio::time::sleep_until(due) => break,
            }
        }
        let warm_up = arrival.phase == PhaseKind::WarmUp;
        if !warm_up {
            if stop.payments.is_some_and(|n| timed >= n) {
                return StopReason::PaymentCount;
            }
            timed += 1;
        }
        let now_stage = match (arrival.phase, rate_seen) {
            (_, Some(_)) => Stage::Hold,
            (PhaseKind::WarmUp, None) => Stage::WarmUp,
            (PhaseKind::Ramp, None) => Stage::Ramp,
            (PhaseKind::Hold, None) => Stage::Hold,
        };
        if now_stage != stage {
            stage = now_stage;
            ctx.recorder.set_stage(stage);
            ctx.recorder.event(EventKind::PhaseStarted { phase: stage });
            if !warm_up {
                ctx.recorder.begin_timed();
            }
        }
        // The current rate for front ends, at most ten times a second.
        let now = Instant::now();
        if last_load_update.is_none_or(|t| now - t >= Duration::from_millis(100)) {
            last_load_update = Some(now);
            let rate = arrivals.rate_at(arrival.offset);
            ctx.recorder.set_load(LoadSetting::Open { rate });
        }
        let ticket = Ticket {
            seq,
            intended: ctx.start + ctx.control.completed_pause() + arrival.offset,
            pause_at_release: ctx.control.completed_pause(),
            warm_up,
            stage,
        };
        seq += 1;
        match queue.try_send(ticket) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => ctx.recorder.add_dropped(1),
            Err(TrySendError::Closed(_)) => return StopReason::Cancelled,
        }
    }
}

/// Active time (pauses excluded) since the engine started.
fn active_offset(ctx: &Context) -> Duration {
    Instant::now().saturating_duration_since(ctx.start + ctx.control.completed_pause())
}
