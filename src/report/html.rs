//! `report.html`: the report a person reads, self-contained (inline CSS and SVG, no
//! script, nothing fetched), rendered from `assets/report.html` with minijinja.
//! Figures are formatted here, so the template only lays them out.

use super::{Report, charts, format};
use anyhow::{Context, Result};
use minijinja::{AutoEscape, Environment};
use serde::Serialize;
use std::path::{Path, PathBuf};

pub const FILE_NAME: &str = "report.html";

const TEMPLATE: &str = include_str!("../../assets/report.html");
const CSS: &str = include_str!("../../assets/report.css");

/// Writes `dir/report.html` (creating `dir`).
pub fn write(report: &Report, dir: &Path) -> Result<PathBuf> {
    let mut charts = super::results_charts::render_all(&report.results)?;
    charts.extend(super::resources_charts::render_all(report)?);
    write_with_charts(report, &charts, dir)
}

/// Writes `dir/report.html` with charts already rendered (so `write_all` draws
/// each chart once for the page and its `.svg` file).
pub fn write_with_charts(report: &Report, charts: &[charts::Chart], dir: &Path) -> Result<PathBuf> {
    let html = render(report, charts)?;
    super::write_file(dir, FILE_NAME, &html)
}

/// The page as a string.
pub fn render(report: &Report, charts: &[charts::Chart]) -> Result<String> {
    let mut env = Environment::new();
    // Everything that comes from the report (scenario text, error messages, node
    // names) is escaped; only the SVG that plotters drew is marked safe.
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    env.add_template("report.html", TEMPLATE)
        .context("parsing the report template")?;
    let view = View::of(report, charts)?;
    env.get_template("report.html")
        .and_then(|t| t.render(&view))
        .context("rendering report.html")
}

type Row = (String, String);

fn row(label: &str, value: impl Into<String>) -> Row {
    (label.to_string(), value.into())
}

#[derive(Serialize)]
struct View<'a> {
    css: &'static str,
    title: String,
    /// In a sweep: the point this report is of.
    point: Option<&'a str>,
    tool: String,
    headline: String,
    thresholds_verdict: Option<String>,
    thresholds: Vec<ThresholdRow>,
    phases: Vec<PhaseRow>,
    complete: bool,
    interrupted_by: Option<&'a str>,
    /// The machine's verdict when other work disturbed the run.
    disturbed: Option<&'a str>,
    started_at: &'a str,
    finished_at: &'a str,
    scenario_name: &'a str,
    scenario_description: &'a str,
    scenario_path: &'a str,
    scenario_text: &'a str,
    summary: Vec<Row>,
    workload: Vec<Row>,
    nodes: Vec<NodeRow>,
    setup: Vec<Row>,
    setup_total: String,
    failures: Vec<(String, u64, String)>,
    tool_cost: Vec<Row>,
    environment: Vec<Row>,
    charts: Vec<ChartView<'a>>,
    /// Run events: seconds since start, what happened.
    events: Vec<Row>,
    events_dropped: u64,
    /// Per-node resource use; empty when the runtime read none.
    resources: Vec<super::resources::ResourceRow>,
    restarts: Vec<super::resources::RestartRow>,
    /// Envelopes (`resources:`) and the kernel's counters; empty without.
    envelopes: Vec<super::envelopes::EnvelopeRow>,
    tool_memory: Option<String>,
    /// Flame graphs (`profile:`); None when the run was not profiled.
    profiles: Option<super::profiles::ProfilesView>,
    /// Links and faults (`links:`, `faults:`); None without.
    faults: Option<super::faults::FaultsView>,
    /// A network run's section (report/network_html.rs), HTML already escaped.
    network: Option<minijinja::Value>,
    /// The reconciliation table's rows and its summary lines; None when not reconciled.
    reconciliation: Option<(Vec<[String; 7]>, Vec<String>)>,
    /// The workload kinds' sections the run has (stream, parts, ...), in page order.
    workload_sections: Vec<SectionView>,
}

#[derive(Serialize)]
struct ThresholdRow {
    name: String,
    limit: String,
    actual: String,
    passed: bool,
}

/// One measured open-loop phase, formatted.
#[derive(Serialize)]
struct PhaseRow {
    phase: &'static str,
    ok: u64,
    failed: u64,
    tps: String,
    p50: String,
    p90: String,
    p99: String,
    max: String,
    active: String,
}

impl PhaseRow {
    fn of(p: &crate::metrics::PhaseSummary) -> PhaseRow {
        let l = &p.latency;
        PhaseRow {
            phase: p.phase.as_str(),
            ok: p.ok,
            failed: p.failed,
            tps: format::tps(p.tps_avg),
            p50: format::latency_us(l.p50_us),
            p90: format::latency_us(l.p90_us),
            p99: format::latency_us(l.p99_us),
            max: format::latency_us(l.max_us),
            active: format::seconds(p.active_s),
        }
    }
}

#[derive(Serialize)]
struct NodeRow {
    name: String,
    role: String,
    implementation: String,
    version: String,
    database: String,
    pubkey: String,
    pubkey_short: String,
    /// How a payment's end is learned (senders; empty for the others).
    completion: String,
}

/// A workload kind's section: its id, heading, and its HTML, already escaped.
#[derive(Serialize)]
struct SectionView {
    id: &'static str,
    title: &'static str,
    html: minijinja::Value,
}

#[derive(Serialize)]
struct ChartView<'a> {
    id: &'a str,
    file_name: &'a str,
    title: &'a str,
    caption: &'a str,
    svg: minijinja::Value,
}

impl<'a> View<'a> {
    fn of(report: &'a Report, charts: &'a [charts::Chart]) -> Result<View<'a>> {
        let r = &report.results;
        let workload_sections = (super::workload_sections::of(r).iter())
            .map(|s| {
                Ok(SectionView {
                    id: s.id(),
                    title: s.title(),
                    html: minijinja::Value::from_safe_string(s.html()?),
                })
            })
            .collect::<Result<_>>()?;
        let summary = summary_rows(report);
        let workload = workload_rows(report);
        let nodes = node_rows(report);
        let setup = report
            .setup
            .iter()
            .map(|s| row(&s.step, format::seconds(s.seconds)))
            .collect();
        let setup_total = format::seconds(report.setup.iter().map(|s| s.seconds).sum());
        let failures = failure_rows(report);
        let tool_cost = tool_cost_rows(report);
        let environment = environment_rows(report);
        let (headline, thresholds_verdict) = headline(report);
        Ok(View {
            css: CSS,
            headline,
            thresholds_verdict,
            title: match &report.point {
                Some(point) => format!("lnbench-tui report: {}, {point}", report.scenario.name),
                None => format!("lnbench-tui report: {}", report.scenario.name),
            },
            point: report.point.as_deref(),
            tool: report.tool.line(),
            thresholds: threshold_rows(report),
            phases: r.phases.iter().map(PhaseRow::of).collect(),
            complete: report.complete,
            interrupted_by: report.interrupted_by.as_deref(),
            disturbed: (r.machine.as_ref())
                .filter(|m| m.disturbed)
                .map(|m| m.verdict.as_str()),
            started_at: &report.started_at,
            finished_at: &report.finished_at,
            scenario_name: &report.scenario.name,
            scenario_description: &report.scenario.description,
            scenario_path: &report.scenario.path,
            scenario_text: &report.scenario.text,
            summary,
            workload,
            nodes,
            setup,
            setup_total,
            failures,
            tool_cost,
            environment,
            events: r
                .events
                .iter()
                .map(|e| (format!("{:.1} s", e.at_s), e.kind.describe()))
                .collect(),
            events_dropped: r.events_dropped,
            resources: super::resources::rows(report),
            restarts: super::resources::restart_rows(report),
            envelopes: super::envelopes::rows(report),
            tool_memory: super::resources::tool_memory(report),
            profiles: super::profiles::view(report),
            faults: super::faults::view(report),
            network: super::network_html::section(report).map(minijinja::Value::from_safe_string),
            reconciliation: (report.reconciliation.as_ref())
                .map(|r| (super::reconciliation::rows(r), r.lines())),
            workload_sections,
            charts: charts
                .iter()
                .map(|c| ChartView {
                    id: c.file_name.trim_end_matches(".svg"),
                    file_name: c.file_name,
                    title: c.title,
                    caption: c.caption,
                    svg: minijinja::Value::from_safe_string(c.svg.clone()),
                })
                .collect(),
        })
    }
}

fn node_rows(report: &Report) -> Vec<NodeRow> {
    report
        .nodes
        .iter()
        .map(|n| NodeRow {
            name: n.name.clone(),
            role: n.role.clone(),
            implementation: n.implementation.clone(),
            version: n.version.clone(),
            database: n.database.clone(),
            pubkey: n.pubkey.clone(),
            pubkey_short: format::short_pubkey(&n.pubkey),
            completion: (n.role == "sender")
                .then(|| n.completion.as_ref().map(|c| c.describe()))
                .flatten()
                .unwrap_or_default(),
        })
        .collect()
}

/// Failures by reason: (reason, count, share of the failures).
fn failure_rows(report: &Report) -> Vec<(String, u64, String)> {
    let r = &report.results;
    r.failures_by_reason
        .iter()
        .map(|(reason, n)| {
            let share = if r.failed > 0 {
                *n as f64 / r.failed as f64
            } else {
                0.0
            };
            (reason.to_string(), *n, format::percent(share))
        })
        .collect()
}

/// The one-sentence headline and the thresholds' verdict (None without thresholds).
fn headline(report: &Report) -> (String, Option<String>) {
    let r = &report.results;
    let l = &r.latency;
    let headline = format!(
        "{} successful payments ({} failed) at {} payments/s on average; latency p50 {}, p99 {}.",
        r.ok,
        r.failed,
        format::tps(r.tps_avg),
        format::latency_us(l.p50_us),
        format::latency_us(l.p99_us)
    );
    let failed_thresholds = report.thresholds.iter().filter(|t| !t.passed).count();
    let thresholds_verdict = match (report.thresholds.len(), failed_thresholds) {
        (0, _) => None,
        (n, 0) => Some(format!("All {n} thresholds passed.")),
        (n, f) => Some(format!("{f} of {n} thresholds FAILED.")),
    };
    (headline, thresholds_verdict)
}

fn threshold_rows(report: &Report) -> Vec<ThresholdRow> {
    report
        .thresholds
        .iter()
        .map(|t| ThresholdRow {
            name: t.label(),
            limit: t.limit_text(),
            actual: t.actual_text(),
            passed: t.passed,
        })
        .collect()
}

/// The results table: counts, rates, latency and time.
fn summary_rows(report: &Report) -> Vec<Row> {
    let r = &report.results;
    let l = &r.latency;
    let attempted = r.ok + r.failed;
    let failure_rate = if attempted > 0 {
        r.failed as f64 / attempted as f64
    } else {
        0.0
    };
    vec![
        row("Successful payments", r.ok.to_string()),
        row(
            "Indeterminate payments (timed out or in flight at the end; see Reconciliation)",
            r.indeterminate.to_string(),
        ),
        row(
            "Failed payments",
            format!(
                "{} ({} of attempted)",
                r.failed,
                format::percent(failure_rate)
            ),
        ),
        row("TPS (average over active time)", format::tps(r.tps_avg)),
        row("Latency p50", format::latency_us(l.p50_us)),
        row("Latency p90", format::latency_us(l.p90_us)),
        row("Latency p99", format::latency_us(l.p99_us)),
        row("Latency p99.9", format::latency_us(l.p999_us)),
        row("Latency max", format::latency_us(l.max_us)),
        row("Latency mean", format::latency_us(l.mean_us.round() as u64)),
        row("Completion", super::markdown::completion(report)),
        row("Duration active", format::seconds(r.active_s)),
        row("Duration paused", format::seconds(r.paused_s)),
        row(
            "Wall time (warm-up and pauses included)",
            format::seconds(r.elapsed_s),
        ),
        row("Warm-up payments excluded", r.warm_up_excluded.to_string()),
        row("Dropped (scheduled, never started)", r.dropped.to_string()),
    ]
}

/// The workload table: what was sent, how much and how fast.
fn workload_rows(report: &Report) -> Vec<Row> {
    let w = &report.workload;
    let history = (report.history.as_ref()).map(|h| row("History", h.line()));
    let snapshot = (report.snapshot.as_ref()).map(|s| row("Started from", s.line()));
    let mut rows = vec![
        row("Kind", w.kind.clone()),
        row("What is timed", format::what_is_timed(&w.kind)),
        row("Amount", format!("{} msat", w.amount_msat)),
        row("Load", format::load(w)),
        row("Senders", w.senders.join(", ")),
        row("Receivers", w.receivers.join(", ")),
        row(
            "Payment timeout",
            format::seconds(w.payment_timeout_seconds),
        ),
    ];
    rows.extend(history);
    rows.extend(snapshot);
    rows
}

/// What the tool itself cost: CPU and memory.
fn tool_cost_rows(report: &Report) -> Vec<Row> {
    let r = &report.results;
    let unknown = || "not measured".to_string();
    vec![
        row(
            "CPU per payment",
            r.tool_cpu_per_payment_us()
                .map_or_else(unknown, |us| format!("{us:.1} µs")),
        ),
        row(
            "CPU during the run",
            r.tool_cpu_s.map_or_else(unknown, |s| format!("{s:.2} s")),
        ),
        row(
            "Peak memory (RSS)",
            r.tool_process
                .peak_rss_bytes
                .map_or_else(unknown, format::bytes),
        ),
    ]
}

/// Where the run ran: the tool, the host, the runtime and the chain.
fn environment_rows(report: &Report) -> Vec<Row> {
    let h = &report.host;
    let machine = (report.results.machine.as_ref())
        .map_or_else(|| "not sampled".to_string(), |m| m.verdict.clone());
    vec![
        row("Machine during the load", machine),
        row(
            "Tool",
            format!("{} {}", report.tool.name, report.tool.version),
        ),
        row("Host CPU", h.cpu_model.clone()),
        row("Cores", h.cores.to_string()),
        row("Memory", format::bytes(h.memory_bytes)),
        row("OS", h.os.clone()),
        row("Kernel", h.kernel.clone()),
        row("Runtime", report.runtime.clone()),
        row(
            "Chain",
            format!("{} {}", report.chain.implementation, report.chain.version),
        ),
    ]
}
