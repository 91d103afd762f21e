//! Jamming under load (`workload: attack:`): what the engine gathers beside the
//! recorder's figures, and the report's `results.attack`.
//!
//! The honest payments are counted by when they ended: before the attack's window
//! (from the load's start), during it, and after it (until the load's end). The
//! windows are the ones a fault has (`faults/windows.rs`: before, during, after), cut
//! at the attack's start and end; they are counted here from each payment's end
//! rather than from once-a-second samples, so their latency percentiles are exact.

use super::{FailureKind, Percentiles};
use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

/// Most seconds of `slots_held` kept (10 hours at one a second).
pub const MAX_SECONDS: usize = 36_000;

/// `results.attack`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttackSummary {
    pub attacker: String,
    pub accomplice: String,
    /// Slots the attack tried to hold at once, and each HTLC's amount.
    pub slots_target: u32,
    pub amount_msat: u64,
    /// The window, seconds from the load's start, and how long each HTLC was held.
    pub start_s: f64,
    pub end_s: f64,
    pub hold_s: f64,
    /// HTLCs the accomplice held (its hold invoice ACCEPTED), one entry a second from
    /// the load's start (the count when the second ended).
    pub slots_held: Vec<u32>,
    /// The most held at once.
    pub slots_held_max: u32,
    /// Hold invoices made, the HTLCs that reached the accomplice, invoices cancelled,
    /// and cancels that failed (an HTLC the node may still hold: see `left_held`).
    pub invoices: u64,
    pub accepted: u64,
    pub cancelled: u64,
    pub cancel_errors: u64,
    /// Slots still held when the attack ended (0 when every cancel went through).
    pub left_held: u32,
    /// The attacker's payments that did not reach the accomplice while the window was
    /// open, by why: the attacker's failure reason (`no_route`, ...), or `not_held`
    /// when the HTLC had not arrived within `hold_s`. Nonzero ones only.
    pub missed_by_reason: BTreeMap<&'static str, u64>,
    /// The accomplice's own count of HTLCs in flight on its channels, asked right
    /// after each entry of `slots_held` (null for a second it did not answer, or a
    /// client that cannot tell): the node's word beside the tool's, which match when
    /// nobody else pays the accomplice.
    pub accomplice_pending_htlcs: Vec<Option<u32>>,
    /// Its count once every slot had cancelled (None when it did not answer).
    pub accomplice_pending_after: Option<u32>,
    /// Honest payments before, during and after the window.
    pub before: AttackWindow,
    pub during: AttackWindow,
    pub after: AttackWindow,
    pub cost: AttackCost,
}

/// The honest payments that ended in one window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttackWindow {
    pub from_s: f64,
    pub to_s: f64,
    pub ok: u64,
    pub failed: u64,
    /// `ok / (to_s - from_s)` (0 for an empty window).
    pub tps: f64,
    pub latency: Percentiles,
    /// Failures by reason (`no_route`, `timeout`, ...), nonzero ones only.
    pub failures_by_reason: BTreeMap<&'static str, u64>,
}

/// What the attack cost the attacker.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttackCost {
    /// Its liquidity locked in held HTLCs times the time they were held, msat*s.
    pub locked_msat_s: f64,
    /// Fees paid: cancelled HTLCs pay none, so this is 0 unless one settled.
    pub fees_paid_msat: u64,
}

#[derive(Debug)]
struct Window {
    failed: u64,
    failures: BTreeMap<&'static str, u64>,
    latency: Histogram<u64>,
}

impl Window {
    fn new() -> Self {
        Window {
            failed: 0,
            failures: BTreeMap::new(),
            latency: Histogram::new_with_bounds(1, 600_000_000, 3)
                .expect("constant histogram bounds are valid"),
        }
    }

    fn summary(&self, from_s: f64, to_s: f64) -> AttackWindow {
        let ok = self.latency.len();
        let span = to_s - from_s;
        AttackWindow {
            from_s,
            to_s,
            ok,
            failed: self.failed,
            tps: if span > 0.0 { ok as f64 / span } else { 0.0 },
            latency: Percentiles::of(&self.latency),
            failures_by_reason: self.failures.clone(),
        }
    }
}

/// Gathers the attack's figures from the workers and the attack's tasks.
#[derive(Debug)]
pub struct AttackStats {
    start: Duration,
    end: Duration,
    windows: Mutex<[Window; 3]>,
    /// Slots held now.
    pub held: AtomicU32,
    held_max: AtomicU32,
    seconds: Mutex<Vec<u32>>,
    accomplice_seconds: Mutex<Vec<Option<u32>>>,
    accomplice_after: Mutex<Option<u32>>,
    missed: Mutex<BTreeMap<&'static str, u64>>,
    pub invoices: AtomicU64,
    pub accepted: AtomicU64,
    pub cancelled: AtomicU64,
    pub cancel_errors: AtomicU64,
    pub fees_paid_msat: AtomicU64,
    /// msat*ms, summed as each held HTLC is released.
    locked_msat_ms: AtomicU64,
}

/// The attack's live figure: the HTLC slots the accomplice holds now, of its target.
#[derive(Debug)]
pub struct AttackLive {
    stats: std::sync::Arc<AttackStats>,
    target: u32,
}

impl AttackLive {
    pub fn new(stats: std::sync::Arc<AttackStats>, target: u32) -> Self {
        AttackLive { stats, target }
    }
}

impl super::live::LiveSource for AttackLive {
    fn read(&self) -> super::live::LiveFigure {
        let held = self.stats.held.load(Ordering::Relaxed);
        super::live::LiveFigure {
            text: format!("attack {held}/{} slots held", self.target),
            alarm: held > 0,
        }
    }
}

impl AttackStats {
    /// An attack from `start` to `end` of the load.
    pub fn new(start: Duration, end: Duration) -> Self {
        AttackStats {
            start,
            end,
            windows: Mutex::new([Window::new(), Window::new(), Window::new()]),
            held: AtomicU32::new(0),
            held_max: AtomicU32::new(0),
            seconds: Mutex::new(Vec::new()),
            accomplice_seconds: Mutex::new(Vec::new()),
            accomplice_after: Mutex::new(None),
            missed: Mutex::new(BTreeMap::new()),
            invoices: AtomicU64::new(0),
            accepted: AtomicU64::new(0),
            cancelled: AtomicU64::new(0),
            cancel_errors: AtomicU64::new(0),
            fees_paid_msat: AtomicU64::new(0),
            locked_msat_ms: AtomicU64::new(0),
        }
    }

    /// An honest payment that ended `at` after the load's start: its latency, or why
    /// it failed.
    pub fn record(&self, at: Duration, result: Result<Duration, FailureKind>) {
        let i = if at < self.start {
            0
        } else if at < self.end {
            1
        } else {
            2
        };
        let mut windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        let w = &mut windows[i];
        match result {
            Ok(latency) => {
                let us = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
                w.latency.saturating_record(us.max(1));
            }
            Err(kind) => {
                w.failed += 1;
                *w.failures.entry(kind.as_str()).or_default() += 1;
            }
        }
    }

    /// An attacker's payment that did not reach the accomplice, and why.
    pub fn miss(&self, why: &'static str) {
        let mut missed = self.missed.lock().unwrap_or_else(|e| e.into_inner());
        *missed.entry(why).or_default() += 1;
    }

    /// One more slot held.
    pub fn hold(&self) {
        let now = self.held.fetch_add(1, Ordering::Relaxed) + 1;
        self.held_max.fetch_max(now, Ordering::Relaxed);
    }

    /// A held slot released after `held_for`, its HTLC of `amount_msat`.
    pub fn release(&self, amount_msat: u64, held_for: Duration) {
        self.held.fetch_sub(1, Ordering::Relaxed);
        let ms = u64::try_from(held_for.as_millis()).unwrap_or(u64::MAX);
        let locked = amount_msat.saturating_mul(ms);
        self.locked_msat_ms.fetch_add(locked, Ordering::Relaxed);
    }

    /// The slots held at the end of second `second` of the load.
    pub fn sample(&self, second: usize) {
        let held = self.held.load(Ordering::Relaxed);
        let mut seconds = self.seconds.lock().unwrap_or_else(|e| e.into_inner());
        if second >= MAX_SECONDS {
            return;
        }
        if seconds.len() <= second {
            // A missed tick repeats the last count.
            let last = seconds.last().copied().unwrap_or(0);
            seconds.resize(second, last);
            seconds.push(held);
        }
    }

    /// The accomplice's count of pending HTLCs, asked after the sample of `second`.
    pub fn sample_accomplice(&self, second: usize, pending: Option<u32>) {
        let mut seconds = (self.accomplice_seconds.lock()).unwrap_or_else(|e| e.into_inner());
        if second < MAX_SECONDS && seconds.len() <= second {
            seconds.resize(second, None);
            seconds.push(pending);
        }
    }

    /// The accomplice's count of pending HTLCs once the slots had cancelled.
    pub fn accomplice_after(&self, pending: Option<u32>) {
        *self
            .accomplice_after
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = pending;
    }

    /// The summary of a load that lasted `load_s` seconds.
    pub fn summary(
        &self,
        who: (&str, &str),
        slots_target: u32,
        amount_msat: u64,
        hold: Duration,
        load_s: f64,
    ) -> AttackSummary {
        let windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        let (start_s, end_s) = (self.start.as_secs_f64(), self.end.as_secs_f64());
        let load = |at: f64| at.min(load_s);
        let load_ms = self.locked_msat_ms.load(Ordering::Relaxed);
        AttackSummary {
            attacker: who.0.to_string(),
            accomplice: who.1.to_string(),
            slots_target,
            amount_msat,
            start_s,
            end_s,
            hold_s: hold.as_secs_f64(),
            slots_held: self
                .seconds
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            slots_held_max: self.held_max.load(Ordering::Relaxed),
            invoices: self.invoices.load(Ordering::Relaxed),
            accepted: self.accepted.load(Ordering::Relaxed),
            cancelled: self.cancelled.load(Ordering::Relaxed),
            cancel_errors: self.cancel_errors.load(Ordering::Relaxed),
            left_held: self.held.load(Ordering::Relaxed),
            missed_by_reason: (self.missed.lock())
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            accomplice_pending_htlcs: (self.accomplice_seconds.lock())
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            accomplice_pending_after: *self
                .accomplice_after
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
            before: windows[0].summary(0.0, load(start_s)),
            during: windows[1].summary(load(start_s), load(end_s)),
            after: windows[2].summary(load(end_s), load_s.max(load(end_s))),
            cost: AttackCost {
                locked_msat_s: load_ms as f64 / 1000.0,
                fees_paid_msat: self.fees_paid_msat.load(Ordering::Relaxed),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::FailureReason;

    #[test]
    fn payments_fall_in_the_window_they_ended_in() {
        let stats = AttackStats::new(Duration::from_secs(10), Duration::from_secs(20));
        let ms = Duration::from_millis;
        stats.record(Duration::from_secs(5), Ok(ms(10)));
        stats.record(Duration::from_secs(9), Ok(ms(30)));
        let no_route = Err(FailureKind::Node(FailureReason::NoRoute));
        stats.record(Duration::from_secs(10), no_route);
        stats.record(Duration::from_secs(19), Ok(ms(900)));
        stats.record(Duration::from_secs(25), Ok(ms(20)));
        let s = stats.summary(("m", "e"), 4, 1_000, Duration::from_secs(5), 30.0);
        assert_eq!((s.before.ok, s.before.failed), (2, 0));
        assert_eq!(
            (s.before.from_s, s.before.to_s, s.before.tps),
            (0.0, 10.0, 0.2)
        );
        assert_eq!((s.during.ok, s.during.failed), (1, 1));
        assert_eq!(s.during.failures_by_reason.get("no_route"), Some(&1));
        assert_eq!(s.during.latency.count, 1);
        assert!(s.during.latency.p50_us >= 899_000, "{:?}", s.during.latency);
        assert_eq!((s.after.ok, s.after.from_s, s.after.to_s), (1, 20.0, 30.0));
    }

    #[test]
    fn held_slots_cost_their_amount_times_the_hold() {
        let stats = AttackStats::new(Duration::ZERO, Duration::from_secs(10));
        stats.hold();
        stats.hold();
        stats.sample(0);
        stats.release(2_000, Duration::from_millis(1_500));
        stats.sample(2);
        stats.release(2_000, Duration::from_secs(3));
        let s = stats.summary(("m", "e"), 2, 2_000, Duration::from_secs(3), 10.0);
        // Second 1 was missed: it repeats second 0.
        assert_eq!(s.slots_held, [2, 2, 1]);
        assert_eq!((s.slots_held_max, s.left_held), (2, 0));
        assert_eq!(s.cost.locked_msat_s, 2_000.0 * 4.5);
    }
}
