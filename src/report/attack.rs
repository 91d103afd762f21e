//! The jamming section of report.html and summary.md (`results.attack`): the attack in one line, the
//! honest payments before, during and after it, and the slots held each second.

use super::format::cell;
use super::format::latency_us;
use super::section::{self, Section};
use crate::metrics::Summary;
use crate::metrics::attack::{AttackSummary, AttackWindow};
use serde::Serialize;
use std::fmt::Write as _;

const HTML: &str = r#"<p>{{ line }}</p>
<table>
<tr><th>honest payments</th><th>from</th><th>to</th><th>ok</th><th>failed</th><th>TPS</th><th>p50</th><th>p99</th><th>failures by reason</th></tr>
{% for row in windows %}<tr>{% for c in row %}<td>{{ c }}</td>{% endfor %}</tr>
{% endfor %}</table>
<p class="muted">Slots held, second by second: {{ slots_held|join(" ") }}</p>
{% if accomplice %}<p class="muted">{{ accomplice }}</p>
{% endif %}"#;

/// The section's figures, formatted.
#[derive(Serialize)]
struct AttackView {
    /// The attack in one sentence.
    line: String,
    /// The honest payments before, during and after it.
    windows: [[String; 9]; 3],
    slots_held: Vec<u32>,
    /// The accomplice's own count, when it gave one.
    accomplice: Option<String>,
}

/// The section, or None for a run without an attack.
pub(super) fn section(results: &Summary) -> Option<Box<dyn Section>> {
    results.attack.as_ref().map(|a| Box::new(view(a)) as _)
}

fn view(a: &AttackSummary) -> AttackView {
    AttackView {
        line: line(a),
        windows: [
            cells("before", &a.before),
            cells("during", &a.during),
            cells("after", &a.after),
        ],
        slots_held: a.slots_held.clone(),
        accomplice: node_line(a),
    }
}

impl Section for AttackView {
    fn id(&self) -> &'static str {
        "attack"
    }

    fn title(&self) -> &'static str {
        "Jamming"
    }

    fn html(&self) -> anyhow::Result<String> {
        section::html(self.id(), HTML, self)
    }

    /// The line and the honest windows.
    fn markdown(&self) -> String {
        let mut out = format!(
            "\nJamming: {}\n\n| honest payments | from | to | ok | failed | TPS | p50 | p99 | \
             failures by reason |\n|---|---|---|---|---|---|---|---|---|\n",
            cell(&self.line)
        );
        for window in &self.windows {
            let row: Vec<String> = window.iter().map(|c| cell(c)).collect();
            let _ = writeln!(out, "| {} |", row.join(" | "));
        }
        if let Some(words) = &self.accomplice {
            let _ = writeln!(out, "\n{}", cell(words));
        }
        out
    }
}

/// The accomplice's own count beside the tool's, when it gave one.
fn node_line(a: &AttackSummary) -> Option<String> {
    let most = a.accomplice_pending_htlcs.iter().flatten().max();
    if most.is_none() && a.accomplice_pending_after.is_none() {
        return None;
    }
    let seconds: Vec<String> = (a.accomplice_pending_htlcs.iter())
        .map(|n| n.map_or("-".to_string(), |n| n.to_string()))
        .collect();
    let after =
        (a.accomplice_pending_after).map_or("did not answer".to_string(), |n| n.to_string());
    Some(format!(
        "{}'s own count of HTLCs in flight, asked right after each second's: {} (most {}); \
         after the attack: {after}.",
        a.accomplice,
        seconds.join(" "),
        most.copied().unwrap_or(0)
    ))
}

/// The attack in one sentence: who, how many slots, the window, the cost.
fn line(a: &AttackSummary) -> String {
    let mut line = format!(
        "{} held up to {} of {} slots ({} msat each, {:.0} s per HTLC) through hold invoices \
         of {} from {:.0} s to {:.0} s: {} HTLCs held, {} cancelled; it locked {:.0} msat*s \
         and paid {} msat in fees.",
        a.attacker,
        a.slots_held_max,
        a.slots_target,
        a.amount_msat,
        a.hold_s,
        a.accomplice,
        a.start_s,
        a.end_s,
        a.accepted,
        a.cancelled,
        a.cost.locked_msat_s,
        a.cost.fees_paid_msat
    );
    if !a.missed_by_reason.is_empty() {
        let why: Vec<String> = (a.missed_by_reason.iter())
            .map(|(reason, n)| format!("{reason} {n}"))
            .collect();
        let missed: u64 = a.missed_by_reason.values().sum();
        let _ = write!(
            line,
            " {missed} of its payments did not reach {} ({}).",
            a.accomplice,
            why.join(", ")
        );
    }
    if a.left_held > 0 || a.cancel_errors > 0 {
        let _ = write!(
            line,
            " {} cancels failed; {} slots may still be held.",
            a.cancel_errors, a.left_held
        );
    }
    line
}

/// A window's cells: name, from, to, ok, failed, TPS, p50, p99, failures by reason.
fn cells(name: &str, w: &AttackWindow) -> [String; 9] {
    let reasons: Vec<String> = (w.failures_by_reason.iter())
        .map(|(reason, n)| format!("{reason} {n}"))
        .collect();
    [
        name.to_string(),
        format!("{:.1} s", w.from_s),
        format!("{:.1} s", w.to_s),
        w.ok.to_string(),
        w.failed.to_string(),
        format!("{:.2}", w.tps),
        latency_us(w.latency.p50_us),
        latency_us(w.latency.p99_us),
        reasons.join(", "),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::FailureKind;
    use crate::metrics::attack::AttackStats;
    use crate::node::FailureReason;
    use std::time::Duration;

    fn line_of(stats: &AttackStats) -> String {
        line(&stats.summary(("mallory", "eve"), 4, 10_000, Duration::from_secs(5), 30.0))
    }

    #[test]
    fn the_attack_reads_as_a_line_and_a_row_per_window() {
        let stats = AttackStats::new(Duration::from_secs(10), Duration::from_secs(20));
        stats.record(
            Duration::from_secs(12),
            Err(FailureKind::Node(FailureReason::NoRoute)),
        );
        stats.hold();
        stats.sample(0);
        let a = stats.summary(("mallory", "eve"), 4, 10_000, Duration::from_secs(5), 30.0);
        let line = line(&a);
        assert!(
            line.starts_with("mallory held up to 1 of 4 slots"),
            "{line}"
        );
        assert!(
            line.contains("hold invoices of eve from 10 s to 20 s"),
            "{line}"
        );
        assert!(line.contains("1 slots may still be held"), "{line}");
        assert!(!line.contains("did not reach"), "{line}");
        stats.miss("no_route");
        stats.miss("no_route");
        stats.miss("not_held");
        let missed = line_of(&stats);
        assert!(
            missed.contains(" 3 of its payments did not reach eve (no_route 2, not_held 1)."),
            "{missed}"
        );
        let html = view(&a).html().unwrap();
        assert!(html.contains("<td>no_route 1</td>"), "{html}");
        let md = view(&a).markdown();
        assert!(
            md.starts_with("\nJamming: mallory held up to 1 of 4 slots"),
            "{md}"
        );
        assert!(
            md.contains("| during | 10.0 s | 20.0 s | 0 | 1 |") && md.contains("no\\_route 1 |"),
            "{md}"
        );
        assert_eq!(node_line(&a), None, "the accomplice was not asked");
        stats.sample_accomplice(0, Some(1));
        stats.sample_accomplice(2, Some(0));
        stats.accomplice_after(Some(0));
        let a = stats.summary(("mallory", "eve"), 4, 10_000, Duration::from_secs(5), 30.0);
        let words = node_line(&a).unwrap();
        assert_eq!(
            words,
            "eve's own count of HTLCs in flight, asked right after each second's: 1 - 0 \
             (most 1); after the attack: 0."
        );
        assert!(view(&a).markdown().contains("eve's own count"));
    }
}
