//! The rebalancing's section of report.html and summary.md (`workload: rebalance:`,
//! `results.rebalance`): what the node paid itself around its circle, what it moved and
//! what it cost.

use super::format::cell;
use super::section::{self, Section};
use crate::metrics::Summary;
use crate::metrics::rebalance::RebalanceSummary;
use std::fmt::Write;

/// The section, or None for a run without rebalancing.
pub(super) fn section(results: &Summary) -> Option<Box<dyn Section>> {
    let r = results.rebalance.as_ref()?;
    Some(Box::new(RebalanceLines(rebalance_lines(r))))
}

/// The section's lines.
struct RebalanceLines(Vec<String>);

const HTML: &str = "{% for line in lines %}<p>{{ line }}</p>\n{% endfor %}";

impl Section for RebalanceLines {
    fn id(&self) -> &'static str {
        "rebalance"
    }

    fn title(&self) -> &'static str {
        "Rebalancing"
    }

    fn html(&self) -> anyhow::Result<String> {
        section::html(self.id(), HTML, minijinja::context! { lines => &self.0 })
    }

    /// Each line on its own, as "Rebalancing: ...".
    fn markdown(&self) -> String {
        let mut out = String::new();
        for line in &self.0 {
            let _ = writeln!(out, "\nRebalancing: {}", cell(line));
        }
        out
    }
}

/// The rebalancing's lines: what it moved and what it cost.
fn rebalance_lines(r: &RebalanceSummary) -> Vec<String> {
    let when = match r.below_sat {
        Some(below) => format!(
            ", while its balance toward {} was below {below} sat",
            r.last_hop
        ),
        None => String::new(),
    };
    let failed: u64 = r.failed_by_reason.values().sum();
    let reasons: Vec<String> = (r.failed_by_reason.iter())
        .map(|(why, n)| format!("{why} {n}"))
        .collect();
    let failed = match failed {
        0 => "none failed".to_string(),
        n => format!("{n} failed ({})", reasons.join(", ")),
    };
    let cost = match r.fee_ppm {
        Some(ppm) => format!(
            "moving {} sat for {} msat in fees ({ppm:.1} ppm)",
            r.moved_msat / 1_000,
            r.fees_paid_msat
        ),
        None => "moving nothing".to_string(),
    };
    let mut lines = vec![format!(
        "{node} paid itself {sent} times around {node} -> {first} -> ... -> {last} -> {node}, \
         {amount} sat each, due every {every} s{when}: {ok} succeeded, {cost}; {failed}; \
         {errors} calls unanswered.",
        node = r.node,
        sent = r.sent,
        first = r.first_hop,
        last = r.last_hop,
        amount = r.amount_msat / 1_000,
        every = r.every_s,
        ok = r.succeeded,
        errors = r.errors,
    )];
    if r.skipped > 0 {
        lines.push(format!(
            "{} of {} ticks paid nothing: the balance toward {} was not below the threshold \
             (or could not be read).",
            r.skipped, r.ticks, r.last_hop
        ));
    }
    lines.push(format!(
        "These payments are not in the load's figures, and the reconciliation takes them out of \
         {}'s ledger; each is listed in report.json (results.rebalance.tries).",
        r.node
    ));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rebalancing_reads_as_what_it_moved_and_cost() {
        use crate::metrics::rebalance::RebalanceStats;
        use crate::metrics::rebalance::TryResult::{Failed, Succeeded};
        use std::time::Duration;
        let s = Duration::from_secs;
        let stats = RebalanceStats::new(
            ("alice", "carol", "bob"),
            500_000_000,
            s(10),
            Some(1_000_000),
            500_000,
        );
        stats.tick(true);
        for (at, result) in [
            (10, Succeeded { fee_msat: 3_000 }),
            (20, Failed("no_route")),
        ] {
            stats.tick(false);
            stats.record(s(at), s(1), Some(900_000), result);
        }
        let l = rebalance_lines(&stats.summary());
        assert!(l[0].starts_with("alice paid itself 2 times around alice -> carol -> ... -> bob -> alice, 500000 sat each, due every 10 s, while its balance toward bob was below 1000000 sat: 1 succeeded, moving 500000 sat for 3000 msat in fees (6.0 ppm); 1 failed (no_route 1); 0 calls unanswered."), "{l:?}");
        assert!(l[1].starts_with("1 of 3 ticks paid nothing"), "{l:?}");
        assert!(l[2].contains("takes them out of alice's ledger"), "{l:?}");
    }
}
