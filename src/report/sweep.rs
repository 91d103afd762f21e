//! The combined report of a sweep: `sweep.json` (the model below), `sweep.md` and
//! `sweep.html` with two charts (`sweep_charts.rs`): TPS against the swept parameter
//! and p99 latency against TPS (latency vs throughput, where the knee shows), and
//! the highest TPS whose p99 stays under the scenario's `sweep.p99_bound`.
//! Each point's own report is in its folder, `<dir>/<label>/`.

use super::{Host, ScenarioText, Tool, format, sweep_charts};
use crate::metrics::{Percentiles, Summary};
use anyhow::{Context, Result};
use minijinja::{AutoEscape, Environment};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Bump on any breaking change of sweep.json; `docs/sweep.schema.json` describes it.
pub const SWEEP_SCHEMA_VERSION: u32 = 2;
pub const JSON_FILE: &str = "sweep.json";
pub const HTML_FILE: &str = "sweep.html";
pub const MD_FILE: &str = "sweep.md";

const TEMPLATE: &str = include_str!("../../assets/sweep.html");
const CSS: &str = include_str!("../../assets/report.css");

#[derive(Debug, Clone, Serialize)]
pub struct SweepReport {
    pub schema_version: u32,
    pub tool: Tool,
    /// False when the sweep stopped before its last point ended (signal, error, the
    /// operator quit): the points not run are listed with status `not-run`.
    pub complete: bool,
    pub interrupted_by: Option<String>,
    pub started_at: String,
    pub finished_at: String,
    pub scenario: ScenarioText,
    pub runtime: String,
    pub host: Host,
    /// The swept parameters, slowest-varying first (`concurrency`, `carol.replicas`).
    pub parameters: Vec<String>,
    pub p99_bound_ms: Option<f64>,
    pub points: Vec<PointReport>,
    /// The highest TPS among the finished points whose p99 is at most the bound.
    pub best_under_bound: Option<BestPoint>,
    /// The same per implementation × database (the groups of an implementation matrix;
    /// one group, every point, otherwise). Empty without a bound.
    pub best_by_group: Vec<super::matrix::GroupBest>,
    /// `repeat:` when the points were repeated (count above 1), else null.
    pub repeat: Option<super::spread::RepeatInfo>,
    /// The spread of each repeated point (empty without repeats).
    pub spread: Vec<super::spread::Spread>,
    /// Latency added per hop, between points that differ only in the replica count
    /// of a line's intermediaries (`through:`).
    pub per_hop: Vec<HopStep>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PointStatus {
    /// The load ran to its stop condition.
    Done,
    /// Cut short: the figures cover what was done.
    Partial,
    /// Never started (the sweep stopped before it).
    NotRun,
    /// Not run because it cannot be (a database the implementation lacks, a binary not
    /// built here): `reason` says which.
    Skipped,
    /// Not run because its network did not come up (a node that would not start):
    /// `reason` says why. The sweep went on with the other networks, and fails.
    Failed,
}

#[derive(Debug, Clone, Serialize)]
pub struct PointReport {
    /// `concurrency=4`; also the point's report folder under the sweep's.
    pub label: String,
    /// Parameter name -> value (a number, or a name for kinds and backends).
    pub values: BTreeMap<String, serde_json::Value>,
    /// Points with the same number ran on the same network, one after the other.
    pub network: usize,
    /// A history ladder's step: what the network had paid before this point's load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<super::history_phase::HistoryPhase>,
    pub status: PointStatus,
    /// Why a skipped or failed point was not run.
    pub reason: Option<String>,
    /// `keysend`, `invoice` or `invoice-pregenerated`.
    pub kind: String,
    /// What the latency of this kind includes.
    pub timed: String,
    /// Closed loop with N payers, or open loop.
    pub load: String,
    pub results: Option<PointResults>,
    pub thresholds_passed: Option<bool>,
}

impl PointReport {
    /// The label's `key=value` parts but those of `left_out`, in the sweep's order
    /// (`implementation=cln,database=postgres`); `None` when nothing is left.
    pub fn label_without(&self, left_out: &[&str]) -> Option<String> {
        let parts: Vec<&str> = (self.label.split(','))
            .filter(|part| {
                let key = part.split('=').next().unwrap_or("");
                !left_out.contains(&key) && self.values.contains_key(key)
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join(","))
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct PointResults {
    pub ok: u64,
    pub failed: u64,
    pub active_s: f64,
    pub tps_avg: f64,
    pub latency: Percentiles,
    pub failures_by_reason: BTreeMap<&'static str, u64>,
    pub tool_cpu_per_payment_us: Option<f64>,
    /// Average CPU % of each node and the chain over the point's load (100 % = one
    /// core), where the runtime read it; nodes in the scenario's order, then `chain`.
    pub cpu_pct_avg: Vec<NodeCpu>,
    /// Each node: what it ran (implementation, release, database) and its costs.
    pub nodes: Vec<NodeFigures>,
    /// The host's load beside the point's own ([`crate::metrics::MachineLoad`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine: Option<crate::metrics::MachineLoad>,
    /// Payments the point's reconciliation found the tool and the nodes disagree on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mismatches: Option<u64>,
    /// The honest payments around the point's attack (`workload: attack:`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attack: Option<attack::PointAttack>,
}

/// One node of a point, as the implementation matrix shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeFigures {
    pub node: String,
    pub implementation: String,
    /// The release the node reported when it was ready.
    pub version: String,
    /// Where it kept its state (`bbolt`, `sqlite`, `postgres`, ...).
    pub database: String,
    pub cpu_pct_avg: Option<f64>,
    /// Its CPU time per successful payment: average CPU × active load time / payments.
    pub cpu_ms_per_payment: Option<f64>,
    /// Data-dir growth over the load per successful payment.
    pub bytes_per_payment: Option<f64>,
    /// The data dir's size when the load ended.
    pub data_dir_bytes: Option<u64>,
    /// `after_load: restart`: seconds from its start until its channels were active again.
    pub restart_s: Option<f64>,
    /// A sender's way of learning that payments ended (`websocket event, exact`);
    /// absent for other nodes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeCpu {
    pub node: String,
    pub pct: f64,
}

impl PointResults {
    /// The figures of one point: its summary and each node's average CPU %.
    pub fn of(s: &Summary, cpu_pct_avg: &[(String, f64)], nodes: &[NodeFigures]) -> PointResults {
        PointResults {
            ok: s.ok,
            failed: s.failed,
            active_s: s.active_s,
            tps_avg: s.tps_avg,
            latency: s.latency,
            failures_by_reason: s.failures_by_reason.clone(),
            tool_cpu_per_payment_us: s.tool_cpu_per_payment_us(),
            cpu_pct_avg: cpu_pct_avg
                .iter()
                .map(|(node, pct)| NodeCpu {
                    node: node.clone(),
                    pct: *pct,
                })
                .collect(),
            nodes: nodes.to_vec(),
            machine: s.machine.clone(),
            mismatches: s.mismatches,
            attack: s.attack.as_ref().map(attack::PointAttack::of),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BestPoint {
    pub label: String,
    pub tps_avg: f64,
    pub p99_us: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HopStep {
    /// The replica parameter, e.g. `carol.replicas`.
    pub parameter: String,
    pub from: String,
    pub to: String,
    /// Intermediaries (and so hops) added from `from` to `to`.
    pub hops_added: u32,
    pub p50_added_per_hop_us: f64,
    pub mean_added_per_hop_us: f64,
}

/// The index of the finished point with the highest average TPS whose p99 latency is
/// at most `bound_us`. Points not done (partial or not run) and points without a
/// successful payment do not count.
pub fn max_tps_under_bound(points: &[PointReport], bound_us: u64) -> Option<usize> {
    points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.status == PointStatus::Done)
        .filter_map(|(i, p)| p.results.as_ref().map(|r| (i, r)))
        .filter(|(_, r)| r.ok > 0 && r.latency.p99_us <= bound_us)
        .max_by(|a, b| a.1.tps_avg.total_cmp(&b.1.tps_avg))
        .map(|(i, _)| i)
}

/// Latency added per hop: for every point, the next point with the same values of
/// every other parameter and more replicas of `parameter`; the p50 and mean latency
/// difference divided by the replicas added. Only finished points count.
pub fn latency_per_hop(points: &[PointReport], parameter: &str) -> Vec<HopStep> {
    let count = |p: &PointReport| p.values.get(parameter).and_then(serde_json::Value::as_u64);
    let others = |p: &PointReport| {
        let mut v = p.values.clone();
        v.remove(parameter);
        v
    };
    let done: Vec<(&PointReport, u64, &PointResults)> = points
        .iter()
        .filter(|p| p.status == PointStatus::Done)
        .filter_map(|p| Some((p, count(p)?, p.results.as_ref()?)))
        .filter(|(_, _, r)| r.ok > 0)
        .collect();
    let mut steps = Vec::new();
    for (a, n, ra) in &done {
        let next = done
            .iter()
            .filter(|(b, m, _)| m > n && others(b) == others(a))
            .min_by_key(|(_, m, _)| *m);
        if let Some((b, m, rb)) = next {
            let added = (m - n) as f64;
            steps.push(HopStep {
                parameter: parameter.to_string(),
                from: a.label.clone(),
                to: b.label.clone(),
                hops_added: u32::try_from(m - n).unwrap_or(u32::MAX),
                p50_added_per_hop_us: (rb.latency.p50_us as f64 - ra.latency.p50_us as f64) / added,
                mean_added_per_hop_us: (rb.latency.mean_us - ra.latency.mean_us) / added,
            });
        }
    }
    steps
}

/// Writes sweep.json, sweep.md, sweep.html and the charts' `.svg` files into `dir`.
pub fn write_all(report: &SweepReport, dir: &Path) -> Result<Vec<PathBuf>> {
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

/// One row of figures per point, as both the markdown and the HTML tables show it.
fn figures(p: &PointReport) -> Vec<String> {
    let status = match p.status {
        PointStatus::Done => "done",
        PointStatus::Partial => "partial",
        PointStatus::NotRun => "not run",
        PointStatus::Skipped => "skipped",
        PointStatus::Failed => "failed",
    };
    // A point measured on a busy machine says so where its figures stand.
    let disturbed = (p.results.as_ref())
        .and_then(|r| r.machine.as_ref())
        .is_some_and(|m| m.disturbed);
    let status = if disturbed {
        format!("{status} (disturbed)")
    } else {
        status.to_string()
    };
    let mut row = vec![p.label.clone(), status, p.kind.clone()];
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
        (Some(b), Some(best)) => format!(
            "highest TPS with p99 under {}: {} at {} (p99 {})",
            format::latency_us((b * 1000.0) as u64),
            format::tps(best.tps_avg),
            best.label,
            format::latency_us(best.p99_us)
        ),
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
    if !report.complete {
        let why = report.interrupted_by.as_deref().unwrap_or("stopped");
        let _ = writeln!(
            out,
            "\n**Partial sweep** ({why}): points not run are listed as such."
        );
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
        complete => report.complete,
        interrupted_by => &report.interrupted_by,
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
mod ladder;
#[cfg(test)]
pub(crate) mod tests;
