//! What the report says about each fault, from the cumulative counts the runner
//! samples once a second: TPS and failures by reason before, during and after it,
//! and the time to recover (TPS back within 10 % of its level before the fault).
//!
//! - before: the [`BEFORE`] seconds before it began (from the load's start, or the end
//!   of the previous fault if later);
//! - during: from its beginning until it was lifted (a fault not lifted: until the
//!   end of the load; a fault of a moment, a reset or a burst of blocks, has none);
//! - after: from its end until the next fault begins or the load ends;
//! - recovered after: from its end until the first [`RECOVERY_SPAN`]-second span
//!   whose TPS is at least 90 % of the baseline (None: not within the load). The
//!   baseline is the before TPS, or the rate the load scheduled then when before ran
//!   above it: payments an earlier fault held that end in a burst are no level the
//!   scheduled rate can come back to.
//!
//! Samples are taken once a second and at each fault's beginning and end (the counts
//! are fresh then); a window's ends are the samples nearest them.

use serde::Serialize;
use std::collections::BTreeMap;

/// Most samples kept (10 hours at one a second; a longer run thins its older ones,
/// see `samples.rs`).
pub const MAX_SAMPLES: usize = 36_000;
/// Seconds before a fault that give its baseline.
pub const BEFORE: f64 = 10.0;
/// The span whose TPS must be back within 10 % for the run to count as recovered.
pub const RECOVERY_SPAN: f64 = 3.0;
/// A baseline needs at least this much time before the fault.
const MIN_BASELINE: f64 = 2.0;

/// The cumulative counts at one moment of the load.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub at_s: f64,
    pub ok: u64,
    pub failed: u64,
    pub failures: BTreeMap<String, u64>,
    /// Payments a second the load scheduled then (open loop); None in a closed loop.
    pub scheduled: Option<f64>,
}

/// Payments in one window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Window {
    pub from_s: f64,
    pub to_s: f64,
    pub ok: u64,
    pub failed: u64,
    pub tps: f64,
    /// Failures by reason (`no_route`, `timeout`, ...), nonzero ones only.
    pub failures_by_reason: BTreeMap<String, u64>,
}

/// A fault's windows (flattened into its record).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct FaultWindows {
    pub before: Option<Window>,
    pub during: Option<Window>,
    pub after: Option<Window>,
    /// Seconds from the fault's end until TPS was back within 10 % of `baseline_tps`.
    pub recovered_after_s: Option<f64>,
    /// What recovery is measured against: `before`'s TPS, or the rate scheduled in
    /// `before` when that was lower (None: no baseline).
    pub baseline_tps: Option<f64>,
    /// Failures by `timeout` during and after the fault: payments the tool stopped
    /// waiting for, whose outcome stayed unknown to it.
    pub unknown_outcome: u64,
}

/// The sample nearest `t` (the runner also samples at each fault's beginning and end,
/// so those are exact).
fn at(samples: &[Sample], t: f64) -> Option<&Sample> {
    let i = samples.partition_point(|s| s.at_s <= t);
    let before = i.checked_sub(1).and_then(|j| samples.get(j));
    match (before, samples.get(i)) {
        (Some(a), Some(b)) if (b.at_s - t) < (t - a.at_s) => Some(b),
        (Some(a), _) => Some(a),
        (None, b) => b,
    }
}

/// Payments between the samples nearest `from` and `to`.
pub fn window(samples: &[Sample], from: f64, to: f64) -> Option<Window> {
    let (a, b) = (at(samples, from)?, at(samples, to)?);
    let span = b.at_s - a.at_s;
    if span <= 0.0 {
        return None;
    }
    let failures = (b.failures.iter())
        .map(|(k, n)| {
            (
                k.clone(),
                n - a.failures.get(k).copied().unwrap_or(0).min(*n),
            )
        })
        .filter(|(_, n)| *n > 0)
        .collect();
    let ok = b.ok.saturating_sub(a.ok);
    Some(Window {
        from_s: a.at_s,
        to_s: b.at_s,
        ok,
        failed: b.failed.saturating_sub(a.failed),
        tps: ok as f64 / span,
        failures_by_reason: failures,
    })
}

/// Fills each record's windows; `end_s` is when the load ended.
pub fn fill(records: &mut [super::FaultRecord], samples: &[Sample], end_s: f64) {
    let ends: Vec<Option<f64>> = records.iter().map(|r| r.ended_s).collect();
    let begins: Vec<Option<f64>> = records.iter().map(|r| r.began_s).collect();
    for (i, r) in records.iter_mut().enumerate() {
        let Some(began) = r.began_s else { continue };
        // The previous fault still weighing on the baseline: the latest end before this.
        let prev_end = (ends.iter().enumerate())
            .filter(|(j, e)| *j != i && e.is_some_and(|e| e <= began))
            .filter_map(|(_, e)| *e)
            .fold(0.0, f64::max);
        let from = (began - BEFORE).max(prev_end).max(0.0);
        let before = (began - from >= MIN_BASELINE)
            .then(|| window(samples, from, began))
            .flatten();
        let lifted = r.ended_s.unwrap_or(end_s).min(end_s);
        let during = (lifted - began > 0.5)
            .then(|| window(samples, began, lifted))
            .flatten();
        let next_begin = (begins.iter().enumerate())
            .filter(|(j, b)| *j != i && b.is_some_and(|b| b > lifted))
            .filter_map(|(_, b)| *b)
            .fold(end_s, f64::min);
        let after = r
            .ended_s
            .filter(|_| next_begin - lifted > 0.5)
            .and_then(|_| window(samples, lifted, next_begin));
        let baseline_tps = before.as_ref().map(|b| baseline(samples, b));
        let recovered_after_s = match (baseline_tps, r.ended_s) {
            (Some(b), Some(end)) if b > 0.0 => recovery(samples, end, end_s, b),
            _ => None,
        };
        let timeouts = |w: &Option<Window>| {
            w.as_ref()
                .and_then(|w| w.failures_by_reason.get("timeout").copied())
                .unwrap_or(0)
        };
        r.windows = FaultWindows {
            unknown_outcome: timeouts(&during) + timeouts(&after),
            before,
            during,
            after,
            recovered_after_s,
            baseline_tps,
        };
    }
}

/// The TPS a fault's recovery is measured against: `before`'s, capped at the highest
/// rate the load scheduled in it when every sample there had one (an open loop).
fn baseline(samples: &[Sample], before: &Window) -> f64 {
    let span = samples
        .iter()
        .filter(|s| (before.from_s..=before.to_s).contains(&s.at_s));
    let rates: Option<Vec<f64>> = span.map(|s| s.scheduled).collect();
    match rates.and_then(|r| r.into_iter().reduce(f64::max)) {
        Some(rate) if rate > 0.0 => before.tps.min(rate),
        _ => before.tps,
    }
}

/// Seconds from `end` until the first [`RECOVERY_SPAN`] span (starting at a sample)
/// whose TPS is at least 90 % of `baseline`.
pub fn recovery(samples: &[Sample], end: f64, load_end: f64, baseline: f64) -> Option<f64> {
    let start = samples.partition_point(|s| s.at_s < end).saturating_sub(1);
    for s in &samples[start..] {
        if s.at_s + RECOVERY_SPAN > load_end + 0.5 {
            break;
        }
        let w = window(samples, s.at_s, s.at_s + RECOVERY_SPAN)?;
        if w.to_s - w.from_s >= RECOVERY_SPAN - 0.5 && w.tps >= 0.9 * baseline {
            return Some((s.at_s - end).max(0.0));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One sample a second; `tps(t)` payments in the second ending at t, failures by
    /// `timeout` where `fail(t)`.
    fn samples(n: u32, tps: impl Fn(u32) -> u64, fail: impl Fn(u32) -> u64) -> Vec<Sample> {
        let (mut ok, mut failed) = (0, 0);
        (0..=n)
            .map(|t| {
                if t > 0 {
                    ok += tps(t);
                    failed += fail(t);
                }
                Sample {
                    at_s: f64::from(t),
                    ok,
                    failed,
                    failures: BTreeMap::from([("timeout".to_string(), failed)]),
                    scheduled: None,
                }
            })
            .collect()
    }

    fn record(began: f64, ended: Option<f64>) -> crate::faults::FaultRecord {
        crate::faults::FaultRecord {
            label: "kill bob".into(),
            kind: "kill".into(),
            target: "bob".into(),
            began_s: Some(began),
            ended_s: ended,
            links: None,
            node_back: None,
            chain_back: None,
            chain_height: None,
            error: None,
            windows: FaultWindows::default(),
        }
    }

    #[test]
    fn before_during_after_and_recovery_of_a_dip() {
        // 20 TPS; nothing from 20 s to 30 s (2 timeouts a second); 10 TPS for 4 s
        // after, then 20 again from 34 s.
        let s = samples(
            60,
            |t| match t {
                21..=30 => 0,
                31..=34 => 10,
                _ => 20,
            },
            |t| if (21..=30).contains(&t) { 2 } else { 0 },
        );
        let mut r = [record(20.0, Some(30.0))];
        fill(&mut r, &s, 60.0);
        let w = &r[0].windows;
        let before = w.before.as_ref().unwrap();
        assert_eq!((before.from_s, before.to_s, before.ok), (10.0, 20.0, 200));
        assert!((before.tps - 20.0).abs() < 1e-9);
        let during = w.during.as_ref().unwrap();
        assert_eq!((during.ok, during.failed), (0, 20));
        assert_eq!(during.failures_by_reason.get("timeout"), Some(&20));
        let after = w.after.as_ref().unwrap();
        assert_eq!(
            (after.from_s, after.to_s, after.ok),
            (30.0, 60.0, 40 + 26 * 20)
        );
        // The first 3 s span at >= 18 TPS starts at 34 s: 4 s after the end.
        assert_eq!(w.recovered_after_s, Some(4.0));
        assert_eq!(w.unknown_outcome, 20);
    }

    /// Payments an earlier fault held end in a burst above the scheduled rate (seen
    /// with LDK: 17 TPS at a rate of 10): the baseline is the rate, which the load
    /// comes back to, not the burst. In a closed loop (no rate) it stays the burst.
    #[test]
    fn a_burst_above_the_scheduled_rate_is_no_baseline() {
        let tps = |t| match t {
            11..=20 => 17,
            21..=30 => 0,
            _ => 10,
        };
        let mut s = samples(60, tps, |_| 0);
        let mut closed = [record(20.0, Some(30.0))];
        fill(&mut closed, &s, 60.0);
        assert!((closed[0].windows.baseline_tps.unwrap() - 17.0).abs() < 1e-9);
        assert_eq!(closed[0].windows.recovered_after_s, None);

        for sample in &mut s {
            sample.scheduled = Some(10.0);
        }
        let mut open = [record(20.0, Some(30.0))];
        fill(&mut open, &s, 60.0);
        let w = &open[0].windows;
        assert!((w.before.as_ref().unwrap().tps - 17.0).abs() < 1e-9);
        assert_eq!(w.baseline_tps, Some(10.0));
        assert_eq!(w.recovered_after_s, Some(0.0));

        // One sample without a rate (a closed-loop phase): before's TPS stands.
        s[15].scheduled = None;
        let mut mixed = [record(20.0, Some(30.0))];
        fill(&mut mixed, &s, 60.0);
        assert_eq!(mixed[0].windows.recovered_after_s, None);
    }

    #[test]
    fn a_fault_never_lifted_has_no_after_and_no_recovery() {
        let s = samples(40, |t| if t > 20 { 0 } else { 20 }, |_| 0);
        let mut r = [record(20.0, None)];
        fill(&mut r, &s, 40.0);
        let w = &r[0].windows;
        assert!(w.before.is_some());
        assert_eq!(w.during.as_ref().unwrap().ok, 0);
        assert!(w.after.is_none());
        assert_eq!(w.recovered_after_s, None);
    }

    #[test]
    fn no_recovery_when_tps_stays_low() {
        let s = samples(60, |t| if t > 20 { 15 } else { 20 }, |_| 0);
        let mut r = [record(20.0, Some(25.0))];
        fill(&mut r, &s, 60.0);
        assert_eq!(r[0].windows.recovered_after_s, None);
    }

    #[test]
    fn the_baseline_starts_after_the_previous_fault() {
        let s = samples(60, |_| 10, |_| 0);
        let mut r = [record(5.0, Some(15.0)), record(20.0, Some(25.0))];
        fill(&mut r, &s, 60.0);
        // The second's baseline is 15..20, not 10..20.
        assert_eq!(r[1].windows.before.as_ref().unwrap().from_s, 15.0);
        // The first's after window ends where the second begins.
        assert_eq!(r[0].windows.after.as_ref().unwrap().to_s, 20.0);
        // Too little time before the first (5 s from the start: enough) ...
        assert!(r[0].windows.before.is_some());
        // ... and none at all for a fault at 1 s.
        let mut early = [record(1.0, Some(3.0))];
        fill(&mut early, &s, 60.0);
        assert!(early[0].windows.before.is_none());
    }

    #[test]
    fn the_line_printed_for_a_fault_shows_no_secret_of_the_run() {
        let secret = "3e8b1f0c6a2d9e47";
        crate::redact::register_secret(secret);
        let mut r = record(1.0, Some(3.0));
        r.error = Some(format!(
            "restart: bob did not start; last lines: key {secret}"
        ));
        let line = crate::faults::describe(&r);
        assert!(line.contains("error: restart: bob did not start"), "{line}");
        assert!(!line.contains(secret), "{line}");
    }
}
