//! `summary.md`: the headline figures as a markdown table, for pasting into an issue
//! or a pull request.

use super::Report;
use super::format::{self, cell};
use anyhow::Result;
use std::fmt::Write;
use std::path::{Path, PathBuf};

pub const FILE_NAME: &str = "summary.md";

pub fn write(report: &Report, dir: &Path) -> Result<PathBuf> {
    super::write_file(dir, FILE_NAME, &render(report))
}

/// How the senders' payment ends were learned, once per distinct way:
/// `eclair: websocket event (payment-sent / payment-failed), exact`.
pub fn completion(report: &Report) -> String {
    let mut ways: Vec<String> = Vec::new();
    for n in report.nodes.iter().filter(|n| n.role == "sender") {
        if let Some(c) = &n.completion {
            let way = format!("{}: {}", n.implementation, c.describe());
            if !ways.contains(&way) {
                ways.push(way);
            }
        }
    }
    if ways.is_empty() {
        "not reported".into()
    } else {
        ways.join("; ")
    }
}

/// The headline rows of `summary.md`'s first table: (metric, value), unescaped.
fn headline_rows(report: &Report) -> [(&'static str, String); 11] {
    let r = &report.results;
    let l = &r.latency;
    let mut implementations: Vec<String> = Vec::new();
    for n in &report.nodes {
        let name = format!("{} {}", n.implementation, n.version);
        if !implementations.contains(&name) {
            implementations.push(name);
        }
    }
    let attempted = r.ok + r.failed;
    let failure_rate = if attempted > 0 {
        r.failed as f64 / attempted as f64
    } else {
        0.0
    };
    [
        ("scenario", report.scenario.name.clone()),
        ("implementation", implementations.join(", ")),
        ("kind", report.workload.kind.clone()),
        ("load", format::load(&report.workload)),
        (
            "ok / failed / indeterminate",
            format!(
                "{} / {} ({}) / {}",
                r.ok,
                r.failed,
                format::percent(failure_rate),
                r.indeterminate
            ),
        ),
        ("TPS (avg)", format::tps(r.tps_avg)),
        (
            "latency p50 / p99 / max",
            format!(
                "{} / {} / {}",
                format::latency_us(l.p50_us),
                format::latency_us(l.p99_us),
                format::latency_us(l.max_us)
            ),
        ),
        ("completion", completion(report)),
        ("active time", format::seconds(r.active_s)),
        (
            "tool CPU / payment",
            r.tool_cpu_per_payment_us()
                .map_or_else(|| "not measured".into(), |us| format!("{us:.1} µs")),
        ),
        (
            "machine",
            (r.machine.as_ref()).map_or_else(|| "not sampled".into(), |m| m.verdict.clone()),
        ),
    ]
}

pub fn render(report: &Report) -> String {
    let rows = headline_rows(report);
    let mut out = String::new();
    let status = match (&report.complete, &report.interrupted_by) {
        (true, _) => String::new(),
        (false, Some(by)) => format!(" (partial: interrupted by {})", cell(by)),
        (false, None) => " (partial)".to_string(),
    };
    let point = (report.point.as_deref()).map_or_else(String::new, |p| format!(", {}", cell(p)));
    let _ = writeln!(
        out,
        "**{}**: {}{point}{status}\n",
        report.tool.line(),
        cell(&report.scenario.name)
    );
    out.push_str("| metric | value |\n|---|---|\n");
    for (metric, value) in rows {
        let _ = writeln!(out, "| {metric} | {} |", cell(&value));
    }
    if let Some(h) = &report.history {
        let _ = writeln!(out, "\n{}", cell(&h.line()));
    }
    if let Some(s) = &report.snapshot {
        let _ = writeln!(out, "\n{}", cell(&s.line()));
    }
    phase_and_threshold_tables(report, &mut out);
    out.push_str(&super::reconciliation::markdown(
        report.reconciliation.as_ref(),
    ));
    out.push_str(&super::resources::markdown(report));
    out.push_str(&super::envelopes::markdown(report));
    out.push_str(&super::resources::restart_markdown(report));
    for section in super::workload_sections::of(&report.results) {
        out.push_str(&section.markdown());
    }
    out.push_str(&super::faults::markdown(report));
    out.push_str(&super::profiles::markdown(report));
    if let Some(network) = &report.network {
        out.push_str(&super::network::markdown(network));
    }
    let h = &report.host;
    let _ = writeln!(
        out,
        "\nHost: {}, {} cores, {}, {}; {} {}; {} to {}.",
        cell(&h.cpu_model),
        h.cores,
        format::bytes(h.memory_bytes),
        cell(&h.os),
        report.chain.implementation,
        cell(&report.chain.version),
        report.started_at,
        report.finished_at
    );
    out
}

/// The per-phase table and the thresholds' verdicts, each when the run has them.
fn phase_and_threshold_tables(report: &Report, out: &mut String) {
    let r = &report.results;
    if !r.phases.is_empty() {
        out.push_str(
            "\n| phase | ok / failed | TPS (avg) | latency p50 / p99 / max |\n|---|---|---|---|\n",
        );
        for p in &r.phases {
            let l = &p.latency;
            let _ = writeln!(
                *out,
                "| {} | {} / {} | {} | {} / {} / {} |",
                p.phase.as_str(),
                p.ok,
                p.failed,
                format::tps(p.tps_avg),
                format::latency_us(l.p50_us),
                format::latency_us(l.p99_us),
                format::latency_us(l.max_us)
            );
        }
    }
    if !report.thresholds.is_empty() {
        out.push_str("\n| threshold | limit | actual | result |\n|---|---|---|---|\n");
        for t in &report.thresholds {
            let _ = writeln!(
                *out,
                "| {} | {} | {} | {} |",
                t.label(),
                t.limit_text(),
                t.actual_text(),
                if t.passed { "pass" } else { "**FAIL**" }
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::cell;

    #[test]
    fn node_supplied_text_cannot_add_links_images_or_markup() {
        assert_eq!(
            cell("v1 [see](https://x.example) ![](https://t.example/p.png)"),
            r"v1 \[see\](https://x.example) !\[\](https://t.example/p.png)"
        );
        assert_eq!(
            cell("<img src=x>|`c`\n*b*_i_"),
            r"\<img src=x\>\|\`c\` \*b\*\_i\_"
        );
        assert_eq!(cell(r"a\"), r"a\\");
        assert_eq!(cell("0.18.5-beta commit=abc"), "0.18.5-beta commit=abc");
    }
}
