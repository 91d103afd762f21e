//! The load on a network that is up: the engine fed the routes, progress lines or the
//! live view, report snapshots on request, and the started processes watched beside
//! it (a node that exits ends the load; resources read once a second).

use super::bring_up::Network;
use super::model::describe_load;
use crate::engine::{self, Plan, Route};
use crate::metrics::{self, Summary};
use crate::runtime::Runtime;
use crate::scenario::Scenario;
use crate::{headless, tui};
use anyhow::Result;
use std::path::PathBuf;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// A report snapshot being written on a blocking thread: the directory, when done.
pub(super) type SnapshotWrite = tokio::task::JoinHandle<Result<PathBuf>>;

/// With `activity:`, the routes over the network and how payments spread on them.
type NetworkLoad = Option<(Vec<Route>, std::sync::Arc<engine::activity::ActivityPlan>)>;

/// Runs the workload; returns the summary of whatever was done, and the error that
/// ended the load early, if any.
#[allow(
    clippy::too_many_arguments,
    reason = "the pieces of one load, each from a different owner; a struct would only rename them"
)]
pub(super) async fn run_load(
    scenario: &Scenario,
    network: &Network,
    (recorder, snapshots): (
        metrics::Recorder,
        tokio::sync::watch::Receiver<metrics::Snapshot>,
    ),
    (network_load, ledger): (
        NetworkLoad,
        Option<std::sync::Arc<engine::ledger::SpendLedger>>,
    ),
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
    let (plan, activity) = plan_of(scenario, network, network_load, ledger.clone());
    if let Some((x, readings)) = exporter {
        recorder.export_to(x.clone());
        x.follow(snapshots.clone(), readings);
    }
    if let Some(path) = interval_log {
        log_payments_and_intervals(&recorder, path);
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
            crate::lines::errln!("==> load: {}", describe_load(&w.load));
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
    if let Some(ledger) = &ledger {
        say_spent(ledger, res.as_ref().ok().map(|o| o.stop_reason));
    }
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

/// The engine's plan: the scenario's routes (every sender to every receiver), or with
/// `activity:` the routes over the network and how payments spread on them.
pub(super) fn plan_of(
    scenario: &Scenario,
    network: &Network,
    network_load: NetworkLoad,
    ledger: Option<std::sync::Arc<engine::ledger::SpendLedger>>,
) -> (Plan, Option<std::sync::Arc<engine::activity::ActivityPlan>>) {
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
        ledger,
        stream: (w.stream.as_ref()).map(|s| engine::stream::StreamPlan {
            amounts: s.splits.iter().map(|s| s.amount_msat).collect(),
        }),
        max_parts: w.max_parts,
        attack: (w.attack.as_ref()).map(|a| engine::attack::AttackPlan {
            attacker: network.nodes[&a.attacker].node.clone(),
            accomplice: network.nodes[&a.accomplice].node.clone(),
            slots: a.slots,
            amount_msat: a.amount_msat,
            hold: a.hold,
            start: a.start,
            duration: a.duration,
        }),
        rebalance: (w.rebalance.as_ref()).map(|r| rebalance_plan(network, r, w.payment_timeout)),
    };
    (plan, activity)
}

/// `workload: rebalance:` with the nodes' clients and public keys.
fn rebalance_plan(
    network: &Network,
    r: &crate::scenario::Rebalance,
    timeout: std::time::Duration,
) -> engine::rebalance::RebalancePlan {
    let hop = |name: &String| (name.clone(), network.nodes[name].info.pubkey.clone());
    engine::rebalance::RebalancePlan {
        node: network.nodes[&r.node].node.clone(),
        first_hop: hop(&r.first_hop),
        last_hop: hop(&r.last_hop),
        amount_msat: r.amount_sat * 1_000,
        every: r.every,
        below_sat: r.below_sat,
        max_fee_msat: r.max_fee_msat(),
        timeout,
    }
}

/// The interval log (latency.hlog) at `path` and the payment log beside it in the run
/// directory, where a report keeps both; a file that cannot be made is a warning.
fn log_payments_and_intervals(recorder: &metrics::Recorder, path: PathBuf) {
    let payments = path.with_file_name(metrics::payments::FILE_NAME);
    match metrics::PaymentLog::create(&payments) {
        Ok(log) => recorder.log_payments_to(log),
        Err(e) => crate::lines::errln!(
            "warning: no {}: cannot create {}: {e}",
            metrics::payments::FILE_NAME,
            payments.display()
        ),
    }
    match metrics::IntervalLog::create(&path, recorder.started_wall()) {
        Ok(log) => recorder.log_intervals_to(log),
        Err(e) => crate::lines::errln!(
            "warning: no {}: cannot create {}: {e}",
            metrics::hlog::FILE_NAME,
            path.display()
        ),
    }
}

/// Mainnet caps: what the run spent so far, and why the load stopped if the caps
/// stopped it.
fn say_spent(ledger: &engine::ledger::SpendLedger, stop: Option<engine::StopReason>) {
    let spent = ledger.spent();
    if stop == Some(engine::StopReason::CapReached) {
        crate::lines::errln!(
            "==> mainnet cap reached: the next payment would cross max_total_msat: {}; \
             the load stopped",
            ledger.max_total_msat()
        );
    }
    crate::lines::errln!(
        "==> mainnet spend so far: {} msat paid (amounts and fees), {} msat not known \
         (counted as paid), {} amount(s) lowered to max_payment_msat",
        spent.paid_msat,
        spent.unknown_msat,
        spent.clamped
    );
}

/// Runs the load while watching the started processes: a node (or the chain) that
/// exits ends the load, and the run fails with the last lines of its log. Resource
/// readings are taken once a second (and once more, fresh, at the end) into `resources`, the
/// latest also to `readings` for the live view, and the host is sampled beside them:
/// its load from outside the run so far goes to `machine_now` for the live view's
/// header. The watcher runs beside the load, so a slow reading never holds the load up.
pub(super) async fn watch_processes(
    runtime: &mut dyn Runtime,
    load: impl std::future::Future<Output = (Summary, Option<anyhow::Error>)>,
    cancel: &CancellationToken,
    resources: &mut metrics::ResourceLog,
    (readings, machine_now): (
        &tokio::sync::watch::Sender<Vec<metrics::ResourceReading>>,
        &tokio::sync::watch::Sender<Option<metrics::MachineNow>>,
    ),
    mut faults: Option<&mut crate::faults::FaultRunner>,
) -> (Summary, Option<anyhow::Error>) {
    let mut machine = metrics::MachineLog::new();
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
                    // The host beside what the run started and the engine's work
                    // for it: the rest is outside load.
                    let (mut now, engine) = match runtime.measures() {
                        Some(m) => (m.resources().await, m.engine_cpu_pct().await),
                        None => (Vec::new(), None),
                    };
                    machine.sample(now.iter().filter_map(|r| r.cpu_pct).sum(), engine);
                    machine_now.send_replace(machine.now());
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
    let (fresh, envelopes) = match runtime.measures() {
        Some(m) => (m.resources_fresh().await, m.envelopes().await),
        None => (Vec::new(), Vec::new()),
    };
    resources.record(fresh);
    resources.record_envelopes(envelopes);
    let (mut summary, err) = outcome;
    summary.machine = machine.finish();
    (summary, err)
}
