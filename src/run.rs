//! One benchmark run, start to end: run directory, signals, network up, setup, load,
//! report, teardown. Teardown happens here and only here, whatever ended the run.

use crate::chain::MiningWallet;
use crate::engine::{self, Plan, Route};
use crate::metrics::{self, Summary};
use crate::report;
use crate::runtime::Runtime;
use crate::scenario::Scenario;
use crate::setup::{self, ReadyNode, StepLog};
use crate::{Exit, headless, tui};
use anyhow::{Context, Result};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio_util::sync::CancellationToken;

mod activity;
mod choose;
mod external;
pub(crate) mod metrics_endpoint;
mod model;
mod output;
mod signals;

pub(crate) use choose::{choose_runtime, preflight_points};
use model::{add_resources, build_report, describe_load};
use output::{Output, start_session, tui_info};
pub(crate) use signals::Signals;

/// How long a node may take to start and sync before the run gives up.
const NODE_READY_TIMEOUT: Duration = Duration::from_secs(90);

/// Options of one run that do not come from the scenario.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub report_dir: Option<PathBuf>,
    pub keep: bool,
    pub run_dir_parent: Option<PathBuf>,
    /// Follow the run in the live terminal view instead of progress lines.
    pub tui: bool,
    /// `--metrics-listen`: serve Prometheus / OpenMetrics here during the run.
    pub metrics_listen: Option<std::net::SocketAddr>,
}

/// Runs `scenario` to the end and returns the exit code. A scenario with `sweep:`
/// runs its points in turn (`crate::sweep`).
pub async fn execute(scenario: Scenario, opts: RunOptions) -> Result<Exit> {
    if scenario.sweep.is_some() {
        return crate::sweep::execute(scenario, opts).await;
    }
    crate::tls::install_crypto_provider();
    let chosen = choose_runtime(&scenario).await?;
    let exporter = metrics_endpoint::start(opts.metrics_listen, &scenario.name).await?;
    let started_at = SystemTime::now();
    let run_id = run_id(&scenario.name, started_at, None);
    let run_dir = make_run_dir(&opts, &run_id)?;
    eprintln!(
        "run {run_id}: {} ({} nodes)",
        scenario.name,
        scenario.nodes.len()
    );

    let mut runtime = chosen.create(&run_id, &scenario.name, &run_dir, opts.keep);
    let mut facts = RunFacts {
        runtime: runtime.describe(),
        ..RunFacts::default()
    };
    eprintln!("runtime: {}", facts.runtime);
    if let Some(m) = &exporter {
        m.set_runtime(&facts.runtime, runtime.measures_resources());
    }
    // The live view owns the terminal from here to the end of teardown; until then
    // lines for the terminal wait in `out`.
    let cancel = CancellationToken::new();
    let mut session = opts
        .tui
        .then(|| start_session(&scenario, &facts.runtime, &cancel))
        .flatten();
    let mut out = Output::new(session.is_some());
    let signals = Signals::watch_with(cancel, session.is_some());
    let mut log = match &session {
        Some(s) => StepLog::for_view(s.progress(), "setting up"),
        None => StepLog::default(),
    };

    let outcome = tokio::select! {
        r = bring_up(&scenario, runtime.as_mut(), &mut log, &mut facts) => r.map(Some),
        () = signals.cancel.cancelled() => Ok(None),
    };
    match &outcome {
        Err(e) => log.fail(&format!("{e:#}")),
        Ok(_) => log.end(),
    }
    // The first line of a setup error, for a partial report's `interrupted_by`.
    let outcome_err = outcome.as_ref().err().map(|e| e.to_string());
    let result = match outcome {
        Ok(Some(network)) => {
            let point = Point {
                scenario: &scenario,
                facts: &facts,
                log: &log,
                started_at,
                report_dir: opts.report_dir.clone(),
                tui: false,
                label: None,
                run_dir: run_dir.clone(),
                metrics: exporter.clone(),
            };
            let measured = measure_with(
                point,
                &network,
                runtime.as_mut(),
                &signals,
                &mut out,
                session.as_mut(),
            )
            .await;
            measured.exit(&signals)
        }
        // Cut short before the load: a partial report still says how far setup got.
        Ok(None) | Err(_) if opts.report_dir.is_some() => {
            let why = match &outcome_err {
                Some(e) => report::redact::redact_text(&format!("setup failed: {e}")),
                None => signals
                    .received()
                    .unwrap_or("stopped during setup")
                    .to_string(),
            };
            let report = build_report(
                &scenario,
                &facts,
                &log,
                metrics::Recorder::new().0.finish(),
                started_at,
                false,
                Some(why),
            );
            let dir = opts.report_dir.as_ref().expect("guarded");
            match report::write_all(&report, dir) {
                Ok(paths) => {
                    for path in paths {
                        out.stderr(format!("report (partial): {}", path.display()));
                    }
                }
                Err(e) => out.stderr(format!("partial report not written: {e:#}")),
            }
            match outcome {
                Err(e) => Err(e),
                _ => Ok(Exit::Interrupted),
            }
        }
        Ok(None) => Ok(Exit::Interrupted),
        Err(e) => Err(e),
    };

    let mut teardown = match &session {
        Some(s) => StepLog::for_view(s.progress(), "tearing down"),
        None => StepLog::default(),
    };
    teardown.begin("nodes and chain stopped");
    metrics_endpoint::phase(exporter.as_ref(), "teardown");
    let down = runtime.down().await;
    teardown.end();
    metrics_endpoint::phase(exporter.as_ref(), "finished");
    if let Some(session) = session.take() {
        // The terminal is back: now the lines kept for it.
        match session.finish().await {
            Ok(Some(tui::TuiExit::Quit)) => eprintln!("stopped from the live view"),
            Ok(_) => {}
            Err(e) => eprintln!("live view failed: {e:#}"),
        }
        out.flush();
    }
    report_down(&down, &run_dir, opts.keep);
    signals.stop();
    let exit = result?;
    down.context("tearing down the run")?;
    Ok(exit)
}

/// `<scenario>-<unix seconds>-<pid>`, and `-net<N>` for the N-th network of a sweep.
pub(crate) fn run_id(name: &str, started_at: SystemTime, network: Option<usize>) -> String {
    let secs = started_at
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let id = format!("{name}-{secs}-{}", std::process::id());
    match network {
        Some(n) => format!("{id}-net{n}"),
        None => id,
    }
}

pub(crate) fn make_run_dir(opts: &RunOptions, run_id: &str) -> Result<PathBuf> {
    let parent = opts
        .run_dir_parent
        .clone()
        .unwrap_or_else(std::env::temp_dir);
    let run_dir = parent.join(format!("lnbench-{run_id}"));
    std::fs::create_dir_all(&parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    // Fresh and private: credentials and logs go in it. An existing path (a directory
    // of another run, or a symlink planted there) is refused, never reused.
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&run_dir)
            .with_context(|| {
                format!(
                    "cannot create run directory {} (it must not exist yet: remove it, or \
                     give --run-dir another parent)",
                    run_dir.display()
                )
            })?;
    }
    // Names this process, so `lnbench-tui down` removes the directory only once we are gone.
    crate::leftovers::claim(&run_dir)
        .with_context(|| format!("cannot write into run directory {}", run_dir.display()))?;
    Ok(run_dir)
}

/// Stops everything the runtime started and says so; the caller decides what a
/// teardown error means for the exit code.
pub(crate) async fn teardown(
    runtime: &mut dyn Runtime,
    run_dir: &std::path::Path,
    keep: bool,
) -> Result<(), crate::runtime::RuntimeError> {
    eprintln!("==> teardown ...");
    let down = runtime.down().await;
    report_down(&down, run_dir, keep);
    down
}

fn report_down(
    down: &Result<(), crate::runtime::RuntimeError>,
    run_dir: &std::path::Path,
    keep: bool,
) {
    match down {
        Ok(()) if keep => {
            crate::leftovers::release(run_dir);
            eprintln!("    kept run directory {}", run_dir.display());
        }
        Ok(()) => eprintln!("    all processes (or containers) stopped, run directory removed"),
        Err(e) => eprintln!("    teardown: {e:#}"),
    }
}

/// One load on a network that is up: the scenario (a sweep point or the whole
/// scenario) and where its report goes.
pub(crate) struct Point<'a> {
    pub scenario: &'a Scenario,
    pub facts: &'a RunFacts,
    pub log: &'a StepLog,
    pub started_at: SystemTime,
    pub report_dir: Option<PathBuf>,
    /// Show this load in a live view of its own (a sweep's points).
    pub tui: bool,
    /// `point 2/4: concurrency=4` in a sweep.
    pub label: Option<String>,
    /// The run directory (the latency interval log is streamed there).
    pub run_dir: PathBuf,
    /// `--metrics-listen`'s exporter, fed during the load.
    pub metrics: Option<crate::metrics::export::Exporter>,
}

/// What one load measured and how it ended.
pub(crate) struct Measured {
    pub summary: Summary,
    /// False when cut short (signal, error, a node died).
    pub complete: bool,
    pub thresholds_passed: bool,
    /// The error that ended the load early (a node died, an RPC failed), or the
    /// report that could not be written.
    pub load_err: Option<anyhow::Error>,
    /// The operator quit the live view.
    pub quit: bool,
    /// Average CPU % over the load of each node (scenario order), then `chain`,
    /// where the runtime read any.
    pub cpu_pct_avg: Vec<(String, f64)>,
    /// Each node's implementation, release, database and costs over the load.
    pub nodes: Vec<report::sweep::NodeFigures>,
}

impl Measured {
    pub fn exit(self, signals: &Signals) -> Result<Exit> {
        match self.load_err {
            Some(e) => Err(e),
            None if signals.received().is_some() => Ok(Exit::Interrupted),
            None if !self.thresholds_passed => Ok(Exit::ThresholdFailed),
            None => Ok(Exit::Ok),
        }
    }
}

/// Runs one load on `network` (a sweep point), in a live view of its own if
/// `point.tui`, and writes its report.
pub(crate) async fn measure(
    point: Point<'_>,
    network: &Network,
    runtime: &mut dyn Runtime,
    signals: &Signals,
) -> Measured {
    let mut own = point
        .tui
        .then(|| start_session(point.scenario, &point.facts.runtime, &signals.cancel))
        .flatten();
    let mut out = Output::new(own.is_some());
    let mut measured = measure_with(point, network, runtime, signals, &mut out, own.as_mut()).await;
    if let Some(session) = own {
        match session.finish().await {
            Ok(Some(tui::TuiExit::Quit)) => measured.quit = true,
            Ok(_) => {}
            Err(e) => eprintln!("live view failed: {e:#}"),
        }
    }
    out.flush();
    measured
}

/// Runs one load on `network`, in `session`'s live view if there is one, prints its
/// summary and threshold verdicts (through `out`), and writes its report (before any
/// teardown, so a slow teardown cannot lose it).
async fn measure_with(
    point: Point<'_>,
    network: &Network,
    runtime: &mut dyn Runtime,
    signals: &Signals,
    out: &mut Output,
    mut session: Option<&mut tui::session::Session>,
) -> Measured {
    let (scenario, facts, log, started_at) =
        (point.scenario, point.facts, point.log, point.started_at);
    let cancel = &signals.cancel;
    let (readings_tx, readings_rx) = tokio::sync::watch::channel(Vec::new());
    let view = session.as_deref_mut().map(|s| {
        let mut info = tui_info(scenario, facts, readings_rx);
        info.point = point.label.clone();
        (s, info)
    });
    // Streamed during the load, copied into the report at the end.
    let hlog = (point.report_dir.as_ref()).map(|_| point.run_dir.join(metrics::hlog::FILE_NAME));
    // `r` in the live view: the report so far, into <report dir>/snapshots/<s>/
    // (or ./lnbench-snapshots-<scenario>/<s>/ without --report).
    let snapshot_root = point.report_dir.as_ref().map_or_else(
        || PathBuf::from(format!("lnbench-snapshots-{}", scenario.name)),
        |d| d.join("snapshots"),
    );
    // The report is built here (it borrows the run's facts); its files (charts, HTML)
    // are written on a blocking thread, so the load goes on meanwhile.
    let write_snapshot = |summary: Summary| -> SnapshotWrite {
        let at = format!("{:.0}s", summary.elapsed_s);
        let why = format!("snapshot taken {at} into the load; the run went on");
        let report = build_report(scenario, facts, log, summary, started_at, false, Some(why));
        let dir = snapshot_root.join(at);
        tokio::task::spawn_blocking(move || report::write_all(&report, &dir).map(|_| dir))
    };
    let exporter = point.metrics.clone();
    let (recorder, snapshots) = metrics::Recorder::new();
    let mut faults = (!scenario.faults.is_empty()).then(|| {
        crate::faults::FaultRunner::new(
            scenario.faults.clone(),
            &recorder,
            snapshots.clone(),
            fault_network(scenario, network),
        )
    });
    let network_load = activity::plan(scenario, network);
    let load = run_load(
        scenario,
        network,
        (recorder, snapshots),
        network_load.clone(),
        cancel.clone(),
        view,
        hlog,
        &write_snapshot,
        exporter.as_ref().map(|x| (x, readings_tx.subscribe())),
    );
    let profiling = start_profiles(scenario, network, runtime, &point, cancel, out).await;
    let mut resources = metrics::ResourceLog::new();
    let (summary, mut load_err) = watch_processes(
        runtime,
        load,
        cancel,
        &mut resources,
        &readings_tx,
        faults.as_mut(),
    )
    .await;
    let fault_records = match faults {
        Some(f) => {
            metrics_endpoint::phase(exporter.as_ref(), "faults");
            let records = f.finish(runtime).await;
            for r in &records {
                out.stderr(crate::faults::describe(r));
            }
            records
        }
        None => Vec::new(),
    };
    let channel_health = if scenario.faults.is_empty() {
        Vec::new()
    } else {
        crate::faults::channel_health(network.nodes.values().map(|r| &r.node)).await
    };
    let profiling = match profiling {
        Some(running) => Some(running.finish(&summary).await),
        None => None,
    };
    for p in profiling.iter().flat_map(|p| &p.profiles) {
        out.stderr(crate::profile::describe(p));
    }
    // `after_load: restart:`, before the report is built (it holds the timings).
    let mut restarts = Vec::new();
    if !scenario.restart.is_empty() && load_err.is_none() && !cancel.is_cancelled() {
        metrics_endpoint::phase(exporter.as_ref(), "restart");
        match restart_after_load(scenario, network, runtime, &resources, cancel, &session).await {
            Ok(done) => restarts = done,
            Err(e) => load_err = Some(e),
        }
        for (name, r) in &restarts {
            out.stderr(format!(
                "restart {name}: stopped in {:.1} s; RPC answered {:.1} s and {} channels \
                 were active {:.1} s after the start",
                r.stop_s, r.rpc_s, r.active_channels, r.channels_s
            ));
        }
    }
    let interrupted_by = signals
        .received()
        .map(str::to_string)
        .or_else(|| load_err.as_ref().map(|e| format!("{e:#}")))
        .map(|why| report::redact::redact_text(&why));
    let complete = interrupted_by.is_none();
    out.stdout(headless::summary_table(&summary));
    let mut thresholds = report::thresholds::evaluate(&scenario.thresholds, &summary);
    thresholds.extend(report::thresholds::evaluate_phases(
        &scenario.phase_thresholds,
        &summary,
    ));
    for t in &thresholds {
        let verdict = if t.passed { "pass" } else { "FAIL" };
        let (actual, limit) = (t.actual_text(), t.limit_text());
        out.stdout(format!(
            "threshold {}: {verdict} ({actual}, limit {limit})",
            t.label()
        ));
    }
    let thresholds_passed = report::thresholds::all_passed(&thresholds);
    if let Some(dir) = &point.report_dir {
        let mut closing = session
            .as_deref()
            .map(|s| StepLog::for_view(s.progress(), "tearing down"));
        if let Some(c) = &mut closing {
            c.begin("report written");
        }
        let mut report = build_report(
            scenario,
            facts,
            log,
            summary.clone(),
            started_at,
            complete,
            interrupted_by,
        );
        add_resources(&mut report, &resources);
        report.network = (network_load.as_ref())
            .map(|(_, a)| report::network::build(scenario, a, &summary, &log.steps));
        report.profiling = profiling;
        report.faults = fault_records.clone();
        report.channel_health = channel_health.clone();
        for node in &mut report.nodes {
            node.restart = (restarts.iter())
                .find(|(name, _)| *name == node.name)
                .map(|(_, r)| r.clone());
        }
        report.thresholds = thresholds;
        let written = report::write_all(&report, dir);
        if let Some(c) = &mut closing {
            c.end();
        }
        match written {
            Ok(paths) => {
                for path in paths {
                    out.stderr(format!("report: {}", path.display()));
                }
            }
            Err(e) => {
                load_err.get_or_insert(e);
            }
        }
    }
    let cpu_pct_avg = scenario
        .nodes
        .iter()
        .map(|n| n.name.as_str())
        .chain(std::iter::once(crate::runtime::local::CHAIN_NAME))
        .filter_map(|name| {
            let avg = resources.report(name, summary.ok).cpu_pct_avg?;
            Some((name.to_string(), avg))
        })
        .collect();
    let nodes = node_figures(facts, &resources, &restarts, &summary);
    Measured {
        summary,
        complete,
        thresholds_passed,
        load_err,
        quit: false,
        cpu_pct_avg,
        nodes,
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
    facts: &RunFacts,
    resources: &metrics::ResourceLog,
    restarts: &[(String, crate::restart::RestartReport)],
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
                restart_s: (restarts.iter())
                    .find(|(name, _)| *name == spec.name)
                    .map(|(_, r)| r.channels_s),
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
) -> Result<Vec<(String, crate::restart::RestartReport)>> {
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
    }
}

/// Runs the load while watching the started processes: a node (or the chain) that
/// exits ends the load, and the run fails with the last lines of its log. Resource
/// readings are taken once a second (and once more, fresh, at the end) into `resources`, the
/// latest also to `readings` for the live view. The watcher runs beside the load, so
/// a slow reading never holds the load up.
async fn watch_processes(
    runtime: &mut dyn Runtime,
    load: impl std::future::Future<Output = (Summary, Option<anyhow::Error>)>,
    cancel: &CancellationToken,
    resources: &mut metrics::ResourceLog,
    readings: &tokio::sync::watch::Sender<Vec<metrics::ResourceReading>>,
    mut faults: Option<&mut crate::faults::FaultRunner>,
) -> (Summary, Option<anyhow::Error>) {
    let outcome = {
        let watcher = async {
            // Faults are stepped ten times a second; without them, twice.
            let every = if faults.is_some() { 100 } else { 500 };
            let mut tick = tokio::time::interval(Duration::from_millis(every));
            let mut last_read: Option<tokio::time::Instant> = None;
            loop {
                tick.tick().await;
                if let Some(f) = faults.as_deref_mut() {
                    f.step(runtime).await;
                }
                if let Some((name, status)) = runtime.exited() {
                    cancel.cancel();
                    return anyhow::anyhow!(
                        "{name} exited during the load ({status}); last lines of its log:\n{}",
                        runtime.log_tail(&name, 20)
                    );
                }
                // Resources once a second.
                if last_read.is_none_or(|t| t.elapsed() >= Duration::from_millis(950)) {
                    last_read = Some(tokio::time::Instant::now());
                    let mut now = runtime.resources().await;
                    readings.send_replace(now.clone());
                    now.push(metrics::tool_reading());
                    resources.record(now);
                }
            }
        };
        tokio::pin!(load, watcher);
        let mut died: Option<anyhow::Error> = None;
        loop {
            tokio::select! {
                (summary, err) = &mut load => break (summary, died.or(err)),
                e = &mut watcher, if died.is_none() => died = Some(e),
            }
        }
    };
    resources.record(runtime.resources_fresh().await);
    outcome
}

/// What setup learned, for the report.
#[derive(Default)]
pub struct RunFacts {
    /// `local`, or `docker (images)`.
    pub runtime: String,

    chain_version: String,
    nodes: Vec<(crate::scenario::NodeSpec, ReadyNode, PathBuf)>,
    /// The database servers the runtime started for the nodes.
    services: Vec<crate::runtime::Service>,
}

impl RunFacts {
    /// Facts of a run on `runtime`, before setup.
    pub fn on(runtime: &dyn Runtime) -> Self {
        RunFacts {
            runtime: runtime.describe(),
            ..RunFacts::default()
        }
    }
}

/// The network, ready for load.
pub struct Network {
    nodes: HashMap<String, ReadyNode>,
    /// LND's profiling listener by node name (`profile:`).
    pprof: HashMap<String, String>,
    /// The fault proxy's links, when peer connections go through it.
    links: Option<crate::links::LinkProxies>,
    /// The tool's chain client (None for external nodes): `mine:` faults.
    chain: Option<Arc<dyn crate::chain::ChainBackend>>,
}

impl Network {
    /// The node of that instance name.
    pub fn node(&self, name: &str) -> Option<&ReadyNode> {
        self.nodes.get(name)
    }
}

/// Setup on its own: the chain, the scenario's nodes, funds, channels, and probes
/// until each sender can pay each receiver. (Tests use it to drive real nodes directly.)
pub async fn bring_up(
    scenario: &Scenario,
    runtime: &mut dyn Runtime,
    log: &mut StepLog,
    facts: &mut RunFacts,
) -> Result<Network> {
    if scenario.runtime == crate::scenario::RuntimeKind::External {
        return external::bring_up(scenario, log, facts).await;
    }
    log.begin("chain up");
    let wallet = MiningWallet::generate();
    let endpoint = runtime
        .start_chain(&scenario.chain, &wallet.address().to_string())
        .await?;
    facts.chain_version = endpoint.version.clone();
    log.progress("mining until coins are mature");
    let chain = crate::chain::driver(endpoint.kind)
        .connect(&endpoint, wallet)
        .await
        .context("preparing the regtest chain")?;
    let chain_arc = chain;
    let chain = chain_arc.as_ref();
    let height = chain.height().await?;

    log.begin("nodes up");
    runtime.set_etcd_members(scenario.etcd_members);
    // Profiled LND nodes get their pprof listener (loopback) on the command line.
    let (specs, pprof) = crate::profile::listener_args(scenario, runtime);
    let endpoints = runtime.start_nodes(&specs, &endpoint).await?;
    facts.services = runtime.services();
    let mut nodes = HashMap::new();
    for (spec, ep) in scenario.nodes.iter().zip(&endpoints) {
        let driver = crate::node::driver(spec.implementation);
        // A node can pass the runtime's readiness check and exit a moment later (a flag
        // or a chain backend it refuses): its log says why.
        let node = driver.connect(ep).await.with_context(|| {
            format!(
                "{} {} stopped answering right after it started; last lines of its log:\n{}",
                spec.implementation,
                spec.name,
                runtime.log_tail(&spec.name, 20)
            )
        })?;
        let starting = |e: &crate::node::NodeError| driver.is_starting_up(e);
        let info = setup::wait_synced(node.as_ref(), height, NODE_READY_TIMEOUT, starting)
            .await
            .with_context(|| {
                format!(
                    "{} {} did not become ready; last lines of its log:\n{}",
                    spec.implementation,
                    spec.name,
                    runtime.log_tail(&spec.name, 20)
                )
            })?;
        log.progress(&format!("{} ready ({})", spec.name, info.version));
        let ready = ReadyNode {
            node,
            info,
            p2p_addr: ep.p2p_addr.clone(),
        };
        facts
            .nodes
            .push((spec.clone(), ready.clone(), ep.binary.clone()));
        nodes.insert(spec.name.clone(), ready);
    }

    log.begin("wallets funded");
    setup::fund_openers(chain, &nodes, &scenario.channels, log).await?;

    let links = if scenario.proxied_links() {
        log.begin("links through the fault proxy");
        let directed = crate::links::directed(&scenario.channels);
        let host = runtime.start_link_proxy(directed.len()).await?;
        let wanted: Vec<(String, String, String)> = (directed.into_iter())
            .map(|(from, to)| {
                let upstream = nodes[&to].p2p_addr.clone();
                (from, to, upstream)
            })
            .collect();
        let proxies = crate::links::LinkProxies::create(&host, &wanted, &scenario.links).await?;
        facts.services = runtime.services();
        log.progress(&format!("{} links proxied", proxies.links().len()));
        Some(proxies)
    } else {
        None
    };

    log.begin("peers connected");
    setup::connect_peers(&nodes, &scenario.channels, links.as_ref(), log).await?;

    log.begin("channels active");
    setup::open_channels(chain, &nodes, &scenario.channels, log).await?;

    log.begin("routes ready");
    let w = &scenario.workload;
    let names: Vec<(String, String)> = activity::probes(scenario).unwrap_or_else(|| {
        (w.senders.iter())
            .flat_map(|s| w.receivers.iter().map(move |r| (s.clone(), r.clone())))
            .collect()
    });
    let pairs: Vec<(ReadyNode, ReadyNode)> = (names.iter())
        .map(|(s, r)| (nodes[s].clone(), nodes[r].clone()))
        .collect();
    setup::wait_routable(&pairs, log).await?;
    log.end();
    Ok(Network {
        nodes,
        pprof,
        links,
        chain: Some(Arc::clone(&chain_arc)),
    })
}

/// A report snapshot being written on a blocking thread: the directory, when done.
type SnapshotWrite = tokio::task::JoinHandle<Result<PathBuf>>;

/// Runs the workload; returns the summary of whatever was done, and the error that
/// ended the load early, if any.
#[allow(
    clippy::too_many_arguments,
    reason = "the pieces of one load, each from a different owner; a struct would only rename them"
)]
async fn run_load(
    scenario: &Scenario,
    network: &Network,
    (recorder, snapshots): (
        metrics::Recorder,
        tokio::sync::watch::Receiver<metrics::Snapshot>,
    ),
    network_load: Option<(Vec<Route>, std::sync::Arc<engine::activity::ActivityPlan>)>,
    cancel: CancellationToken,
    view: Option<(&mut tui::session::Session, tui::TuiInfo)>,
    interval_log: Option<PathBuf>,
    write_snapshot: &dyn Fn(Summary) -> SnapshotWrite,
    exporter: Option<(
        &crate::metrics::export::Exporter,
        tokio::sync::watch::Receiver<Vec<metrics::ResourceReading>>,
    )>,
) -> (Summary, Option<anyhow::Error>) {
    let w = &scenario.workload;
    let mut routes = Vec::new();
    let (spread, activity) = network_load.unzip();
    for sender in w.senders.iter().filter(|_| spread.is_none()) {
        for receiver in &w.receivers {
            let (s, r) = (&network.nodes[sender], &network.nodes[receiver]);
            routes.push(Route {
                sender: s.node.clone(),
                receiver: r.node.clone(),
                receiver_pubkey: r.info.pubkey.clone(),
            });
        }
    }
    let plan = Plan {
        routes: spread.unwrap_or(routes),
        kind: w.kind,
        amount_msat: w.amount_msat,
        load: w.load.clone(),
        stop: w.stop,
        payment_timeout: w.payment_timeout,
    };
    if let Some((x, readings)) = exporter {
        recorder.export_to(x.clone());
        x.follow(snapshots.clone(), readings);
    }
    if let Some(path) = interval_log {
        match metrics::IntervalLog::create(&path, recorder.started_wall()) {
            Ok(log) => recorder.log_intervals_to(log),
            Err(e) => eprintln!(
                "warning: no {}: cannot create {}: {e}",
                metrics::hlog::FILE_NAME,
                path.display()
            ),
        }
    }
    let (commands, command_rx) = tokio::sync::mpsc::unbounded_channel();
    // `r` in the live view asks for a report snapshot; the answer goes to its footer.
    let (snapshot_tx, mut snapshot_rx) = tokio::sync::mpsc::unbounded_channel();
    let (note_tx, note_rx) = tokio::sync::watch::channel(String::new());
    let mut snapshots_open = view.is_some();
    let printer = match view {
        // While the live view draws, nothing else may write to the terminal.
        Some((session, mut info)) => {
            info.report_snapshots = Some(tui::SnapshotChannel {
                requests: snapshot_tx,
                notes: note_rx,
            });
            session.load(tui::session::LoadView {
                snapshots,
                commands,
                info,
            });
            None
        }
        None => {
            eprintln!("==> load: {}", describe_load(&w.load));
            // Nothing sends commands in headless mode; a closed channel is fine.
            drop(commands);
            Some(tokio::spawn(headless::follow(snapshots, std::io::stderr())))
        }
    };
    let engine = engine::run_with_activity(plan, activity, recorder.clone(), command_rx, cancel);
    tokio::pin!(engine);
    // At most one snapshot is written at a time, off this loop.
    let mut writing: Option<SnapshotWrite> = None;
    let res = loop {
        tokio::select! {
            res = &mut engine => break res,
            request = snapshot_rx.recv(), if snapshots_open => match request {
                Some(()) if writing.is_some() => {
                    let _ = note_tx.send("a report snapshot is still being written".into());
                }
                Some(()) => {
                    let _ = note_tx.send("writing a report snapshot ...".into());
                    writing = Some(write_snapshot(recorder.summary_now()));
                }
                None => snapshots_open = false,
            },
            done = async { writing.as_mut().expect("guarded").await }, if writing.is_some() => {
                writing = None;
                let note = match done {
                    Ok(Ok(dir)) => format!("report snapshot written to {}", dir.display()),
                    Ok(Err(e)) => format!("report snapshot failed: {e:#}"),
                    Err(e) => format!("report snapshot failed: {e}"),
                };
                let _ = note_tx.send(note);
            }
        }
    };
    let (summary, err) = match res {
        Ok(outcome) => (outcome.summary, None),
        Err(e) => (recorder.finish(), Some(anyhow::Error::from(e))),
    };
    drop(recorder);
    if let Some(printer) = printer {
        let _ = printer.await;
    }
    (summary, err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn opts(parent: &std::path::Path) -> RunOptions {
        RunOptions {
            report_dir: None,
            keep: false,
            run_dir_parent: Some(parent.to_path_buf()),
            tui: false,
            metrics_listen: None,
        }
    }

    #[test]
    fn run_directories_are_fresh_and_private() {
        let parent = tempfile::tempdir().unwrap();
        let dir = make_run_dir(&opts(parent.path()), "t-1").unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{mode:o}");
        // The same name again (another run, or a leftover) is refused, not reused.
        let err = make_run_dir(&opts(parent.path()), "t-1").unwrap_err();
        assert!(format!("{err:#}").contains("must not exist yet"), "{err:#}");
        // A symlink planted at the name is refused too, and its target left alone.
        let target = parent.path().join("elsewhere");
        std::fs::create_dir(&target).unwrap();
        std::os::unix::fs::symlink(&target, parent.path().join("lnbench-t-2")).unwrap();
        assert!(make_run_dir(&opts(parent.path()), "t-2").is_err());
        assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
    }
}
