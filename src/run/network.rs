//! One network of a run, start to end: run id and directory, runtime, live view,
//! bring-up, its points in turn, teardown. Teardown happens here and only here,
//! whatever ended the network.

use super::bring_up::{Network, RunFacts, bring_up};
use super::history;
use super::model::build_report;
use super::output::View;
use super::point::{Point, measure};
use super::run_dir::{make_run_dir, run_id};
use super::sweep::Tally;
use super::{Ctx, metrics_endpoint};
use crate::metrics;
use crate::report;
use crate::runtime::Runtime;
use crate::setup::StepLog;
use anyhow::Result;
use std::path::Path;
use std::time::SystemTime;

/// Runs the network of `points` (the indices of its points in the plan), the
/// `position`-th of those that run. Returns an error only where the whole run ends at
/// once (a runtime that cannot be had outside a matrix, a run directory that cannot
/// be made); everything else goes into `tally`.
pub(super) async fn run(
    ctx: &Ctx<'_>,
    position: usize,
    points: &[usize],
    tally: &mut Tally,
) -> Result<()> {
    let plan = ctx.plan;
    let first = plan.scenario_of(points[0]);
    let number = plan.network_of(points[0]) + 1;
    let run_id = run_id(
        &plan.scenario.name,
        ctx.started_at,
        &ctx.run_token,
        plan.is_sweep().then_some(number),
    );
    if plan.is_sweep() {
        crate::lines::errln!(
            "==> network {}/{}: {} nodes, for {} point(s) (run {run_id})",
            position + 1,
            ctx.networks,
            first.nodes.len(),
            points.len()
        );
    }
    let chosen = match ctx.runtimes.choose(first).await {
        Ok(chosen) => chosen,
        Err(e) if plan.matrix => {
            tally.fail_network(plan, points, &e);
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let run_dir = make_run_dir(ctx.opts, &run_id)?;
    if !plan.is_sweep() {
        crate::lines::errln!("run {run_id}: {} ({} nodes)", first.name, first.nodes.len());
    }
    let mut runtime = chosen.create(&crate::runtime::Place {
        run_id: &run_id,
        scenario: &plan.scenario.name,
        run_dir: &run_dir,
        keep: ctx.opts.keep,
    });
    let mut facts = RunFacts::on(runtime.as_ref());
    crate::lines::errln!("runtime: {}", facts.runtime);
    tally.runtime.get_or_insert_with(|| facts.runtime.clone());
    if let Some(m) = ctx.exporter {
        m.set_runtime(&facts.runtime, runtime.measures().is_some());
        m.set_phase("setup");
    }
    // The live view owns the terminal from here to the end of teardown; until then
    // lines for the terminal wait in the view's output.
    let mut view = View::start(ctx.opts.tui, first, &facts.runtime, ctx.signals);
    let mut log = view.step_log("setting up");
    let snapshots = runtime.snapshots();
    let up = tokio::select! {
        r = async {
            let at = (run_dir.as_path(), snapshots);
            super::snapshot::restore(ctx.opts, first, at, &mut log, &mut facts).await?;
            bring_up(first, runtime.as_mut(), &mut log, &mut facts).await
        } => r.map(Some),
        () = ctx.signals.cancel.cancelled() => Ok(None),
    };
    match &up {
        Err(e) => log.fail(&format!("{e:#}")),
        Ok(_) => log.end(),
    }
    match up {
        Ok(Some(network)) => {
            let net = NetworkUp {
                network: &network,
                facts: &facts,
                log: &log,
                run_dir: &run_dir,
            };
            run_points(ctx, points, net, runtime.as_mut(), &mut view, tally).await;
        }
        Ok(None) => {
            let why = ctx.signals.received().unwrap_or("stopped during setup");
            partial_report(ctx, &facts, &log, why.to_string(), &mut view);
            tally.stopped_by = ctx.signals.received().map(str::to_string);
        }
        // In a matrix, one implementation that does not come up leaves the others to
        // run: its points are failed with the reason, and the run fails at the end.
        Err(e) if plan.matrix => tally.fail_network(plan, points, &e),
        Err(e) => {
            let why = crate::redact::redact_text(&format!("setup failed: {e}"));
            partial_report(ctx, &facts, &log, why, &mut view);
            keep_log_tails(ctx, first, runtime.as_ref(), &mut view);
            tally.stopped_by = Some(format!("network {number} did not come up: {e:#}"));
            tally.error = Some(e);
        }
    }
    let down = teardown(ctx, runtime.as_mut(), &mut view).await;
    view.finish(ctx.signals).await;
    let killed = (runtime.patient_down()).map_or_else(Vec::new, |p| p.killed_at_down());
    for line in down_lines(&down, &killed, &run_dir, ctx.opts.keep) {
        crate::lines::errln!("{line}");
    }
    if let Err(e) = down {
        (tally.error).get_or_insert(anyhow::Error::new(e).context("tearing down the run"));
    }
    Ok(())
}

/// What the points of a network share once it is up.
#[derive(Clone, Copy)]
struct NetworkUp<'a> {
    network: &'a Network,
    facts: &'a RunFacts,
    log: &'a StepLog,
    run_dir: &'a Path,
}

/// The points of a network that is up, in turn, until one stops the run.
async fn run_points(
    ctx: &Ctx<'_>,
    points: &[usize],
    net: NetworkUp<'_>,
    runtime: &mut dyn Runtime,
    view: &mut View,
    tally: &mut Tally,
) {
    let plan = ctx.plan;
    let total = plan.len();
    // Payments made on this network so far (`history:` tops up from it): a restored
    // snapshot's, then the run's.
    let mut made = net.facts.snapshot.as_ref().map_or(0, |s| s.payments);
    for (k, &i) in points.iter().enumerate() {
        // `after_load: restart` once per network, after its last point: the restart
        // time of what the network ran, not a pause between loads. A history ladder
        // restarts after every point: the restart time at each step is its curve.
        let mut scenario = plan.scenario_of(i).clone();
        if k + 1 != points.len() && !plan.is_history_ladder() {
            scenario.restart.clear();
        }
        if !settle(ctx, i, &scenario, view).await {
            break;
        }
        // A sweep's point: its line, and the live view's header names what is left.
        let name = (plan.label(i)).map(|label| format!("point {}/{total}: {label}", i + 1));
        let label = name.as_ref().map(|name| {
            let left = total - i - 1;
            view.out
                .stderr(format!("==> {name} ({left} left after it)"));
            format!("{name}{}", plan.points_left(i))
        });
        let report_dir = (ctx.opts.report_dir.as_ref()).map(|d| {
            plan.label(i)
                .map_or_else(|| d.clone(), |label| d.join(label))
        });
        // Only a scenario with `history:` shows the step (the view's task is replaced).
        let mut log = match scenario.history {
            Some(_) => view.step_log("history"),
            None => crate::setup::StepLog::default(),
        };
        let history = match history::top_up(
            &scenario,
            net.network,
            &mut made,
            &ctx.signals.cancel,
            &mut log,
        )
        .await
        {
            Ok(h) => h,
            Err(e) => {
                tally.stopped_by = Some(format!("{e:#}"));
                tally.error = Some(e);
                break;
            }
        };
        if let Some(h) = &history {
            view.out.stderr(format!("==> {}", h.line()));
        }
        if ctx.signals.cancel.is_cancelled() {
            tally.stopped_by = ctx.signals.received().map(str::to_string);
            break;
        }
        let point = Point {
            scenario: &scenario,
            facts: net.facts,
            log: net.log,
            // A run's report counts from the start (setup included); a sweep
            // point's from its own load.
            started_at: if plan.is_sweep() {
                SystemTime::now()
            } else {
                ctx.started_at
            },
            report_dir,
            name,
            label,
            run_dir: net.run_dir.to_path_buf(),
            metrics: ctx.exporter.cloned(),
            ledger: ctx.ledger.clone(),
            history,
        };
        let (signals, session) = (ctx.signals, view.session.as_mut());
        let measured = measure(point, net.network, runtime, signals, &mut view.out, session).await;
        made += measured.summary.ok;
        if tally.record(i, measured, signals, view.quit()) {
            break;
        }
    }
}

/// Before a repeat that follows another on the same network, the scenario's settle
/// pause (`repeat: { settle: 10s }`), shown; false when a signal cut it short.
async fn settle(
    ctx: &Ctx<'_>,
    i: usize,
    scenario: &crate::scenario::Scenario,
    view: &mut View,
) -> bool {
    let pause = scenario.repeat.settle;
    if !ctx.plan.settles_before(i) || pause.is_zero() {
        return true;
    }
    view.out.stderr(format!(
        "==> settling {:.0} s before {}",
        pause.as_secs_f64(),
        ctx.plan.label(i).unwrap_or_default()
    ));
    tokio::select! {
        () = tokio::time::sleep(pause) => true,
        () = ctx.signals.cancel.cancelled() => false,
    }
}

/// A run cut short before its load still says how far setup got, in a partial
/// report (a sweep's combined report says it for its points).
fn partial_report(ctx: &Ctx<'_>, facts: &RunFacts, log: &StepLog, why: String, view: &mut View) {
    let Some(dir) = ctx
        .opts
        .report_dir
        .as_ref()
        .filter(|_| !ctx.plan.is_sweep())
    else {
        return;
    };
    let report = build_report(
        &ctx.plan.scenario,
        facts,
        log,
        metrics::Recorder::new().0.finish(),
        ctx.started_at,
        false,
        Some(why),
    );
    match report::write_all(&report, dir) {
        Ok(paths) => {
            for path in paths {
                view.out
                    .stderr(format!("report (partial): {}", path.display()));
            }
        }
        Err(e) => view
            .out
            .stderr(format!("partial report not written: {e:#}")),
    }
}

/// Lines of each node's log kept when setup fails.
const LOG_TAIL_LINES: usize = 200;

/// When setup failed, the last lines of each node's log go beside the partial report
/// (`logs/<node>.log`, secrets redacted): the run directory with the whole logs goes
/// at teardown unless `--keep`, and the reason a node stalled is usually in its log.
fn keep_log_tails(
    ctx: &Ctx<'_>,
    scenario: &crate::scenario::Scenario,
    runtime: &dyn Runtime,
    view: &mut View,
) {
    let Some(dir) = (ctx.opts.report_dir.as_ref()).filter(|_| !ctx.plan.is_sweep()) else {
        return;
    };
    let logs = dir.join("logs");
    if let Err(e) = std::fs::create_dir_all(&logs) {
        view.out
            .stderr(format!("node logs not kept: {}: {e}", logs.display()));
        return;
    }
    for node in &scenario.nodes {
        let tail = crate::redact::redact_text(&runtime.log_tail(&node.name, LOG_TAIL_LINES));
        // Names are validated to a safe alphabet: they name directories already.
        let path = logs.join(format!("{}.log", node.name));
        match std::fs::write(&path, tail) {
            Ok(()) => view.out.stderr(format!("log tail: {}", path.display())),
            Err(e) => view
                .out
                .stderr(format!("log tail not kept: {}: {e}", path.display())),
        }
    }
}

/// Stops everything the runtime started, as a step (of the live view, or a line).
async fn teardown(
    ctx: &Ctx<'_>,
    runtime: &mut dyn Runtime,
    view: &mut View,
) -> Result<(), crate::runtime::RuntimeError> {
    let mut teardown = view.step_log("tearing down");
    teardown.begin("nodes and chain stopped");
    metrics_endpoint::phase(ctx.exporter, "teardown");
    let down = runtime.down().await;
    teardown.end();
    metrics_endpoint::phase(ctx.exporter, "finished");
    down
}

/// What the teardown says: what had to be killed, then what is left (and the run
/// directory's lock is released or kept to match).
fn down_lines(
    down: &Result<(), crate::runtime::RuntimeError>,
    killed: &[String],
    run_dir: &Path,
    keep: bool,
) -> Vec<String> {
    let mut lines = Vec::new();
    if !killed.is_empty() {
        lines.push(format!(
            "    did not exit on SIGTERM in time, so killed: {}",
            killed.join(", ")
        ));
    }
    lines.push(match down {
        Ok(()) if keep => {
            crate::leftovers::release(run_dir);
            format!("    kept run directory {}", run_dir.display())
        }
        Ok(()) => "    all processes (or containers) stopped, run directory removed".into(),
        Err(e) => {
            // What is left carries this process's token: its lock file stays for `down`.
            crate::leftovers::lock::left_behind();
            format!("    teardown: {e:#}")
        }
    });
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_teardown_names_what_it_had_to_kill_before_saying_all_stopped() {
        let dir = Path::new("/nonexistent/run");
        let killed = ["bob".to_string(), "chain".to_string()];
        assert_eq!(
            down_lines(&Ok(()), &killed, dir, false),
            [
                "    did not exit on SIGTERM in time, so killed: bob, chain",
                "    all processes (or containers) stopped, run directory removed"
            ]
        );
        assert_eq!(
            down_lines(&Ok(()), &[], dir, false),
            ["    all processes (or containers) stopped, run directory removed"]
        );
    }
}
