//! The jamming section of report.html and summary.md (`results.attack`): the attack in one line, the
//! honest payments before, during and after it, and the slots held each second.

use super::Report;
use super::format::cell;
use super::format::latency_us;
use crate::metrics::attack::{AttackSummary, AttackWindow};
use std::fmt::Write as _;

/// The section's HTML, or None for a run without an attack.
pub fn section(report: &Report) -> Option<String> {
    let a = report.results.attack.as_ref()?;
    let mut html = String::from("<section id=\"attack\">\n<h2>Jamming</h2>\n");
    let _ = writeln!(html, "<p>{}</p>", escape(&line(a)));
    html.push_str(
        "<table>\n<tr><th>honest payments</th><th>from</th><th>to</th><th>ok</th><th>failed</th>\
         <th>TPS</th><th>p50</th><th>p99</th><th>failures by reason</th></tr>\n",
    );
    for (name, w) in [
        ("before", &a.before),
        ("during", &a.during),
        ("after", &a.after),
    ] {
        let _ = writeln!(html, "{}", row(name, w));
    }
    html.push_str("</table>\n");
    let held: Vec<String> = a.slots_held.iter().map(u32::to_string).collect();
    let _ = writeln!(
        html,
        "<p class=\"muted\">Slots held, second by second: {}</p>",
        held.join(" ")
    );
    if let Some(words) = node_line(a) {
        let _ = writeln!(html, "<p class=\"muted\">{}</p>", escape(&words));
    }
    html.push_str("</section>\n");
    Some(html)
}

/// The accomplice's own count beside the tool's, when it gave one.
pub fn node_line(a: &AttackSummary) -> Option<String> {
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
pub fn line(a: &AttackSummary) -> String {
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

fn row(name: &str, w: &AttackWindow) -> String {
    let tds: Vec<String> = (cells(name, w).iter())
        .map(|c| format!("<td>{}</td>", escape(c)))
        .collect();
    format!("<tr>{}</tr>", tds.concat())
}

/// `summary.md`'s jamming section: the line and the honest windows, or nothing.
pub fn markdown(report: &Report) -> String {
    report
        .results
        .attack
        .as_ref()
        .map_or(String::new(), markdown_of)
}

fn markdown_of(a: &AttackSummary) -> String {
    let mut out = format!(
        "\nJamming: {}\n\n| honest payments | from | to | ok | failed | TPS | p50 | p99 | \
         failures by reason |\n|---|---|---|---|---|---|---|---|---|\n",
        cell(&line(a))
    );
    for (name, w) in [
        ("before", &a.before),
        ("during", &a.during),
        ("after", &a.after),
    ] {
        let row: Vec<String> = cells(name, w).iter().map(|c| cell(c)).collect();
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    if let Some(words) = node_line(a) {
        let _ = writeln!(out, "\n{}", cell(&words));
    }
    out
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
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
        let during = row("during", &a.during);
        assert!(during.contains("<td>no_route 1</td>"), "{during}");
        let md = markdown_of(&a);
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
        assert!(markdown_of(&a).contains("eve's own count"));
    }
}
