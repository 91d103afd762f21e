//! What the workloads beside the payments show while the load runs, in the live view
//! and the headless progress lines (an attack's slots held now, a stream's ticks so
//! far, the rebalances). Each workload's figures offer a [`LiveSource`]; the engine
//! hands the recorder the sources of the run, and each snapshot reads them afresh.
//! This file names no workload.

use std::sync::Arc;

/// One workload's live figure: its words, and whether it is bad news (an attack
/// holding slots), which the live view marks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveFigure {
    pub text: String,
    pub alarm: bool,
}

/// Where a workload's live figure is read from.
pub trait LiveSource: Send + Sync + std::fmt::Debug {
    fn read(&self) -> LiveFigure;
}

/// The run's live sources, in the order the engine handed them.
#[derive(Debug, Default)]
pub(super) struct LiveSources(pub Vec<Arc<dyn LiveSource>>);

/// The live figures of one snapshot (none for a plain load).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LiveFigures(pub Vec<LiveFigure>);

impl LiveSources {
    pub(super) fn read(&self) -> LiveFigures {
        LiveFigures(self.0.iter().map(|s| s.read()).collect())
    }
}

impl LiveFigures {
    /// `attack 6/6 slots held   streams 120 ok · 3 partial · 0 failed`, or empty.
    pub fn line(&self) -> String {
        let texts: Vec<&str> = self.0.iter().map(|f| f.text.as_str()).collect();
        texts.join("   ")
    }

    /// Whether a figure is bad news.
    pub fn alarm(&self) -> bool {
        self.0.iter().any(|f| f.alarm)
    }
}

#[cfg(test)]
mod tests {
    use super::super::attack::{AttackLive, AttackStats};
    use super::super::rebalance::{RebalanceStats, TryResult};
    use super::super::stream::StreamSummary;
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn the_line_names_what_runs_and_nothing_else() {
        assert_eq!(LiveSources::default().read().line(), "");
        let stats = Arc::new(AttackStats::new(
            std::time::Duration::ZERO,
            std::time::Duration::from_secs(1),
        ));
        let attack = Arc::new(AttackLive::new(stats.clone(), 6));
        let idle = LiveSources(vec![attack.clone()]).read();
        assert_eq!(
            (idle.line().as_str(), idle.alarm()),
            ("attack 0/6 slots held", false)
        );
        stats.hold();
        stats.hold();
        let summary = StreamSummary {
            ticks_ok: 7,
            ticks_partial: 2,
            ..Default::default()
        };
        let sources = LiveSources(vec![attack, Arc::new(Mutex::new(summary))]);
        let live = sources.read();
        assert!(live.alarm(), "slots held are bad news");
        assert_eq!(
            live.line(),
            "attack 2/6 slots held   streams 7 ok · 2 partial · 0 failed"
        );
        let second = std::time::Duration::from_secs(1);
        let r = Arc::new(RebalanceStats::new(("a", "b", "c"), 1_000, second, None, 9));
        r.record(second, second, None, TryResult::Succeeded { fee_msat: 4 });
        r.record(second, second, None, TryResult::Error);
        let only = LiveSources(vec![r]).read();
        assert_eq!(only.line(), "rebalances 1/2 ok · 4 msat fees");
        assert!(!only.alarm());
    }
}
