//! `history:`'s phase as a report holds it (`report.history`, and each sweep
//! point's `history`): what the network had paid before the measured load, and what
//! the unmeasured phase that brought it there did.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryPhase {
    /// Payments the scenario asked the network to have made before the load.
    pub target: u64,
    /// Payments the tool had made on this network when the phase began (earlier
    /// history phases and measured loads of the run).
    pub before: u64,
    /// Paid by the phase.
    pub paid: u64,
    /// Failed during the phase (not counted toward the target).
    pub failed: u64,
    /// The phase's failures by reason.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failures_by_reason: BTreeMap<String, u64>,
    /// How long the phase took, and its payments per second.
    pub seconds: f64,
    pub tps: f64,
    /// Payments in flight during the phase.
    pub concurrency: u32,
}

impl HistoryPhase {
    /// Payments made on the network when the measured load started.
    pub fn made(&self) -> u64 {
        self.before + self.paid
    }

    /// `timeout 3, no_route 1`: the phase's failures by reason.
    pub fn reasons(&self) -> String {
        let parts: Vec<String> = (self.failures_by_reason.iter())
            .map(|(r, n)| format!("{r} {n}"))
            .collect();
        parts.join(", ")
    }

    /// The report's line: `history: 10000 payments made before the load (9000 paid
    /// by the phase in 61 s, 147.5/s, 0 failed)`.
    pub fn line(&self) -> String {
        let failed = match self.failures_by_reason.is_empty() {
            true => format!("{} failed", self.failed),
            false => format!("{} failed: {}", self.failed, self.reasons()),
        };
        format!(
            "history: {} payments made before the load ({} paid by the phase in {:.0} s, {:.1}/s, {failed})",
            self.made(),
            self.paid,
            self.seconds,
            self.tps
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_counts_what_the_network_made_and_names_failures() {
        let mut h = HistoryPhase {
            target: 10_000,
            before: 1_000,
            paid: 9_000,
            failed: 3,
            failures_by_reason: BTreeMap::new(),
            seconds: 61.2,
            tps: 147.06,
            concurrency: 10,
        };
        h.failures_by_reason.insert("timeout".into(), 3);
        assert_eq!(h.made(), 10_000);
        assert_eq!(
            h.line(),
            "history: 10000 payments made before the load (9000 paid by the phase in 61 s, 147.1/s, 3 failed: timeout 3)"
        );
    }
}
