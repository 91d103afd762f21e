//! One benchmark run, start to end: run directory, signals, network up, setup, load,
//! report, teardown. Teardown happens here and only here, whatever ended the run.

use crate::chain::ChainBackend;
use crate::chain::btcd::{BtcdChain, MiningWallet};
use crate::engine::{self, Plan, Route};
use crate::metrics::{self, Summary};
use crate::node::LightningNode;
use crate::node::lnd::{self, LndNode};
use crate::report::{self, Report};
use crate::runtime::Runtime;
use crate::runtime::local::LocalRuntime;
use crate::scenario::{Load, Scenario};
use crate::setup::{self, ReadyNode, StepLog};
use crate::{Exit, headless, tui};
use anyhow::{Context, Result};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};
use tokio_util::sync::CancellationToken;

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
}

/// Runs `scenario` to the end and returns the exit code. A scenario with `sweep:`
/// runs its points in turn (`crate::sweep`).
pub async fn execute(scenario: Scenario, opts: RunOptions) -> Result<Exit> {
    if scenario.sweep.is_some() {
        return crate::sweep::execute(scenario, opts).await;
    }
    crate::tls::install_crypto_provider();
    preflight(&scenario)?;
    let started_at = SystemTime::now();
    let run_id = run_id(&scenario.name, started_at, None);
    let run_dir = make_run_dir(&opts, &run_id)?;
    eprintln!(
        "run {run_id}: {} ({} nodes)",
        scenario.name,
        scenario.nodes.len()
    );

    let signals = Signals::watch();
    let mut runtime = LocalRuntime::new(run_dir.clone(), opts.keep);
    let mut log = StepLog::default();
    let mut facts = RunFacts::default();

    let outcome = tokio::select! {
        r = bring_up(&scenario, &mut runtime, &mut log, &mut facts) => r.map(Some),
        () = signals.cancel.cancelled() => Ok(None),
    };
    log.end();
    let result = match outcome {
        Ok(Some(network)) => {
            let point = Point {
                scenario: &scenario,
                facts: &facts,
                log: &log,
                started_at,
                report_dir: opts.report_dir.clone(),
                tui: opts.tui,
                label: None,
            };
            let measured = measure(point, &network, &mut runtime, &signals).await;
            measured.exit(&signals)
        }
        Ok(None) => Ok(Exit::Interrupted),
        Err(e) => Err(e),
    };

    let down = teardown(&mut runtime, &run_dir, opts.keep).await;
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
    std::fs::create_dir_all(&run_dir)
        .with_context(|| format!("cannot create run directory {}", run_dir.display()))?;
    Ok(run_dir)
}

/// Stops everything the runtime started and says so; the caller decides what a
/// teardown error means for the exit code.
pub(crate) async fn teardown(
    runtime: &mut LocalRuntime,
    run_dir: &std::path::Path,
    keep: bool,
) -> Result<(), crate::runtime::RuntimeError> {
    eprintln!("==> teardown ...");
    let down = runtime.down().await;
    match &down {
        Ok(()) if keep => eprintln!("    kept run directory {}", run_dir.display()),
        Ok(()) => eprintln!("    all processes stopped, run directory removed"),
        Err(e) => eprintln!("    teardown: {e:#}"),
    }
    down
}

/// The run's cancellation token, cancelled by SIGINT or SIGTERM, and which came.
pub(crate) struct Signals {
    pub cancel: CancellationToken,
    which: Arc<OnceLock<&'static str>>,
    task: tokio::task::JoinHandle<()>,
}

impl Signals {
    pub fn watch() -> Signals {
        let cancel = CancellationToken::new();
        let which = Arc::new(OnceLock::new());
        let task = tokio::spawn(watch_signals(cancel.clone(), which.clone()));
        Signals {
            cancel,
            which,
            task,
        }
    }

    /// The signal that interrupted the run, if one did.
    pub fn received(&self) -> Option<&'static str> {
        self.which.get().copied()
    }

    /// Stops watching and says what interrupted the run, if anything.
    pub fn stop(self) {
        self.task.abort();
        if let Some(sig) = self.received() {
            eprintln!("interrupted by {sig}");
        }
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
    pub tui: bool,
    /// `point 2/4: concurrency=4` in a sweep.
    pub label: Option<String>,
}

/// What one load measured and how it ended.
pub(crate) struct Measured {
    pub summary: Summary,
    /// False when cut short (signal, error, a node died).
    pub complete: bool,
    pub thresholds_passed: bool,
    /// The error that ended the load early (a node died, an RPC failed).
    pub load_err: Option<anyhow::Error>,
    /// The operator quit the live view.
    pub quit: bool,
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

/// Runs one load on `network`, prints its summary and threshold verdicts, and writes
/// its report (before any teardown, so a slow teardown cannot lose it).
pub(crate) async fn measure(
    point: Point<'_>,
    network: &Network,
    runtime: &mut LocalRuntime,
    signals: &Signals,
) -> Measured {
    let scenario = point.scenario;
    let view = point.tui.then(|| {
        let mut info = tui_info(scenario, point.facts);
        info.point = point.label.clone();
        info
    });
    let load = run_load(scenario, network, signals.cancel.clone(), view);
    let ((summary, load_err, quit), died) = watch_processes(runtime, load, &signals.cancel).await;
    let load_err = died.or(load_err);
    let interrupted_by = signals
        .received()
        .map(str::to_string)
        .or_else(|| load_err.as_ref().map(|e| format!("{e:#}")));
    let complete = interrupted_by.is_none();
    println!("{}", headless::summary_table(&summary));
    let thresholds = report::thresholds::evaluate(&scenario.thresholds, &summary);
    for t in &thresholds {
        let verdict = if t.passed { "pass" } else { "FAIL" };
        let (actual, limit) = (t.actual_text(), t.limit_text());
        println!("threshold {}: {verdict} ({actual}, limit {limit})", t.name);
    }
    let thresholds_passed = report::thresholds::all_passed(&thresholds);
    let mut load_err = load_err;
    if let Some(dir) = &point.report_dir {
        let mut report = build_report(
            scenario,
            point.facts,
            point.log,
            summary.clone(),
            point.started_at,
            complete,
            interrupted_by,
        );
        report.thresholds = thresholds;
        match report::write_all(&report, dir) {
            Ok(paths) => {
                for path in paths {
                    eprintln!("report: {}", path.display());
                }
            }
            Err(e) => {
                load_err.get_or_insert(e);
            }
        }
    }
    Measured {
        summary,
        complete,
        thresholds_passed,
        load_err,
        quit,
    }
}

/// Finds every binary before anything starts, so a missing one fails at once
/// instead of after the chain is up.
pub(crate) fn preflight(scenario: &Scenario) -> Result<()> {
    use crate::runtime::local::find_binary;
    find_binary(
        scenario.chain.binary.as_deref(),
        "btcd",
        "the chain backend",
    )?;
    for node in &scenario.nodes {
        let what = format!("node {}", node.name);
        find_binary(node.binary.as_deref(), node.implementation.as_str(), &what)?;
    }
    Ok(())
}

/// Runs the load while watching the started processes: a node (or the chain) that
/// exits ends the load, and the run fails with the last lines of its log.
async fn watch_processes<T>(
    runtime: &mut LocalRuntime,
    load: impl std::future::Future<Output = T>,
    cancel: &CancellationToken,
) -> (T, Option<anyhow::Error>) {
    tokio::pin!(load);
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    let mut died: Option<anyhow::Error> = None;
    loop {
        tokio::select! {
            out = &mut load => return (out, died),
            _ = tick.tick(), if died.is_none() => {
                if let Some((name, status)) = runtime.exited() {
                    died = Some(anyhow::anyhow!(
                        "{name} exited during the load ({status}); last lines of its log:\n{}",
                        runtime.log_tail(&name, 20)
                    ));
                    cancel.cancel();
                }
            }
        }
    }
}

/// Cancels the run on SIGINT or SIGTERM and records which one came.
async fn watch_signals(cancel: CancellationToken, which: Arc<OnceLock<&'static str>>) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return;
    };
    let name = tokio::select! {
        _ = int.recv() => "SIGINT",
        _ = term.recv() => "SIGTERM",
    };
    let _ = which.set(name);
    eprintln!("\n{name} received: stopping the load, then tearing down");
    cancel.cancel();
}

/// What setup learned, for the report.
#[derive(Default)]
pub(crate) struct RunFacts {
    chain_version: String,
    nodes: Vec<(crate::scenario::NodeSpec, ReadyNode, PathBuf)>,
}

/// The network, ready for load.
pub(crate) struct Network {
    nodes: HashMap<String, ReadyNode>,
}

pub(crate) async fn bring_up(
    scenario: &Scenario,
    runtime: &mut LocalRuntime,
    log: &mut StepLog,
    facts: &mut RunFacts,
) -> Result<Network> {
    log.begin("chain up");
    let wallet = MiningWallet::generate();
    let endpoint = runtime
        .start_chain(&scenario.chain, &wallet.address().to_string())
        .await?;
    facts.chain_version = endpoint.version.clone();
    let chain = BtcdChain::connect(&endpoint, wallet).await?;
    log.progress("mining past segwit activation");
    chain
        .prepare()
        .await
        .context("preparing the regtest chain")?;
    let height = chain.height().await?;

    log.begin("nodes up");
    let endpoints = runtime.start_nodes(&scenario.nodes, &endpoint).await?;
    let mut nodes = HashMap::new();
    for (spec, ep) in scenario.nodes.iter().zip(&endpoints) {
        let lnd = LndNode::connect(&spec.name, ep).await?;
        let info = setup::wait_synced(&lnd, height, NODE_READY_TIMEOUT, lnd::is_starting_up)
            .await
            .with_context(|| {
                format!(
                    "lnd {} did not become ready; last lines of its log:\n{}",
                    spec.name,
                    runtime.log_tail(&spec.name, 20)
                )
            })?;
        log.progress(&format!("{} ready ({})", spec.name, info.version));
        let ready = ReadyNode {
            node: Arc::new(lnd) as Arc<dyn LightningNode>,
            info,
            p2p_addr: ep.p2p_addr.clone(),
        };
        facts
            .nodes
            .push((spec.clone(), ready.clone(), ep.binary.clone()));
        nodes.insert(spec.name.clone(), ready);
    }

    log.begin("wallets funded");
    setup::fund_openers(&chain, &nodes, &scenario.channels, log).await?;

    log.begin("peers connected");
    setup::connect_peers(&nodes, &scenario.channels).await?;

    log.begin("channels active");
    setup::open_channels(&chain, &nodes, &scenario.channels, log).await?;

    log.begin("routes ready");
    let w = &scenario.workload;
    let pairs: Vec<(ReadyNode, ReadyNode)> = w
        .senders
        .iter()
        .flat_map(|s| w.receivers.iter().map(move |r| (s, r)))
        .map(|(s, r)| (nodes[s].clone(), nodes[r].clone()))
        .collect();
    setup::wait_routable(&pairs, log).await?;
    log.end();
    Ok(Network { nodes })
}

/// Runs the workload; returns the summary of whatever was done, the error that
/// ended the load early, if any, and whether the operator quit the live view.
async fn run_load(
    scenario: &Scenario,
    network: &Network,
    cancel: CancellationToken,
    view: Option<tui::TuiInfo>,
) -> (Summary, Option<anyhow::Error>, bool) {
    let w = &scenario.workload;
    let mut routes = Vec::new();
    for sender in &w.senders {
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
        routes,
        kind: w.kind,
        amount_msat: w.amount_msat,
        load: w.load.clone(),
        stop: w.stop,
        payment_timeout: w.payment_timeout,
    };
    eprintln!("==> load: {}", describe_load(&w.load));
    let (recorder, snapshots) = metrics::Recorder::new();
    let (commands, command_rx) = tokio::sync::mpsc::unbounded_channel();
    let printer = match view {
        // While the live view draws, nothing else may write to the terminal.
        Some(info) => tokio::spawn(follow_live(snapshots, commands, info)),
        None => {
            // Nothing sends commands in headless mode; a closed channel is fine.
            drop(commands);
            tokio::spawn(async move {
                headless::follow(snapshots, std::io::stderr()).await;
                false
            })
        }
    };
    let res = engine::run(plan, recorder.clone(), command_rx, cancel).await;
    let (summary, err) = match res {
        Ok(outcome) => (outcome.summary, None),
        Err(e) => (recorder.finish(), Some(anyhow::Error::from(e))),
    };
    drop(recorder);
    let quit = printer.await.unwrap_or(false);
    (summary, err, quit)
}

/// The live view, falling back to progress lines if the terminal cannot show it.
/// True when the operator quit.
async fn follow_live(
    snapshots: tokio::sync::watch::Receiver<metrics::Snapshot>,
    commands: tokio::sync::mpsc::UnboundedSender<engine::Command>,
    info: tui::TuiInfo,
) -> bool {
    let fallback = snapshots.clone();
    match tui::run(snapshots, commands, info).await {
        Ok(tui::TuiExit::Finished) => false,
        // Stop was sent; in-flight payments finish before the summary.
        Ok(tui::TuiExit::Quit) => {
            eprintln!("==> stopping: in-flight payments finish ...");
            true
        }
        Err(e) => {
            eprintln!("live view failed ({e:#}); progress lines follow");
            headless::follow(fallback, std::io::stderr()).await;
            false
        }
    }
}

/// What the live view shows about the network, besides snapshots.
fn tui_info(scenario: &Scenario, facts: &RunFacts) -> tui::TuiInfo {
    tui::TuiInfo {
        scenario: scenario.name.clone(),
        runtime: "local".into(),
        nodes: facts
            .nodes
            .iter()
            .map(|(spec, ready, _)| tui::NodeInfo {
                name: spec.name.clone(),
                implementation: spec.implementation.to_string(),
                version: ready.info.version.clone(),
                role: role(scenario, &spec.name).into(),
            })
            .collect(),
        point: None,
    }
}

fn role(scenario: &Scenario, name: &str) -> &'static str {
    let w = &scenario.workload;
    if w.senders.iter().any(|s| s == name) {
        "sender"
    } else if w.receivers.iter().any(|r| r == name) {
        "receiver"
    } else {
        "router"
    }
}

fn describe_load(load: &Load) -> String {
    match load {
        Load::Closed { concurrency } => format!("closed loop, {concurrency} concurrent payers"),
        Load::Open { phases } => format!("open loop, {} phases", phases.len()),
    }
}

fn build_report(
    scenario: &Scenario,
    facts: &RunFacts,
    log: &StepLog,
    results: Summary,
    started_at: SystemTime,
    complete: bool,
    interrupted_by: Option<String>,
) -> Report {
    let w = &scenario.workload;
    Report {
        schema_version: report::SCHEMA_VERSION,
        tool: report::Tool::this(),
        complete,
        interrupted_by,
        started_at: humantime::format_rfc3339_seconds(started_at).to_string(),
        finished_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        scenario: report::ScenarioText {
            name: scenario.name.clone(),
            description: scenario.description.clone(),
            path: scenario.path.display().to_string(),
            text: report::redact::redact_scenario_text(&scenario.source),
        },
        runtime: "local".into(),
        host: report::Host::detect(),
        chain: report::ChainInfo {
            implementation: "btcd".into(),
            version: facts.chain_version.clone(),
        },
        nodes: facts
            .nodes
            .iter()
            .map(|(spec, ready, binary)| report::NodeReport {
                name: spec.name.clone(),
                group: spec.group.clone(),
                implementation: spec.implementation.to_string(),
                version: ready.info.version.clone(),
                pubkey: ready.info.pubkey.clone(),
                role: role(scenario, &spec.name).into(),
                binary: binary.display().to_string(),
            })
            .collect(),
        workload: report::WorkloadReport {
            kind: serde_json::to_value(w.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            amount_msat: w.amount_msat,
            load_model: match w.load {
                Load::Closed { .. } => "closed".into(),
                Load::Open { .. } => "open".into(),
            },
            concurrency: match w.load {
                Load::Closed { concurrency } => Some(concurrency),
                Load::Open { .. } => None,
            },
            senders: w.senders.clone(),
            receivers: w.receivers.clone(),
            stop_after_payments: w.stop.payments,
            stop_after_seconds: w.stop.duration.map(|d| d.as_secs_f64()),
            payment_timeout_seconds: w.payment_timeout.as_secs_f64(),
        },
        setup: log.steps.clone(),
        results,
        thresholds: Vec::new(),
    }
}
