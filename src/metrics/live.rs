//! What the workloads beside the payments show while the load runs, in the live view
//! and the headless progress lines: the HTLC slots an attack holds now, and a
//! stream's ticks by outcome so far. The engine hands the recorder where to read
//! them; each snapshot reads them afresh.

use super::attack::AttackStats;
use super::rebalance::RebalanceStats;
use super::stream::StreamSummary;
use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// Where the live figures are read from (nothing without an attack or a stream).
#[derive(Debug, Default)]
pub(super) struct LiveSources {
    pub attack: Option<(Arc<AttackStats>, u32)>,
    pub stream: Option<Arc<Mutex<StreamSummary>>>,
    pub rebalance: Option<Arc<RebalanceStats>>,
}

/// The live figures of one snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LiveFigures {
    /// `workload: attack:`: HTLCs the accomplice holds now, and the attack's target.
    pub attack: Option<(u32, u32)>,
    /// `kind: stream`: measured ticks so far.
    pub streams: Option<StreamTicks>,
    /// `workload: rebalance:`: rebalances succeeded and sent so far, and their fees.
    pub rebalances: Option<(u64, u64, u64)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StreamTicks {
    pub ok: u64,
    pub partial: u64,
    pub failed: u64,
}

impl LiveSources {
    pub(super) fn read(&self) -> LiveFigures {
        LiveFigures {
            attack: (self.attack.as_ref())
                .map(|(s, target)| (s.held.load(Ordering::Relaxed), *target)),
            streams: self.stream.as_ref().map(|s| {
                let s = s.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                StreamTicks {
                    ok: s.ticks_ok,
                    partial: s.ticks_partial,
                    failed: s.ticks_failed,
                }
            }),
            rebalances: self.rebalance.as_ref().map(|r| r.so_far()),
        }
    }
}

impl LiveFigures {
    /// `attack 6/6 slots held   streams 120 ok · 3 partial · 0 failed`, or empty.
    pub fn line(&self) -> String {
        let mut out = String::new();
        if let Some((held, target)) = self.attack {
            let _ = write!(out, "attack {held}/{target} slots held");
        }
        if let Some(t) = self.streams {
            if !out.is_empty() {
                out.push_str("   ");
            }
            let _ = write!(
                out,
                "streams {} ok · {} partial · {} failed",
                t.ok, t.partial, t.failed
            );
        }
        if let Some((ok, sent, fees_msat)) = self.rebalances {
            if !out.is_empty() {
                out.push_str("   ");
            }
            let _ = write!(out, "rebalances {ok}/{sent} ok · {fees_msat} msat fees");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_what_runs_and_nothing_else() {
        assert_eq!(LiveFigures::default().line(), "");
        let stats = Arc::new(AttackStats::new(
            std::time::Duration::ZERO,
            std::time::Duration::from_secs(1),
        ));
        stats.hold();
        stats.hold();
        let summary = StreamSummary {
            ticks_ok: 7,
            ticks_partial: 2,
            ..Default::default()
        };
        let sources = LiveSources {
            attack: Some((stats, 6)),
            stream: Some(Arc::new(Mutex::new(summary))),
            rebalance: None,
        };
        let live = sources.read();
        assert_eq!(live.attack, Some((2, 6)));
        assert_eq!(
            live.line(),
            "attack 2/6 slots held   streams 7 ok · 2 partial · 0 failed"
        );
        let second = std::time::Duration::from_secs(1);
        let r = Arc::new(RebalanceStats::new(("a", "b", "c"), 1_000, second, None, 9));
        let ok = super::super::rebalance::TryResult::Succeeded { fee_msat: 4 };
        r.record(second, second, None, ok);
        r.record(
            second,
            second,
            None,
            super::super::rebalance::TryResult::Error,
        );
        let only = LiveSources {
            rebalance: Some(r),
            ..Default::default()
        };
        assert_eq!(only.read().line(), "rebalances 1/2 ok · 4 msat fees");
    }
}
