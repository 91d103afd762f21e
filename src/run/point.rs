//! One point on a network that is up: its load, what follows it (faults settled,
//! profiles, restarts), its summary and threshold verdicts, and its report, written
//! before any teardown so a slow teardown cannot lose it.

use super::bring_up::{Network, RunFacts};
use super::load::{SnapshotWrite, run_load, watch_processes};
use super::metrics_endpoint;
use super::model::{add_resources, build_report};
use super::output::{Output, tui_info};
use super::{Signals, activity, reconcile};
use crate::metrics::{self, Summary};
use crate::report;
use crate::restart::RestartReport;
use crate::runtime::Runtime;
use crate::scenario::Scenario;
use crate::setup::StepLog;
use crate::{headless, tui};
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;
use tokio_util::sync::CancellationToken;

/// One load on a network that is up: the scenario (a sweep point or the whole
/// scenario) and where its report goes.
pub(crate) struct Point<'a> {
    pub scenario: &'a Scenario,
    pub facts: &'a RunFacts,
    pub log: &'a StepLog,
    pub started_at: SystemTime,
    pub report_dir: Option<PathBuf>,
    /// `point 2/4: concurrency=4` in a sweep: what its report is of.
    pub name: Option<String>,
    /// The live view's header: the name and the points left after it.
    pub label: Option<String>,
    /// The run directory (the latency interval log is streamed there).
    pub run_dir: PathBuf,
    /// `--metrics-listen`'s exporter, fed during the load.
    pub metrics: Option<crate::metrics::export::Exporter>,
    /// Mainnet caps: the run's spend ledger, shared by its points.
    pub ledger: Option<std::sync::Arc<crate::engine::ledger::SpendLedger>>,
    /// `history:`'s phase before this load, when the scenario has one.
    pub history: Option<report::history_phase::HistoryPhase>,
}

/// What one load measured and how it ended.
pub(crate) struct Measured {
    pub summary: Summary,
    /// False when cut short (signal, error, a node died).
    pub complete: bool,
    pub thresholds_passed: bool,
    /// Each threshold's verdict (for `--junit`).
    pub thresholds: Vec<report::ThresholdResult>,
    /// The error that ended the load early (a node died, an RPC failed), or the
    /// report that could not be written.
    pub load_err: Option<anyhow::Error>,
    /// Average CPU % over the load of each node (scenario order), then `chain`,
    /// where the runtime read any.
    pub cpu_pct_avg: Vec<(String, f64)>,
    /// Each node's implementation, release, database and costs over the load.
    pub nodes: Vec<report::sweep::NodeFigures>,
    /// `history:`'s phase before the load (as the point was given it).
    pub history: Option<report::history_phase::HistoryPhase>,
}

/// What the steps after the load found, for the report.
#[derive(Default)]
struct AfterLoad {
    faults: Vec<crate::faults::FaultRecord>,
    channel_health: Vec<crate::faults::NodeHealth>,
    profiling: Option<crate::profile::ProfilingReport>,
    restarts: Vec<(String, RestartReport)>,
}

/// Runs one load on `network`, in `session`'s live view if there is one, prints its
/// summary and threshold verdicts (through `out`), and writes its report.
pub(super) async fn measure(
    point: Point<'_>,
    network: &Network,
    runtime: &mut dyn Runtime,
    signals: &Signals,
    out: &mut Output,
    mut session: Option<&mut tui::session::Session>,
) -> Measured {
    let (scenario, facts) = (point.scenario, point.facts);
    let cancel = &signals.cancel;
    let (readings_tx, readings_rx) = tokio::sync::watch::channel(Vec::new());
    let (machine_tx, machine_rx) = tokio::sync::watch::channel(None);
    let view = (session.as_deref_mut()).map(|s| (s, live_info(&point, readings_rx, machine_rx)));
    // Streamed during the load, copied into the report at the end.
    let hlog = (point.report_dir.as_ref()).map(|_| point.run_dir.join(metrics::hlog::FILE_NAME));
    let write_snapshot = snapshot_writer(&point);
    let exporter = point.metrics.clone();
    let (recorder, snapshots) = metrics::Recorder::new();
    // Until the report is written, a second signal still writes what was recorded.
    let loaded = Arc::new(OnceLock::new());
    let forced_exit = (point.report_dir.as_ref()).map(|dir| {
        let words = forced_exit_report(&point, (recorder.downgrade(), loaded.clone()), dir);
        signals.on_forced_exit(words)
    });
    let mut faults = fault_runner(scenario, network, &recorder, &snapshots);
    let network_load = activity::plan(scenario, network);
    let marks = reconcile::mark(network).await;
    let load = run_load(
        scenario,
        network,
        (recorder, snapshots),
        (network_load.clone(), point.ledger.clone()),
        cancel.clone(),
        view,
        hlog,
        &write_snapshot,
        exporter.as_ref().map(|x| (x, readings_tx.subscribe())),
    );
    let profiling = start_profiles(scenario, network, runtime, &point, cancel, out).await;
    let mut resources = metrics::ResourceLog::new();
    let (mut summary, mut load_err) = watch_processes(
        runtime,
        load,
        cancel,
        &mut resources,
        (&readings_tx, &machine_tx),
        faults.as_mut(),
    )
    .await;
    let _ = loaded.set(summary.clone());
    let timeout = scenario.workload.payment_timeout;
    let reconciliation = reconcile::after_load(network, &marks, &mut summary, timeout).await;
    let after = after_load(
        (&point, network, runtime, signals, out),
        (faults, profiling, &summary, &resources),
        &session,
        &mut load_err,
    )
    .await;
    let interrupted_by = interruption(signals, load_err.as_ref());
    let complete = interrupted_by.is_none();
    print_summary(out, &summary, reconciliation.as_ref());
    let thresholds = verdicts(scenario, &summary, out);
    let thresholds_passed = report::thresholds::all_passed(&thresholds);
    let nodes = node_figures(scenario, facts, &resources, &after.restarts, &summary);
    if let Some(dir) = &point.report_dir {
        let mut report = build_report(
            scenario,
            facts,
            point.log,
            summary.clone(),
            point.started_at,
            complete,
            interrupted_by,
        );
        add_resources(&mut report, &resources);
        report.point = point.name.clone();
        report.network = (network_load.as_ref())
            .map(|(_, a)| report::network::build(scenario, a, &summary, &point.log.steps));
        report.thresholds = thresholds.clone();
        report.reconciliation = reconciliation;
        report.mainnet_caps = point.ledger.as_deref().map(super::model::mainnet_caps);
        report.history = point.history.clone();
        if let Err(e) = write_report(report, after, (&point, dir), session.as_deref(), out) {
            load_err.get_or_insert(e);
        }
    }
    drop(forced_exit);
    let cpu_pct_avg = cpu_pct_avg(scenario, &resources, summary.ok);
    Measured {
        summary,
        complete,
        thresholds_passed,
        thresholds,
        load_err,
        cpu_pct_avg,
        nodes,
        history: point.history.clone(),
    }
}

/// What the live view shows of this point besides the load.
fn live_info(
    point: &Point<'_>,
    readings: tokio::sync::watch::Receiver<Vec<metrics::ResourceReading>>,
    machine: tokio::sync::watch::Receiver<Option<metrics::host::MachineNow>>,
) -> tui::TuiInfo {
    let mut info = tui_info(point.scenario, point.facts, readings);
    info.machine = Some(machine);
    info.point = point.label.clone();
    info
}

/// The point's summary table and its reconciliation with the nodes, on stdout.
fn print_summary(
    out: &mut Output,
    summary: &Summary,
    reconciliation: Option<&report::reconciliation::Reconciliation>,
) {
    out.stdout(headless::summary_table(summary));
    for line in reconciliation.iter().flat_map(|r| r.lines()) {
        out.stdout(line);
    }
}

/// The fault runner of a scenario with `faults:` or `mining:`.
fn fault_runner(
    scenario: &Scenario,
    network: &Network,
    recorder: &metrics::Recorder,
    snapshots: &tokio::sync::watch::Receiver<metrics::Snapshot>,
) -> Option<crate::faults::FaultRunner> {
    (!scenario.faults.is_empty() || scenario.mining.is_some()).then(|| {
        crate::faults::FaultRunner::new(
            scenario.faults.clone(),
            recorder,
            snapshots.clone(),
            fault_network(scenario, network),
        )
    })
}

/// Why the point did not finish, redacted: the signal received, else the error that
/// ended the load.
fn interruption(signals: &Signals, load_err: Option<&anyhow::Error>) -> Option<String> {
    (signals.received().map(str::to_string))
        .or_else(|| load_err.map(|e| format!("{e:#}")))
        .map(|why| crate::redact::redact_text(&why))
}

/// Each node's and the chain's average CPU during the load, for the sweep's table.
fn cpu_pct_avg(
    scenario: &Scenario,
    resources: &metrics::ResourceLog,
    ok: u64,
) -> Vec<(String, f64)> {
    (scenario.nodes.iter().map(|n| n.name.as_str()))
        .chain(std::iter::once(crate::chain::CHAIN_NAME))
        .filter_map(|name| {
            let avg = resources.report(name, ok).cpu_pct_avg?;
            Some((name.to_string(), avg))
        })
        .collect()
}

/// What a second signal (a forced exit) writes before the report is: the report of
/// what the load recorded until then, so that it is not lost. It says so in
/// `interrupted_by`: payments in flight and the workers' last unmerged batches are not
/// in it, and nothing was reconciled with the nodes, as the tool exits at once.
fn forced_exit_report(
    point: &Point<'_>,
    (recorder, loaded): (metrics::WeakRecorder, Arc<OnceLock<Summary>>),
    dir: &Path,
) -> crate::run::signals::ForcedExit {
    let none = metrics::Recorder::new().0.finish();
    let facts = (point.scenario, point.facts, point.log);
    let mut report = build_report(
        facts.0,
        facts.1,
        facts.2,
        none,
        point.started_at,
        false,
        None,
    );
    report.point = point.name.clone();
    let dir = dir.to_path_buf();
    Box::new(move |first: &str| {
        // The load's summary once it ended (the recorder is gone then), else so far.
        let Some(results) = loaded.get().cloned().or_else(|| recorder.summary_now()) else {
            return;
        };
        report.results = results;
        report.finished_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
        report.interrupted_by = Some(format!(
            "{first}, then a second signal: the tool exited at once, with the figures \
             recorded until then (payments in flight left out, nothing reconciled with \
             the nodes, no node resources)"
        ));
        match report::write_all(&report, &dir) {
            Ok(_) => crate::lines::errln!("report (partial, forced exit): {}", dir.display()),
            Err(e) => crate::lines::errln!("partial report not written: {e:#}"),
        }
    })
}

/// `r` in the live view: the report so far, into <report dir>/snapshots/<s>/ (or
/// ./lnbench-snapshots-<scenario>/<s>/ without --report). The report is built at once
/// (it borrows the run's facts); its files (charts, HTML) are written on a blocking
/// thread, so the load goes on meanwhile.
fn snapshot_writer<'a>(point: &'a Point<'_>) -> impl Fn(Summary) -> SnapshotWrite + 'a {
    let snapshot_root = point.report_dir.as_ref().map_or_else(
        || PathBuf::from(format!("lnbench-snapshots-{}", point.scenario.name)),
        |d| d.join("snapshots"),
    );
    move |summary: Summary| -> SnapshotWrite {
        let at = format!("{:.0}s", summary.elapsed_s);
        let why = format!("snapshot taken {at} into the load; the run went on");
        let report = build_report(
            point.scenario,
            point.facts,
            point.log,
            summary,
            point.started_at,
            false,
            Some(why),
        );
        let dir = snapshot_root.join(at);
        tokio::task::spawn_blocking(move || report::write_all(&report, &dir).map(|_| dir))
    }
}

/// The steps after the load: faults settled and described, channel health read,
/// profiles finished, and `after_load: restart:` run (its error ends the point).
#[allow(
    clippy::type_complexity,
    reason = "the point's context and what the load left, passed as two groups"
)]
async fn after_load(
    (point, network, runtime, signals, out): (
        &Point<'_>,
        &Network,
        &mut dyn Runtime,
        &Signals,
        &mut Output,
    ),
    (faults, profiling, summary, resources): (
        Option<crate::faults::FaultRunner>,
        Option<crate::profile::Running>,
        &Summary,
        &metrics::ResourceLog,
    ),
    session: &Option<&mut tui::session::Session>,
    load_err: &mut Option<anyhow::Error>,
) -> AfterLoad {
    let scenario = point.scenario;
    let mut after = AfterLoad::default();
    if let Some(f) = faults {
        metrics_endpoint::phase(point.metrics.as_ref(), "faults");
        after.faults = f.finish(runtime).await;
        for r in &after.faults {
            out.stderr(crate::faults::describe(r));
        }
    }
    if !scenario.faults.is_empty() {
        after.channel_health =
            crate::faults::channel_health(network.nodes.values().map(|r| &r.node)).await;
    }
    if let Some(running) = profiling {
        after.profiling = Some(running.finish(summary).await);
    }
    for p in after.profiling.iter().flat_map(|p| &p.profiles) {
        out.stderr(crate::profile::describe(p));
    }
    if !scenario.restart.is_empty() && load_err.is_none() && !signals.cancel.is_cancelled() {
        metrics_endpoint::phase(point.metrics.as_ref(), "restart");
        let cancel = &signals.cancel;
        match restart_after_load(scenario, network, runtime, resources, cancel, session).await {
            Ok(done) => after.restarts = done,
            Err(e) => *load_err = Some(e),
        }
        for (name, r) in &after.restarts {
            out.stderr(format!(
                "restart {name}: stopped in {:.1} s; RPC answered {:.1} s and {} channels \
                 were active {:.1} s after the start",
                r.stop_s, r.rpc_s, r.active_channels, r.channels_s
            ));
        }
    }
    after
}

/// Evaluates the point's thresholds and prints each verdict.
fn verdicts(
    scenario: &Scenario,
    summary: &Summary,
    out: &mut Output,
) -> Vec<report::thresholds::ThresholdResult> {
    let mut thresholds = report::thresholds::evaluate(&scenario.thresholds, summary);
    thresholds.extend(report::thresholds::evaluate_phases(
        &scenario.phase_thresholds,
        summary,
    ));
    for t in &thresholds {
        let verdict = if t.passed { "pass" } else { "FAIL" };
        let (actual, limit) = (t.actual_text(), t.limit_text());
        out.stdout(format!(
            "threshold {}: {verdict} ({actual}, limit {limit})",
            t.label()
        ));
    }
    thresholds
}

/// Completes the report with what followed the load and writes it, as a step of the
/// live view's closing when there is one. A report directory that fails now (full,
/// removed during the run) does not lose the load: the report goes beside the run
/// directory instead, and the error says where.
fn write_report(
    mut report: report::Report,
    after: AfterLoad,
    (point, dir): (&Point<'_>, &Path),
    session: Option<&tui::session::Session>,
    out: &mut Output,
) -> Result<()> {
    let mut closing = session.map(|s| StepLog::for_view(s.progress(), "tearing down"));
    if let Some(c) = &mut closing {
        c.begin("report written");
    }
    report.profiling = after.profiling;
    report.faults = after.faults;
    report.channel_health = after.channel_health;
    for node in &mut report.nodes {
        node.restart = (after.restarts.iter())
            .find(|(name, _)| *name == node.name)
            .map(|(_, r)| r.clone());
    }
    let written = report::write_all(&report, dir);
    if let Some(c) = &mut closing {
        c.end();
    }
    match written {
        Ok(paths) => {
            out.stderr(report::written_line(dir, &paths));
            Ok(())
        }
        Err(e) => Err(write_elsewhere(&report, point, dir, e, out)),
    }
}

/// Writes the report that `dir` could not take into [`fallback_dir`]; the error of
/// the point says where it went (or that it went nowhere).
fn write_elsewhere(
    report: &report::Report,
    point: &Point<'_>,
    dir: &Path,
    e: anyhow::Error,
    out: &mut Output,
) -> anyhow::Error {
    let instead = fallback_dir(point, dir);
    match report::write_all(report, &instead) {
        Ok(paths) => {
            let line = report::written_line(&instead, &paths);
            out.stderr(line.replacen("report: ", "report (instead): ", 1));
            e.context(format!(
                "the report could not be written into {}: it is in {} instead",
                dir.display(),
                instead.display()
            ))
        }
        Err(again) => e.context(format!(
            "the report could not be written into {} (nor into {}: {again:#})",
            dir.display(),
            instead.display()
        )),
    }
}

/// `<run dir>-report` (and the point's own directory below it in a sweep): beside
/// the run directory, which teardown removes, so the results and latency.hlog stay.
fn fallback_dir(point: &Point<'_>, dir: &Path) -> PathBuf {
    let mut name = (point.run_dir.file_name().unwrap_or_default()).to_os_string();
    name.push("-report");
    let root = point.run_dir.with_file_name(name);
    match (&point.label, dir.file_name()) {
        (Some(_), Some(leaf)) => root.join(leaf),
        _ => root,
    }
}

/// Starts the CPU profiles of `profile:` beside the load (the files go into the
/// report directory; without one nothing is profiled).
async fn start_profiles(
    scenario: &Scenario,
    network: &Network,
    runtime: &mut dyn Runtime,
    point: &Point<'_>,
    cancel: &CancellationToken,
    out: &mut Output,
) -> Option<crate::profile::Running> {
    let spec = scenario.profile.as_ref()?;
    let Some(dir) = &point.report_dir else {
        out.stderr("profile: not taken: profiles go into the report, give --report DIR".into());
        return None;
    };
    let targets = crate::profile::plan(spec, scenario, &network.pprof, runtime).await;
    Some(crate::profile::start(spec, targets, dir, cancel.clone()))
}

/// What a sweep's matrix shows of each node: what it ran and what the load cost it.
fn node_figures(
    scenario: &Scenario,
    facts: &RunFacts,
    resources: &metrics::ResourceLog,
    restarts: &[(String, RestartReport)],
    summary: &Summary,
) -> Vec<report::sweep::NodeFigures> {
    facts
        .nodes
        .iter()
        .map(|(spec, ready, _)| {
            let r = resources.report(&spec.name, summary.ok);
            report::sweep::NodeFigures {
                node: spec.name.clone(),
                implementation: spec.implementation.to_string(),
                version: ready.info.version.clone(),
                database: crate::node::driver(spec.implementation)
                    .database(spec.database, &spec.args),
                cpu_pct_avg: r.cpu_pct_avg,
                cpu_ms_per_payment: r
                    .cpu_pct_avg
                    .filter(|_| summary.ok > 0)
                    .map(|pct| pct / 100.0 * summary.active_s * 1000.0 / summary.ok as f64),
                bytes_per_payment: r.bytes_per_payment,
                data_dir_bytes: r.data_dir_bytes_end,
                restart_s: (restarts.iter())
                    .find(|(name, _)| *name == spec.name)
                    .map(|(_, r)| r.channels_s),
                completion: (super::model::role(scenario, &spec.name) == "sender")
                    .then(|| ready.node.completion().short()),
            }
        })
        .collect()
}

/// Restarts the scenario's `after_load: restart:` nodes in turn, showing the step;
/// a signal stops it (teardown follows).
async fn restart_after_load(
    scenario: &Scenario,
    network: &Network,
    runtime: &mut dyn Runtime,
    resources: &metrics::ResourceLog,
    cancel: &CancellationToken,
    session: &Option<&mut tui::session::Session>,
) -> Result<Vec<(String, RestartReport)>> {
    let mut log = match session.as_deref() {
        Some(s) => StepLog::for_view(s.progress(), "restarting nodes"),
        None => StepLog::default(),
    };
    let before = |name: &str| network.nodes.get(name).map(|r| r.node.clone());
    let data_dir = |name: &str| {
        (resources.latest().iter())
            .find(|r| r.name == name)
            .and_then(|r| r.data_dir_bytes)
    };
    let links = peer_links(scenario, network);
    let step = crate::restart::restart_nodes(
        &scenario.restart,
        runtime,
        before,
        data_dir,
        &links,
        &mut log,
    );
    let done = tokio::select! {
        r = step => r,
        () = cancel.cancelled() => return Ok(Vec::new()),
    };
    done.map_err(|e| e.context("restarting nodes after the load"))
}

/// The peer connections as setup dialled them (through the fault proxy when links
/// go through it), each once.
fn peer_links(scenario: &Scenario, network: &Network) -> Vec<crate::restart::Link> {
    let mut links: Vec<crate::restart::Link> = Vec::new();
    for ch in &scenario.channels {
        let Some(to) = network.nodes.get(&ch.to) else {
            continue;
        };
        let via = (network.links.as_ref()).and_then(|l| l.dial_addr(&ch.from, &ch.to));
        let link = crate::restart::Link {
            from: ch.from.clone(),
            to: ch.to.clone(),
            to_pubkey: to.info.pubkey.clone(),
            to_addr: via.unwrap_or(&to.p2p_addr).to_string(),
        };
        if !links.contains(&link) {
            links.push(link);
        }
    }
    links
}

/// What the fault runner needs of the network.
fn fault_network(scenario: &Scenario, network: &Network) -> crate::faults::FaultNetwork {
    crate::faults::FaultNetwork {
        links: network.links.clone(),
        chain: network.chain.clone(),
        clients: (network.nodes.iter())
            .map(|(name, r)| (name.clone(), r.node.clone()))
            .collect(),
        peer_links: peer_links(scenario, network),
        mining: scenario.mining,
    }
}
