//! The combined report of a sweep: `sweep.json` (the model below), `sweep.md` and
//! `sweep.html` with two charts (`sweep_charts.rs`): TPS against the swept parameter
//! and p99 latency against TPS (latency vs throughput, where the knee shows), and
//! the highest TPS whose p99 stays under the scenario's `sweep.p99_bound`.
//! Each point's own report is in its folder, `<dir>/<label>/`.

use super::{format, sweep_charts};
use anyhow::{Context, Result};
use minijinja::{AutoEscape, Environment};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const TEMPLATE: &str = include_str!("../../assets/sweep.html");
const CSS: &str = include_str!("../../assets/report.css");

/// Writes sweep.json, sweep.md, sweep.html and the charts' `.svg` files into `dir`.
pub fn write_all(report: &SweepReport, dir: &Path) -> Result<Vec<PathBuf>> {
    // Redacted once, before any page: every page reads the same redacted model.
    let report = &scrub::redacted(report);
    let json = super::redact::redacted_json(report).context("serializing sweep.json")?;
    let mut paths = vec![super::write_file(dir, JSON_FILE, &json)?];
    let mut charts = sweep_charts::render_all(report)?;
    if super::matrix::is_matrix(&report.parameters) {
        charts.splice(0..0, super::matrix::charts(report)?);
    }
    charts.extend(ladder::charts(report)?);
    paths.push(super::write_file(dir, HTML_FILE, &html(report, &charts)?)?);
    for chart in &charts {
        paths.push(super::write_file(dir, chart.file_name, &chart.svg)?);
    }
    paths.push(super::write_file(dir, MD_FILE, &markdown(report))?);
    Ok(paths)
}

/// The sweep's headline: how many points ran to their stop condition, what became
/// of the others, and why (a matrix numbers its reasons below its table; another
/// sweep gives them here, as its points table has no room for them). `true` when
/// every point ran to its stop condition.
fn headline(report: &SweepReport) -> (bool, String) {
    let count = |status: PointStatus| report.points.iter().filter(|p| p.status == status).count();
    let total = report.points.len();
    let done = count(PointStatus::Done);
    let points = |n: usize| if n == 1 { "point" } else { "points" };
    let ran = match (done, total) {
        (d, t) if d == t && t > 1 => format!("all {t} points ran to their stop condition"),
        (d, t) => format!("{d} of {t} {} ran to their stop condition", points(t)),
    };
    let start = match (&report.interrupted_by, report.complete) {
        (_, true) if done == total => return (true, format!("Complete sweep: {ran}.")),
        (_, true) => "Sweep ended".to_string(),
        (Some(why), false) => format!("Partial sweep, stopped by {why}"),
        (None, false) => "Partial sweep, stopped by an unknown cause".to_string(),
    };
    let (skipped, failed) = (count(PointStatus::Skipped), count(PointStatus::Failed));
    let mut others = Vec::new();
    if skipped + failed > 0 {
        let mut kept_out: Vec<String> = Vec::new();
        if skipped > 0 {
            kept_out.push(format!(
                "{skipped} {} skipped",
                if skipped == 1 { "was" } else { "were" }
            ));
        }
        if failed > 0 {
            kept_out.push(format!("{failed} failed"));
        }
        let why = match super::matrix::is_matrix(&report.parameters) {
            true => "the reasons are numbered below the implementation matrix".to_string(),
            false => reasons(&report.points),
        };
        others.push(format!("{} ({why})", kept_out.join(", ")));
    }
    for (n, what) in [
        (count(PointStatus::Partial), "stopped early (partial)"),
        (count(PointStatus::NotRun), "did not run"),
    ] {
        if n > 0 {
            others.push(format!("{n} {what}"));
        }
    }
    let mut line = format!("{start}: {ran}");
    if !others.is_empty() {
        line.push_str(&format!("; {}", others.join(", ")));
    }
    if count(PointStatus::Partial) > 0 {
        line.push_str(". A partial point covers only the payments made before it stopped");
    }
    line.push('.');
    (false, line)
}

/// The reasons of the skipped and failed points, each once with how many points it
/// kept from running: `no lnd binary built here: 2 points`.
fn reasons(points: &[PointReport]) -> String {
    let mut reasons: Vec<(&str, usize)> = Vec::new();
    let not_run = (points.iter())
        .filter(|p| matches!(p.status, PointStatus::Skipped | PointStatus::Failed))
        .map(|p| p.reason.as_deref().unwrap_or("no reason recorded"));
    for why in not_run {
        match reasons.iter_mut().find(|(r, _)| *r == why) {
            Some((_, n)) => *n += 1,
            None => reasons.push((why, 1)),
        }
    }
    (reasons.iter())
        .map(|(why, n)| format!("{why}: {n} point{}", if *n == 1 { "" } else { "s" }))
        .collect::<Vec<_>>()
        .join("; ")
}

/// One row of figures per point, as both the markdown and the HTML tables show it.
fn figures(p: &PointReport) -> Vec<String> {
    let mut row = vec![p.label.clone(), p.status_text(), p.kind.clone()];
    match &p.results {
        Some(r) => {
            let l = &r.latency;
            row.extend([
                r.ok.to_string(),
                r.failed.to_string(),
                format::tps(r.tps_avg),
                format::latency_us(l.p50_us),
                format::latency_us(l.p90_us),
                format::latency_us(l.p99_us),
                format::latency_us(l.max_us),
                r.tool_cpu_per_payment_us
                    .map_or("-".into(), |us| format!("{us:.0} µs")),
                node_cpu(&r.cpu_pct_avg),
            ]);
        }
        None => row.extend(std::iter::repeat_n("-".to_string(), 9)),
    }
    row
}

/// `alice 70% · bob 41% · chain 2%`, or `-` when the runtime read no CPU.
fn node_cpu(cpu: &[NodeCpu]) -> String {
    if cpu.is_empty() {
        return "-".into();
    }
    cpu.iter()
        .map(|c| format!("{} {:.0}%", c.node, c.pct))
        .collect::<Vec<_>>()
        .join(" · ")
}

const COLUMNS: [&str; 12] = [
    "point",
    "status",
    "kind",
    "ok",
    "failed",
    "TPS",
    "p50",
    "p90",
    "p99",
    "max",
    "tool CPU / payment",
    "CPU avg per node",
];

/// The verdict on the latency bound, in words.
pub fn bound_verdict(report: &SweepReport) -> String {
    match (report.p99_bound_ms, &report.best_under_bound) {
        (None, _) => {
            "no latency bound set (sweep: p99_bound: 500ms gives the highest TPS under it)".into()
        }
        (Some(b), Some(best)) => {
            let bound_us = (b * 1000.0) as u64;
            let line = format!(
                "highest TPS with p99 under {}: {} at {} (p99 {})",
                format::latency_us(bound_us),
                format::tps(best.tps_avg),
                best.label,
                format::latency_us(best.p99_us)
            );
            // No finished point crossed the bound: the best is only the sweep's
            // fastest, and the knee lies beyond its last point.
            let crossed = (report.points.iter())
                .filter_map(|p| p.results.as_ref())
                .any(|r| r.latency.p99_us > bound_us);
            match crossed {
                true => line,
                false => format!(
                    "{line}; no point reached the bound, so the sweep stopped short of the \
                     knee: sweep higher to find it"
                ),
            }
        }
        (Some(b), None) => format!(
            "no finished point kept p99 under {}",
            format::latency_us((b * 1000.0) as u64)
        ),
    }
}

fn hop_lines(report: &SweepReport) -> Vec<String> {
    report
        .per_hop
        .iter()
        .map(|h| {
            format!(
                "{} → {}: +{} hop(s), p50 {:+.1} ms per hop, mean {:+.1} ms per hop",
                h.from,
                h.to,
                h.hops_added,
                h.p50_added_per_hop_us / 1000.0,
                h.mean_added_per_hop_us / 1000.0
            )
        })
        .collect()
}

/// The kinds measured and what each one times.
fn methods(report: &SweepReport) -> Vec<String> {
    let mut kinds: Vec<&str> = Vec::new();
    for p in &report.points {
        if !kinds.contains(&p.kind.as_str()) {
            kinds.push(&p.kind);
        }
    }
    kinds
        .into_iter()
        .map(format::what_is_timed)
        .map(String::from)
        .collect()
}

pub fn markdown(report: &SweepReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## Sweep: {}", report.scenario.name);
    if !report.scenario.description.is_empty() {
        let _ = writeln!(out, "\n{}", report.scenario.description);
    }
    match headline(report) {
        (true, line) => {
            let _ = writeln!(out, "\n{line}");
        }
        (false, line) => {
            let _ = writeln!(out, "\n**{line}**");
        }
    }
    let _ = writeln!(out, "\nSwept: {}\n", report.parameters.join(", "));
    let _ = writeln!(out, "| {} |", COLUMNS.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(COLUMNS.len()));
    for p in &report.points {
        let _ = writeln!(out, "| {} |", figures(p).join(" | "));
    }
    if super::matrix::is_matrix(&report.parameters) {
        out.push_str(&super::matrix::markdown(report));
    }
    out.push_str(&attack::markdown(report));
    out.push_str(&ladder::markdown(report));
    out.push_str(&super::spread::markdown(report));
    let _ = writeln!(out, "\n{}", bound_verdict(report));
    let hops = hop_lines(report);
    if !hops.is_empty() {
        let _ = writeln!(out, "\nLatency added per hop:\n");
        for h in hops {
            let _ = writeln!(out, "- {h}");
        }
    }
    let _ = writeln!(out, "\nWhat is timed:\n");
    for m in methods(report) {
        let _ = writeln!(out, "- {m}");
    }
    let _ = writeln!(
        out,
        "\nLatencies are of successful payments; TPS is successful payments per active second. \
         Each point's full report is in its folder (`<point>/report.html`). \
         {} on {} ({} cores).",
        report.tool.line(),
        report.host.cpu_model,
        report.host.cores
    );
    out
}

#[derive(Serialize)]
struct ChartView {
    id: &'static str,
    title: &'static str,
    caption: &'static str,
    svg: minijinja::Value,
}

pub fn html(report: &SweepReport, charts: &[super::charts::Chart]) -> Result<String> {
    let mut env = Environment::new();
    // Labels and the scenario text come from the file; only plotters' SVG is safe.
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    env.add_template(HTML_FILE, TEMPLATE)
        .context("parsing the sweep template")?;
    let rows: Vec<(Vec<String>, &str)> = report
        .points
        .iter()
        .map(|p| (figures(p), p.label.as_str()))
        .collect();
    let (matrix_rows, matrix_notes) = super::matrix::rows(&report.points);
    let charts: Vec<ChartView> = charts
        .iter()
        .map(|c| ChartView {
            id: c.file_name,
            title: c.title,
            caption: c.caption,
            svg: minijinja::Value::from_safe_string(c.svg.clone()),
        })
        .collect();
    let ctx = minijinja::context! {
        css => CSS,
        title => format!("lnbench-tui sweep: {}", report.scenario.name),
        name => &report.scenario.name,
        description => &report.scenario.description,
        every_point_ran => headline(report).0,
        headline => headline(report).1,
        parameters => report.parameters.join(", "),
        columns => COLUMNS,
        matrix => super::matrix::is_matrix(&report.parameters),
        matrix_columns => super::matrix::COLUMNS,
        matrix_rows => matrix_rows.iter().zip(&report.points).map(|(cells, p)| (cells, p.label.as_str(), p.status == PointStatus::Skipped)).collect::<Vec<_>>(),
        matrix_notes => matrix_notes,
        best_lines => super::matrix::best_lines(report),
        ladder_columns => ladder::COLUMNS,
        ladder_rows => ladder::rows(report),
        spread_columns => super::spread::COLUMNS,
        spread_rows => report.spread.iter().map(super::spread::row).collect::<Vec<_>>(),
        repeat => report.repeat.as_ref().map(|r| format!("each point ran {} times{}, {} s apart; thresholds judged {}", r.count, if r.fresh_network { " on fresh networks" } else { " on one network" }, r.settle_s, match r.thresholds { crate::scenario::Judge::Each => "each repeat", crate::scenario::Judge::Median => "the median across repeats" })),
        rows => rows,
        verdict => bound_verdict(report),
        hops => hop_lines(report),
        methods => methods(report),
        charts => charts,
        scenario_text => &report.scenario.text,
        started_at => &report.started_at,
        finished_at => &report.finished_at,
        host => format!("{} ({} cores, {}), {}", report.host.cpu_model, report.host.cores,
            format::bytes(report.host.memory_bytes), report.host.os),
        tool => report.tool.line(),
    };
    env.get_template(HTML_FILE)
        .and_then(|t| t.render(ctx))
        .context("rendering sweep.html")
}

#[cfg(test)]
mod chromium_tests;

pub mod attack;
pub mod model;
pub use model::*;
mod ladder;
mod scrub;
#[cfg(test)]
pub(crate) mod tests;
