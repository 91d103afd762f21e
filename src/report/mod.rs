//! The report of a run: one serializable model with a schema version, written by one
//! file per format: `json.rs` (report.json), `html.rs` (report.html with the charts
//! of `charts.rs` inline, each also as its own `.svg`), `markdown.rs` (summary.md).

mod attack;
pub mod charts;
pub mod compare;
pub mod csv;
mod drain;
pub mod envelopes;
pub mod faults;
pub mod format;
pub mod history_phase;
pub mod host;
pub mod html;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod matrix;
pub mod network;
pub mod network_html;
mod parts;
pub mod payments_csv;
pub mod profiles;
mod rebalance;
pub mod reconciliation;
/// Redaction lives below the report (the profiler redacts too); its old path stays.
pub use crate::redact;
pub mod resources;
pub mod resources_charts;
pub mod results_charts;
pub mod scrub;
mod section;
pub mod spectrum;
pub mod spread;
pub mod stats;
mod stream_view;
pub mod sweep;
pub mod sweep_charts;
pub mod thresholds;
mod workload_sections;

pub(crate) use crate::files::write_file;
use crate::metrics::NodeResources;
use crate::setup::StepTiming;
use anyhow::{Context, Result};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub use host::Host;
pub use thresholds::ThresholdResult;

/// Writes every format of the report into `dir` (created if needed): report.json,
/// report.html, one `.svg` per chart and summary.md. Returns the paths written,
/// report.json first. The model is redacted once ([`scrub::redacted`]) before any
/// format is written.
pub fn write_all(report: &Report, dir: &Path) -> Result<Vec<PathBuf>> {
    let report = &scrub::redacted(report);
    let mut paths = vec![json::write(report, dir)?, csv::write(report, dir)?];
    let mut charts = results_charts::render_all(&report.results)?;
    charts.extend(resources_charts::render_all(report)?);
    paths.push(html::write_with_charts(report, &charts, dir)?);
    for chart in &charts {
        paths.push(write_file(dir, chart.file_name, &chart.svg)?);
    }
    paths.push(markdown::write(report, dir)?);
    if let Some(path) = copy_interval_log(report, dir)? {
        paths.push(path);
    }
    if let Some(path) = payments_csv::write(report, dir)? {
        paths.push(path);
    }
    Ok(paths)
}

/// One line for the files [`write_all`] wrote into `dir`: the page people open, and
/// how many files beside it (each file's path at `-vv`).
pub fn written_line(dir: &Path, paths: &[PathBuf]) -> String {
    for path in paths {
        tracing::debug!("report file: {}", path.display());
    }
    format!(
        "report: {} ({} files in {}: report.json, summary.md, charts, CSV)",
        dir.join(html::FILE_NAME).display(),
        paths.len(),
        dir.display()
    )
}

/// Copies the interval log the run streamed (if any) into `dir` as `latency.hlog`.
/// A log whose writing failed is not copied; the failure is printed instead, since
/// the rest of the report is still good.
fn copy_interval_log(report: &Report, dir: &Path) -> Result<Option<PathBuf>> {
    use crate::metrics::hlog;
    let Some(log) = &report.results.interval_log else {
        return Ok(None);
    };
    if let Some(error) = &log.error {
        crate::lines::errln!("warning: {} not written: {error}", hlog::FILE_NAME);
        return Ok(None);
    }
    // As every report file: whole or not at all, and never through a link planted at
    // its name.
    let path = crate::files::copy_file(dir, hlog::FILE_NAME, &log.path)
        .context("cannot copy the latency log")?;
    Ok(Some(path))
}

/// Bump on any breaking change of the JSON shape; `docs/report.schema.json` describes it.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub tool: Tool,
    /// False when the run was cut short (Ctrl-C, SIGTERM, an error during the load):
    /// the results then cover only what was done.
    pub complete: bool,
    /// Why the run ended early, when it did (`SIGINT`, `SIGTERM`, an error message).
    pub interrupted_by: Option<String>,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub finished_at: String,
    pub scenario: ScenarioText,
    pub runtime: String,
    pub host: Host,
    pub chain: ChainInfo,
    pub nodes: Vec<NodeReport>,
    /// The database servers the runtime started for the nodes (PostgreSQL, etcd
    /// members), with their resources; absent when there were none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub services: Vec<ServiceReport>,
    pub workload: WorkloadReport,
    /// Setup steps in order with the time each took.
    pub setup: Vec<StepTiming>,
    /// The measured load, including what the load generator itself cost
    /// (`tool_cpu_s`, `tool_process`).
    pub results: crate::metrics::Summary,
    /// The scenario's thresholds checked against `results`, in the order written;
    /// empty when the scenario has none.
    #[serde(default)]
    pub thresholds: Vec<ThresholdResult>,
    /// The tool's own memory (`mem_bytes`, its RSS) sampled once a second over the
    /// load, like a node's resources; absent when not sampled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_resources: Option<NodeResources>,
    /// CPU (and LND heap) profiles of the nodes (`profile:` / `--profile`); absent
    /// when the run was not profiled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profiling: Option<crate::profile::ProfilingReport>,
    /// `links:`: the peer links shaped from setup on (empty without).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkReport>,
    /// `faults:` as they happened, with their windows (empty without).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<crate::faults::FaultRecord>,
    /// With faults: each node's channels at the end.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub channel_health: Vec<crate::faults::NodeHealth>,
    /// A network run (`topology:` / `workload: activity:`): setup time, figures per
    /// sender and route length, the graph; absent for other runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<network::NetworkReport>,
    /// The tool's counts checked against the nodes' own ledgers after the load;
    /// absent when no node was read (a load that never started).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reconciliation: Option<reconciliation::Reconciliation>,
    /// Mainnet caps (`runtime: external`, `allow_mainnet`): the caps, what the run
    /// spent so far, and whether they stopped a load; absent without them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mainnet_caps: Option<MainnetCaps>,
    /// In a sweep: the point this report is of (`point 2/4: concurrency=4`); the
    /// sweep's own page is `sweep.html` in the directory above. Absent outside one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub point: Option<String>,
    /// The snapshot the run started from (`--snapshot`): funding and channel opening
    /// were skipped, so its setup is not that of a fresh network; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<SnapshotRef>,
    /// `history:`: what the network had paid before the load, and the phase that
    /// brought it there; absent without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<history_phase::HistoryPhase>,
}

/// The snapshot a run started from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SnapshotRef {
    /// The snapshot directory's name.
    pub name: String,
    /// When it was saved (RFC 3339, UTC).
    pub saved_at: String,
    /// How long setup took when it was saved.
    pub saved_setup_s: f64,
    /// How long copying and checking its files into the run took.
    pub restore_s: f64,
    /// Payments the tool made on the network before it was saved (`history:`).
    pub payments: u64,
    /// Nodes restored onto another database schema, which they migrated as they
    /// started (LND's key-value SQL to native SQL).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub migrations: Vec<SnapshotMigration>,
}

impl SnapshotRef {
    /// The report's line: `snapshot two-lnd (saved 2026-11-27T17:02:55Z, 100 payments
    /// made), restored in 0.2 s; bob migrated sqlite to sqlite-native, ready 3.2 s
    /// after its start (its log: kv_invoice_migration 101 in 0.13 s)`.
    pub fn line(&self) -> String {
        let mut out = format!(
            "snapshot {} (saved {}, {} payments made), restored in {:.1} s",
            self.name, self.saved_at, self.payments, self.restore_s
        );
        for m in &self.migrations {
            let _ = write!(out, "; {}", m.line());
        }
        out
    }
}

/// A restored node's database migration, and how long the node took to start with it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SnapshotMigration {
    pub node: String,
    /// The database as saved (`sqlite`) and as this run has it (`sqlite-native`), or
    /// with `--upgrade` the version as saved and this run's.
    pub from: String,
    pub to: String,
    /// From the nodes' start until this node answered, synced to the chain: its
    /// start, migration included.
    pub ready_s: f64,
    /// The migrations the node's log says it ran, timed by its log.
    pub logged: Vec<crate::node::LoggedMigration>,
}

impl SnapshotMigration {
    /// `bob migrated sqlite to sqlite-native, ready 3.2 s after its start (its log:
    /// kv_invoice_migration 101 in 0.13 s)`.
    pub fn line(&self) -> String {
        let mut out = format!(
            "{} migrated {} to {}, ready {:.1} s after its start",
            self.node, self.from, self.to, self.ready_s
        );
        let logged: Vec<String> = (self.logged.iter())
            .map(|l| match l.items {
                Some(n) => format!("{} {n} in {:.2} s", l.name, l.seconds),
                None => format!("{} in {:.2} s", l.name, l.seconds),
            })
            .collect();
        if !logged.is_empty() {
            let _ = write!(out, " (its log: {})", logged.join(", "));
        }
        out
    }
}

/// The run's spend under mainnet caps when the report was written (one ledger serves
/// every point and repeat of a run, so the figures are the run's so far).
#[derive(Debug, Clone, Serialize)]
pub struct MainnetCaps {
    pub max_payment_msat: u64,
    pub max_total_msat: u64,
    /// Amounts and fees of the payments the nodes report paid.
    pub paid_msat: u64,
    /// Payments whose end is not known, counted as paid (amount and fee limit).
    pub unknown_msat: u64,
    /// Amounts lowered to `max_payment_msat`.
    pub clamped: u64,
    /// True once a payment was refused for crossing `max_total_msat`: the load stopped
    /// there, before its own stop.
    pub cap_reached: bool,
}

/// One entry of `links:` in the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkReport {
    pub between: [String; 2],
    /// One way, each direction.
    pub latency_ms: f64,
    pub jitter_ms: f64,
    pub bandwidth_kb_s: Option<u64>,
}

impl LinkReport {
    pub fn of(spec: &crate::scenario::LinkSpec) -> LinkReport {
        LinkReport {
            between: [spec.pair.a.clone(), spec.pair.b.as_str().to_string()],
            latency_ms: spec.shape.latency.as_secs_f64() * 1000.0,
            jitter_ms: spec.shape.jitter.as_secs_f64() * 1000.0,
            bandwidth_kb_s: spec.shape.bandwidth_kb_s,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
    /// Which build measured: `release`, `quick` (the README's first look: the crate
    /// itself unoptimised, the payment path's dependencies at opt-level 1), `debug`, or
    /// the optimisation level of another profile.
    pub build: String,
}

impl Tool {
    pub fn this() -> Tool {
        Tool {
            name: env!("CARGO_PKG_NAME").into(),
            version: env!("CARGO_PKG_VERSION").into(),
            build: crate::build_info::build(),
        }
    }

    /// "lnbench-tui 0.1.0", with the build named when it is not a release build.
    pub fn line(&self) -> String {
        match self.build.as_str() {
            "release" => format!("{} {}", self.name, self.version),
            build => format!("{} {} ({build} build)", self.name, self.version),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ScenarioText {
    pub name: String,
    pub description: String,
    pub path: String,
    /// The scenario file exactly as written.
    pub text: String,
}

impl ScenarioText {
    /// What a report says of `scenario`: its name, description, path and its text
    /// with secrets redacted.
    pub fn of(scenario: &crate::scenario::Scenario) -> ScenarioText {
        ScenarioText {
            name: scenario.name.clone(),
            description: scenario.description.clone(),
            path: scenario.path.display().to_string(),
            text: crate::redact::redact_scenario_text(&scenario.source),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ChainInfo {
    pub implementation: String,
    pub version: String,
    /// The chain backend's resource use over the load.
    pub resources: NodeResources,
}

/// A server the runtime started for the nodes: their database.
#[derive(Debug, Clone, Serialize)]
pub struct ServiceReport {
    /// `postgres`, `etcd`, or `etcd-1` ... in a cluster.
    pub name: String,
    /// `postgresql` or `etcd`.
    pub implementation: String,
    pub version: String,
    /// Its resource use over the load, read like a node's.
    pub resources: NodeResources,
}

#[derive(Debug, Clone, Serialize)]
pub struct NodeReport {
    pub name: String,
    pub group: String,
    pub implementation: String,
    pub version: String,
    pub pubkey: String,
    /// `sender`, `receiver` or `router`.
    pub role: String,
    pub binary: String,
    /// Where it keeps its state: `postgres`, `sqlite`, `bbolt`, `etcd`, ...
    pub database: String,
    /// How the tool learns that a payment this node sent ended, and so how exact its
    /// latencies are (with any fallback since it connected); absent in old reports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion: Option<crate::node::Completion>,
    /// Seconds from the start of the nodes until this one answered synced to the chain
    /// (a restored snapshot's start-up included); absent where the tool did not start
    /// it (an external network, a cluster's ready nodes) and in old reports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready_s: Option<f64>,
    /// The node's resource use over the load (samples empty when the runtime read
    /// none).
    pub resources: NodeResources,
    /// Its restart after the load (`after_load: restart:`), when it was restarted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restart: Option<crate::restart::RestartReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct WorkloadReport {
    /// `keysend`, `invoice` (creation timed as part of the payment) or
    /// `invoice-pregenerated` (only paying is timed).
    pub kind: String,
    pub amount_msat: u64,
    /// `closed` (fixed concurrency) or `open` (scheduled rate).
    pub load_model: String,
    pub concurrency: Option<u32>,
    pub senders: Vec<String>,
    pub receivers: Vec<String>,
    pub stop_after_payments: Option<u64>,
    pub stop_after_seconds: Option<f64>,
    pub payment_timeout_seconds: f64,
}

#[cfg(test)]
mod snapshot_line_tests {
    use super::*;

    #[test]
    fn the_snapshot_line_names_each_migration_with_its_logged_times() {
        let mut s = SnapshotRef {
            name: "two-lnd".into(),
            saved_at: "2026-11-27T17:02:55Z".into(),
            saved_setup_s: 8.6,
            restore_s: 0.18,
            payments: 100,
            migrations: Vec::new(),
        };
        assert_eq!(
            s.line(),
            "snapshot two-lnd (saved 2026-11-27T17:02:55Z, 100 payments made), restored in 0.2 s"
        );
        s.migrations.push(SnapshotMigration {
            node: "bob".into(),
            from: "sqlite".into(),
            to: "sqlite-native".into(),
            ready_s: 3.21,
            logged: vec![
                crate::node::LoggedMigration {
                    name: "kv_invoice_migration".into(),
                    seconds: 0.134,
                    items: Some(101),
                },
                crate::node::LoggedMigration {
                    name: "kv_graph_migration".into(),
                    seconds: 0.009,
                    items: None,
                },
            ],
        });
        assert!(
            s.line().ends_with(
                "; bob migrated sqlite to sqlite-native, ready 3.2 s after its start (its log: \
                 kv_invoice_migration 101 in 0.13 s, kv_graph_migration in 0.01 s)"
            ),
            "{}",
            s.line()
        );
    }
}

#[cfg(test)]
mod tool_tests {
    use super::Tool;

    #[test]
    fn a_report_names_the_build_that_measured_it_unless_it_is_a_release_build() {
        let tool = |build: &str| Tool {
            name: "lnbench-tui".into(),
            version: "0.1.0".into(),
            build: build.into(),
        };
        assert_eq!(tool("release").line(), "lnbench-tui 0.1.0");
        assert_eq!(tool("quick").line(), "lnbench-tui 0.1.0 (quick build)");
        // The tests' own build says whether it is a debug build.
        assert_eq!(Tool::this().build == "debug", cfg!(debug_assertions));
    }
}
