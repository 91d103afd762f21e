//! Circular rebalancing (`workload: rebalance:`): what the engine gathers about the
//! rebalancing node's payments to itself, and the report's `results.rebalance`.

use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

/// Most tries listed one by one in `tries` (later ones are counted only).
pub const MAX_LISTED: usize = 3_600;

/// `results.rebalance`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RebalanceSummary {
    /// The node paying itself, the peer each payment left through, and the peer it
    /// came back from.
    pub node: String,
    pub first_hop: String,
    pub last_hop: String,
    /// Each try's amount, how often one was due, the balance below which it ran, and
    /// the fee limit of one try.
    pub amount_msat: u64,
    pub every_s: f64,
    pub below_sat: Option<u64>,
    pub max_fee_msat: u64,
    /// Ticks that came, and those skipped because the balance toward `last_hop` was
    /// at or above `below_sat` (or could not be read).
    pub ticks: u64,
    pub skipped: u64,
    /// Payments to itself: sent, succeeded, failed by the node's reason, and calls
    /// the node did not answer (`errors`).
    pub sent: u64,
    pub succeeded: u64,
    pub failed_by_reason: BTreeMap<&'static str, u64>,
    pub errors: u64,
    /// What the succeeded ones moved to the channel with `last_hop`, and the routing
    /// fees they paid: the cost.
    pub moved_msat: u64,
    pub fees_paid_msat: u64,
    /// Fees per amount moved, in parts per million; None when nothing moved.
    pub fee_ppm: Option<f64>,
    /// Seconds from the load's start to the end of the first that succeeded.
    pub first_success_s: Option<f64>,
    /// The first [`MAX_LISTED`] payments, in order.
    pub tries: Vec<RebalanceTry>,
}

/// One payment to itself.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RebalanceTry {
    /// Seconds from the load's start to its start, and how long it took.
    pub start_s: f64,
    pub seconds: f64,
    /// `succeeded`, the node's failure reason (`no_route`, ...), or `error`.
    pub result: &'static str,
    pub fee_msat: Option<u64>,
    /// The node's balance toward `last_hop` just before, when read.
    pub balance_sat: Option<u64>,
}

/// What one payment to itself came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TryResult {
    Succeeded { fee_msat: u64 },
    Failed(&'static str),
    Error,
}

/// Gathers the figures of [`RebalanceSummary`] as the tries end.
#[derive(Debug)]
pub struct RebalanceStats {
    state: Mutex<RebalanceSummary>,
}

impl RebalanceStats {
    /// The summary's fixed part: who and how; the counts start at zero.
    pub fn new(
        (node, first_hop, last_hop): (&str, &str, &str),
        amount_msat: u64,
        every: Duration,
        below_sat: Option<u64>,
        max_fee_msat: u64,
    ) -> Self {
        let head = RebalanceSummary {
            node: node.to_string(),
            first_hop: first_hop.to_string(),
            last_hop: last_hop.to_string(),
            amount_msat,
            every_s: every.as_secs_f64(),
            below_sat,
            max_fee_msat,
            ticks: 0,
            skipped: 0,
            sent: 0,
            succeeded: 0,
            failed_by_reason: BTreeMap::new(),
            errors: 0,
            moved_msat: 0,
            fees_paid_msat: 0,
            fee_ppm: None,
            first_success_s: None,
            tries: Vec::new(),
        };
        RebalanceStats {
            state: Mutex::new(head),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut RebalanceSummary) -> T) -> T {
        f(&mut self.state.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// A tick came; `skipped` when the balance said no rebalance was needed.
    pub fn tick(&self, skipped: bool) {
        self.with(|s| {
            s.ticks += 1;
            s.skipped += u64::from(skipped);
        });
    }

    /// A payment to itself that started `start` into the load and took `took`.
    pub fn record(
        &self,
        start: Duration,
        took: Duration,
        balance_sat: Option<u64>,
        result: TryResult,
    ) {
        self.with(|s| {
            s.sent += 1;
            let (name, fee_msat) = match result {
                TryResult::Succeeded { fee_msat } => {
                    s.succeeded += 1;
                    s.moved_msat += s.amount_msat;
                    s.fees_paid_msat += fee_msat;
                    let end = (start + took).as_secs_f64();
                    s.first_success_s.get_or_insert(end);
                    ("succeeded", Some(fee_msat))
                }
                TryResult::Failed(reason) => {
                    *s.failed_by_reason.entry(reason).or_default() += 1;
                    (reason, None)
                }
                TryResult::Error => {
                    s.errors += 1;
                    ("error", None)
                }
            };
            if s.tries.len() < MAX_LISTED {
                s.tries.push(RebalanceTry {
                    start_s: start.as_secs_f64(),
                    seconds: took.as_secs_f64(),
                    result: name,
                    fee_msat,
                    balance_sat,
                });
            }
        });
    }

    /// Succeeded, sent and fees paid so far, for the live view.
    pub fn so_far(&self) -> (u64, u64, u64) {
        self.with(|s| (s.succeeded, s.sent, s.fees_paid_msat))
    }

    /// `results.rebalance` as it stands.
    pub fn summary(&self) -> RebalanceSummary {
        let mut s = self.with(|s| s.clone());
        s.fee_ppm = (s.moved_msat > 0).then(|| s.fees_paid_msat as f64 * 1e6 / s.moved_msat as f64);
        s
    }
}

/// The rebalancing's live figure: rebalances succeeded and sent so far, and their fees.
impl super::live::LiveSource for RebalanceStats {
    fn read(&self) -> super::live::LiveFigure {
        let (ok, sent, fees_msat) = self.so_far();
        super::live::LiveFigure {
            text: format!("rebalances {ok}/{sent} ok · {fees_msat} msat fees"),
            alarm: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cost_is_fees_over_what_moved_and_failures_keep_their_reason() {
        let stats = RebalanceStats::new(
            ("alice", "carol", "bob"),
            500_000_000,
            Duration::from_secs(10),
            Some(1_000_000),
            500_000,
        );
        let s = |secs: u64| Duration::from_secs(secs);
        stats.tick(true);
        stats.tick(false);
        stats.record(
            s(10),
            s(1),
            Some(900_000),
            TryResult::Succeeded { fee_msat: 3_000 },
        );
        stats.tick(false);
        stats.record(s(20), s(2), Some(700_000), TryResult::Failed("no_route"));
        stats.tick(false);
        stats.record(s(30), s(1), None, TryResult::Error);
        stats.tick(false);
        stats.record(
            s(40),
            s(3),
            Some(600_000),
            TryResult::Succeeded { fee_msat: 2_000 },
        );
        let r = stats.summary();
        assert_eq!(
            (r.ticks, r.skipped, r.sent, r.succeeded, r.errors),
            (5, 1, 4, 2, 1)
        );
        assert_eq!(r.failed_by_reason.get("no_route"), Some(&1));
        assert_eq!((r.moved_msat, r.fees_paid_msat), (1_000_000_000, 5_000));
        assert_eq!(r.fee_ppm, Some(5.0));
        assert_eq!(r.first_success_s, Some(11.0));
        let results: Vec<&str> = r.tries.iter().map(|t| t.result).collect();
        assert_eq!(results, ["succeeded", "no_route", "error", "succeeded"]);
        assert_eq!(r.tries[1].balance_sat, Some(700_000));
    }

    #[test]
    fn nothing_moved_has_no_fee_rate() {
        let stats = RebalanceStats::new(("a", "b", "c"), 1, Duration::from_secs(1), None, 1);
        stats.record(
            Duration::ZERO,
            Duration::ZERO,
            None,
            TryResult::Failed("timeout"),
        );
        assert_eq!(stats.summary().fee_ppm, None);
    }
}
