//! Multi-part payments and draining channels: the figures the engine gathers beside
//! the recorder's, and the report's `results.parts` and `results.drain`.

use super::Percentiles;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// `results.parts`: the measured payments of a workload with `max_parts:`, by how
/// many parts settled them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartsSummary {
    /// The sender's part limit (`workload: max_parts:`).
    pub max_parts: u32,
    /// Succeeded payments whose HTLCs the node listed.
    pub payments: u64,
    /// Succeeded payments the node gave no HTLCs for (not in `by_parts`).
    pub unknown: u64,
    /// Of `payments`: those with more than one HTLC attempt (split, or retried).
    pub more_than_one_attempt: u64,
    /// `more_than_one_attempt / payments` (0 without payments).
    pub more_than_one_attempt_share: f64,
    /// Of `payments`: those with more HTLC attempts than settled parts, so at least
    /// one part failed and was tried again.
    pub retried: u64,
    /// `retried / payments` (0 without payments).
    pub retried_share: f64,
    /// Of `payments`: those split in more than one part.
    pub multi_part: u64,
    /// One row per number of parts, ascending.
    pub by_parts: Vec<PartsRow>,
}

/// The payments settled in `parts` parts and their latency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartsRow {
    pub parts: u32,
    pub payments: u64,
    /// HTLC attempts over these payments (parts and failed tries).
    pub attempts: u64,
    pub latency: Percentiles,
}

/// `results.drain`: the load of a workload with `stop: liquidity_failures:`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DrainSummary {
    /// The stop's limit.
    pub stop_after: u64,
    /// Measured payments that failed for lack of liquidity (`no_route`,
    /// `insufficient_balance`).
    pub liquidity_failures: u64,
    /// Seconds from the start of the load to the end of the first such failure; None
    /// when the channels never ran dry.
    pub first_liquidity_failure_s: Option<f64>,
}

/// Gathers [`PartsRow`]s from the workers.
#[derive(Debug)]
pub struct PartsStats {
    max_parts: u32,
    unknown: AtomicU64,
    rows: Mutex<BTreeMap<u32, Row>>,
}

#[derive(Debug)]
struct Row {
    attempts: u64,
    more_than_one_attempt: u64,
    retried: u64,
    latency: Histogram<u64>,
}

impl PartsStats {
    pub fn new(max_parts: u32) -> Self {
        PartsStats {
            max_parts,
            unknown: AtomicU64::new(0),
            rows: Mutex::new(BTreeMap::new()),
        }
    }

    /// One succeeded payment: its parts and attempts when the node told them.
    pub fn record(&self, parts: Option<(u32, u32)>, latency: Duration) {
        let Some((settled, attempts)) = parts else {
            self.unknown.fetch_add(1, Ordering::Relaxed);
            return;
        };
        let mut rows = self.rows.lock().unwrap_or_else(|e| e.into_inner());
        let row = rows.entry(settled).or_insert_with(|| Row {
            attempts: 0,
            more_than_one_attempt: 0,
            retried: 0,
            latency: Histogram::new_with_bounds(1, 600_000_000, 3)
                .expect("constant histogram bounds are valid"),
        });
        row.attempts += u64::from(attempts);
        row.more_than_one_attempt += u64::from(attempts > 1);
        row.retried += u64::from(attempts > settled);
        let us = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        row.latency.saturating_record(us.max(1));
    }

    pub fn summary(&self) -> PartsSummary {
        let rows = self.rows.lock().unwrap_or_else(|e| e.into_inner());
        let by_parts: Vec<PartsRow> = (rows.iter())
            .map(|(parts, row)| PartsRow {
                parts: *parts,
                payments: row.latency.len(),
                attempts: row.attempts,
                latency: Percentiles::of(&row.latency),
            })
            .collect();
        let payments = by_parts.iter().map(|r| r.payments).sum();
        let more_than_one_attempt = rows.values().map(|r| r.more_than_one_attempt).sum();
        let retried = rows.values().map(|r| r.retried).sum();
        let multi_part = (by_parts.iter())
            .filter(|r| r.parts > 1)
            .map(|r| r.payments)
            .sum();
        PartsSummary {
            max_parts: self.max_parts,
            payments,
            unknown: self.unknown.load(Ordering::Relaxed),
            more_than_one_attempt,
            more_than_one_attempt_share: share(more_than_one_attempt, payments),
            retried,
            retried_share: share(retried, payments),
            multi_part,
            by_parts,
        }
    }
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// Counts liquidity failures and keeps the time of the first.
#[derive(Debug)]
pub struct DrainWatch {
    stop_after: u64,
    failures: AtomicU64,
    first: OnceLock<Duration>,
}

impl DrainWatch {
    pub fn new(stop_after: u64) -> Self {
        DrainWatch {
            stop_after,
            failures: AtomicU64::new(0),
            first: OnceLock::new(),
        }
    }

    /// One liquidity failure, ended `at` on the run's clock (that of the series and
    /// events); true once the failures reach the stop's limit.
    pub fn record(&self, at: Duration) -> bool {
        let _ = self.first.set(at);
        self.failures.fetch_add(1, Ordering::AcqRel) + 1 >= self.stop_after
    }

    pub fn summary(&self) -> DrainSummary {
        DrainSummary {
            stop_after: self.stop_after,
            liquidity_failures: self.failures.load(Ordering::Acquire),
            first_liquidity_failure_s: self.first.get().map(Duration::as_secs_f64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_by_parts_count_attempts_and_shares() {
        let stats = PartsStats::new(8);
        stats.record(Some((1, 1)), Duration::from_millis(10));
        stats.record(Some((3, 3)), Duration::from_millis(30));
        stats.record(Some((3, 5)), Duration::from_millis(50));
        stats.record(None, Duration::from_millis(5));
        let s = stats.summary();
        assert_eq!((s.max_parts, s.payments, s.unknown), (8, 3, 1));
        assert_eq!((s.multi_part, s.more_than_one_attempt), (2, 2));
        assert!((s.more_than_one_attempt_share - 2.0 / 3.0).abs() < 1e-9);
        // Split in 3 and settled at the first try is not retried; 5 attempts for 3 is.
        assert_eq!(s.retried, 1);
        assert!((s.retried_share - 1.0 / 3.0).abs() < 1e-9);
        let parts: Vec<(u32, u64, u64)> = (s.by_parts.iter())
            .map(|r| (r.parts, r.payments, r.attempts))
            .collect();
        assert_eq!(parts, vec![(1, 1, 1), (3, 2, 8)]);
        assert!(s.by_parts[1].latency.max_us >= 49_000);
    }

    #[test]
    fn the_drain_keeps_the_first_failure_and_says_when_to_stop() {
        let watch = DrainWatch::new(2);
        assert_eq!(watch.summary().first_liquidity_failure_s, None);
        assert!(!watch.record(Duration::from_secs(3)));
        assert!(watch.record(Duration::from_secs(4)));
        let s = watch.summary();
        assert_eq!((s.stop_after, s.liquidity_failures), (2, 2));
        assert_eq!(s.first_liquidity_failure_s, Some(3.0));
    }
}
