//! Runs a sweep: its points in turn, each on a network brought up for it or on the
//! network of the point before when only the load changes (same `network` number),
//! each point's report in `<report dir>/<label>/`, and the combined report
//! (`sweep.json`, `sweep.html`, `sweep.md`) in `<report dir>/`, also when the sweep
//! is cut short (marked partial, points not run listed as such).

use crate::Exit;
use crate::report::sweep::{
    BestPoint, PointReport, PointResults, PointStatus, SweepReport, latency_per_hop,
    max_tps_under_bound,
};
use crate::report::{self, format};
use crate::run::{
    self, Measured, Point, RunFacts, RunOptions, Signals, bring_up, make_run_dir, measure, teardown,
};
use crate::scenario::{Load, Scenario, Sweep, SweepParam, SweepPoint, SweepValue};
use crate::setup::StepLog;
use anyhow::{Context, Result};
use std::time::SystemTime;

/// Per point, why it did not run (skipped, or failed with its network), if so.
type Reasons<'a> = &'a [Option<String>];

/// How a point ended, for the combined report.
struct Outcome {
    status: PointStatus,
    measured: Option<Measured>,
}

pub async fn execute(scenario: Scenario, opts: RunOptions) -> Result<Exit> {
    let sweep = scenario
        .sweep
        .clone()
        .context("internal: sweep::execute called without a sweep")?;
    crate::tls::install_crypto_provider();
    let skips = skips(&sweep)?;
    let exporter = run::metrics_endpoint::start(opts.metrics_listen, &scenario.name).await?;
    let started_at = SystemTime::now();
    let total = sweep.points.len();
    let networks = sweep.points.last().map_or(0, |p| p.network + 1);
    // Networks with a point to run: the progress lines count these.
    let mut live: Vec<usize> = (sweep.points.iter().zip(&skips))
        .filter(|(_, s)| s.is_none())
        .map(|(p, _)| p.network)
        .collect();
    live.dedup();
    eprintln!(
        "sweep {}: {total} points on {} network(s): {}",
        scenario.name,
        live.len(),
        sweep
            .points
            .iter()
            .map(|p| p.label.as_str())
            .collect::<Vec<_>>()
            .join(" | ")
    );
    for (point, why) in sweep.points.iter().zip(&skips) {
        if let Some(why) = why {
            eprintln!("skipped {}: {why}", point.label);
        }
    }
    let signals = Signals::watch();
    let mut outcomes: Vec<Option<Outcome>> = (0..total).map(|_| None).collect();
    let mut error: Option<anyhow::Error> = None;
    let mut stopped_by: Option<String> = None;
    let mut runtime_name: Option<String> = None;
    let matrix = sweep.params.iter().any(SweepParam::is_implementation);
    // Why each point failed without running (its network did not come up), and those networks.
    let mut failed: Vec<Option<String>> = vec![None; total];
    let mut not_up: Vec<String> = Vec::new();

    for network in 0..networks {
        if stopped_by.is_some() || error.is_some() {
            break;
        }
        let points: Vec<(usize, &SweepPoint)> = sweep
            .points
            .iter()
            .enumerate()
            .filter(|(i, p)| p.network == network && skips[*i].is_none())
            .collect();
        if points.is_empty() {
            continue;
        }
        let first = &points[0].1.scenario;
        let run_id = run::run_id(&scenario.name, started_at, Some(network + 1));
        let run_dir = make_run_dir(&opts, &run_id)?;
        eprintln!(
            "==> network {}/{}: {} nodes, for {} point(s) (run {run_id})",
            live.iter().position(|n| *n == network).map_or(0, |i| i + 1),
            live.len(),
            first.nodes.len(),
            points.len()
        );
        let chosen = match run::choose_runtime(first).await {
            Ok(chosen) => chosen,
            Err(e) if matrix => {
                fail_network(&points, &e, (&mut outcomes, &mut failed, &mut not_up));
                continue;
            }
            Err(e) => return Err(e),
        };
        let mut runtime = chosen.create(&run_id, &scenario.name, &run_dir, opts.keep);
        let mut log = StepLog::default();
        let mut facts = RunFacts::on(runtime.as_ref());
        runtime_name.get_or_insert_with(|| facts.runtime.clone());
        if let Some(m) = &exporter {
            m.set_runtime(&facts.runtime, runtime.measures_resources());
            m.set_phase("setup");
        }
        let up = tokio::select! {
            r = bring_up(first, runtime.as_mut(), &mut log, &mut facts) => r.map(Some),
            () = signals.cancel.cancelled() => Ok(None),
        };
        log.end();
        match up {
            Ok(Some(net)) => {
                let last = points.last().map(|(i, _)| *i);
                for (i, point) in points {
                    // `after_load: restart` once per network, after its last point: the
                    // restart time of what the network ran, not a pause between loads.
                    let mut scenario = point.scenario.clone();
                    if Some(i) != last {
                        scenario.restart.clear();
                    }
                    if !settle(&sweep, i, &scenario, &signals).await {
                        break;
                    }
                    let label = format!("point {}/{total}: {}", i + 1, point.label);
                    let left = total - i - 1;
                    eprintln!("==> {label} ({left} left after it)");
                    // The live view's header also names what is left.
                    let label = format!("{label}{}", points_left(&sweep.points[i + 1..]));
                    let measured = measure(
                        Point {
                            scenario: &scenario,
                            facts: &facts,
                            log: &log,
                            started_at: SystemTime::now(),
                            report_dir: opts.report_dir.as_ref().map(|d| d.join(&point.label)),
                            tui: opts.tui,
                            label: Some(label),
                            run_dir: run_dir.clone(),
                            metrics: exporter.clone(),
                        },
                        &net,
                        runtime.as_mut(),
                        &signals,
                    )
                    .await;
                    let status = if measured.complete {
                        PointStatus::Done
                    } else {
                        PointStatus::Partial
                    };
                    let quit = measured.quit;
                    let mut measured = measured;
                    if let Some(e) = measured.load_err.take() {
                        stopped_by = Some(format!("{e:#}"));
                        error = Some(e);
                    } else if let Some(sig) = signals.received() {
                        stopped_by = Some(sig.to_string());
                    } else if quit {
                        stopped_by = Some("the operator quit the live view".into());
                    }
                    outcomes[i] = Some(Outcome {
                        status,
                        measured: Some(measured),
                    });
                    if stopped_by.is_some() {
                        break;
                    }
                }
            }
            Ok(None) => stopped_by = signals.received().map(str::to_string),
            // In a matrix, one implementation that does not come up leaves the others
            // to run: its points are failed with the reason, and the sweep fails at the end.
            Err(e) if matrix => {
                fail_network(&points, &e, (&mut outcomes, &mut failed, &mut not_up));
            }
            Err(e) => {
                stopped_by = Some(format!("network {} did not come up: {e:#}", network + 1));
                error = Some(e);
            }
        }
        run::metrics_endpoint::phase(exporter.as_ref(), "teardown");
        let down = teardown(runtime.as_mut(), &run_dir, opts.keep).await;
        run::metrics_endpoint::phase(exporter.as_ref(), "finished");
        if let Err(e) = down {
            error.get_or_insert(anyhow::Error::new(e).context("tearing down the run"));
        }
    }

    let report = combined(
        &scenario,
        &sweep,
        (&outcomes, &skips, &failed),
        runtime_name.unwrap_or_else(|| "none (no network was brought up)".into()),
        started_at,
        stopped_by.clone(),
    );
    println!("{}", report::sweep::markdown(&report));
    if let Some(dir) = &opts.report_dir {
        match report::sweep::write_all(&report, dir) {
            Ok(paths) => {
                for p in paths {
                    eprintln!("sweep report: {}", p.display());
                }
            }
            Err(e) => {
                error.get_or_insert(e);
            }
        }
    }
    let interrupted = signals.received().is_some();
    signals.stop();
    if let Some(e) = error {
        return Err(e);
    }
    if !not_up.is_empty() {
        anyhow::bail!(
            "{} network(s) of the matrix did not come up (their points are marked failed in the report): {}",
            not_up.len(),
            not_up.join("; ")
        );
    }
    // Each repeat judged, or (repeat: { thresholds: median }) the median of each point.
    let thresholds_failed = match scenario.repeat.judge {
        crate::scenario::Judge::Median if scenario.repeat.count > 1 => {
            (report.spread.iter()).any(|s| s.thresholds_passed == Some(false))
        }
        _ => outcomes
            .iter()
            .filter_map(|o| o.as_ref()?.measured.as_ref())
            .any(|m| !m.thresholds_passed),
    };
    Ok(if interrupted {
        Exit::Interrupted
    } else if thresholds_failed {
        Exit::ThresholdFailed
    } else {
        Exit::Ok
    })
}

/// Marks every point of a network that could not be brought up (or whose runtime
/// could not be chosen) as failed, with the reason, in a matrix that goes on.
fn fail_network(
    points: &[(usize, &SweepPoint)],
    e: &anyhow::Error,
    (outcomes, failed, not_up): (
        &mut [Option<Outcome>],
        &mut [Option<String>],
        &mut Vec<String>,
    ),
) {
    let why = report::redact::redact_text(&format!("{e:#}"));
    eprintln!("network of {} did not come up: {why}", points[0].1.label);
    for (i, _) in points {
        outcomes[*i] = Some(Outcome {
            status: PointStatus::Failed,
            measured: None,
        });
        failed[*i] = Some(why.clone());
    }
    not_up.push(points[0].1.label.clone());
}

/// Before a repeat that follows another on the same network, the scenario's settle
/// pause (`repeat: { settle: 10s }`), shown; false when a signal cut it short.
async fn settle(
    sweep: &Sweep,
    i: usize,
    scenario: &crate::scenario::Scenario,
    signals: &Signals,
) -> bool {
    let repeat = |p: &SweepPoint| {
        p.values.iter().find_map(|(param, v)| match (param, v) {
            (SweepParam::Repeat, SweepValue::Count(k)) => Some(*k),
            _ => None,
        })
    };
    let point = &sweep.points[i];
    let follows = i > 0 && sweep.points[i - 1].network == point.network;
    let pause = scenario.repeat.settle;
    if !follows || repeat(point).is_none_or(|k| k < 2) || pause.is_zero() {
        return true;
    }
    eprintln!(
        "==> settling {:.0} s before {}",
        pause.as_secs_f64(),
        point.label
    );
    tokio::select! {
        () = tokio::time::sleep(pause) => true,
        () = signals.cancel.cancelled() => false,
    }
}

/// Why each point will not run, before anything starts: what the sweep's expansion
/// found (a database the implementation lacks) and, in an implementation matrix, a
/// binary this machine has not built. Outside a matrix a missing binary fails the
/// sweep, as it fails a run; a matrix where no point can run fails too.
fn skips(sweep: &Sweep) -> Result<Vec<Option<String>>> {
    let matrix = sweep.params.iter().any(SweepParam::is_implementation);
    let mut skips = Vec::with_capacity(sweep.points.len());
    for point in &sweep.points {
        let why = match (&point.skip, run::preflight_points(&point.scenario)) {
            (Some(why), _) => Some(why.clone()),
            (None, Ok(())) => None,
            (None, Err(e)) if matrix => Some(report::redact::redact_text(&format!("{e:#}"))),
            (None, Err(e)) => return Err(e),
        };
        skips.push(why);
    }
    if let Some(first) = skips
        .iter()
        .flatten()
        .next()
        .filter(|_| skips.iter().all(Option::is_some))
    {
        anyhow::bail!("no point of the sweep can run here; the first: {first}");
    }
    Ok(skips)
}

/// `  · left: concurrency=7, concurrency=10` (at most three named), or nothing for
/// the last point.
fn points_left(rest: &[SweepPoint]) -> String {
    const NAMED: usize = 3;
    if rest.is_empty() {
        return String::new();
    }
    let named: Vec<&str> = rest.iter().take(NAMED).map(|p| p.label.as_str()).collect();
    let more = match rest.len().saturating_sub(NAMED) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    format!("  · left: {}{more}", named.join(", "))
}

/// The combined report of the points run so far; the rest are listed as not run.
fn combined(
    scenario: &Scenario,
    sweep: &Sweep,
    (outcomes, skips, failed): (&[Option<Outcome>], Reasons, Reasons),
    runtime: String,
    started_at: SystemTime,
    stopped_by: Option<String>,
) -> SweepReport {
    let points: Vec<PointReport> = sweep
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let outcome = outcomes.get(i).and_then(Option::as_ref);
            let reason = (skips.get(i).cloned().flatten()).or(failed.get(i).cloned().flatten());
            let w = &p.scenario.workload;
            let kind = serde_json::to_value(p.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            PointReport {
                label: p.label.clone(),
                values: p
                    .values
                    .iter()
                    .map(|(param, v)| (param.name_for(v), value_json(v)))
                    .collect(),
                network: p.network,
                status: match (outcome, &reason) {
                    (Some(o), _) => o.status.clone(),
                    (None, Some(_)) => PointStatus::Skipped,
                    (None, None) => PointStatus::NotRun,
                },
                reason,
                timed: format::what_is_timed(&kind).to_string(),
                kind,
                load: match &w.load {
                    Load::Closed { concurrency } => {
                        format!("closed loop, {concurrency} concurrent payers")
                    }
                    Load::Open { phases } => format!("open loop, {} phases", phases.len()),
                },
                results: outcome
                    .and_then(|o| o.measured.as_ref())
                    .map(|m| PointResults::of(&m.summary, &m.cpu_pct_avg, &m.nodes)),
                thresholds_passed: outcome
                    .and_then(|o| o.measured.as_ref())
                    .filter(|_| !p.scenario.thresholds.is_empty())
                    .map(|m| m.thresholds_passed),
            }
        })
        .collect();
    let p99_bound_ms = sweep.p99_bound.map(|b| b.as_secs_f64() * 1000.0);
    let best_under_bound = sweep
        .p99_bound
        .and_then(|b| max_tps_under_bound(&points, b.as_micros() as u64))
        .and_then(|i| {
            let r = points[i].results.as_ref()?;
            Some(BestPoint {
                label: points[i].label.clone(),
                tps_avg: r.tps_avg,
                p99_us: r.latency.p99_us,
            })
        });
    let mut spread = report::spread::spreads(&points);
    if scenario.repeat.judge == crate::scenario::Judge::Median && !scenario.thresholds.is_empty() {
        for s in &mut spread {
            let results = report::thresholds::evaluate_on_median(&scenario.thresholds, &s.repeats);
            s.thresholds_passed = Some(report::thresholds::all_passed(&results));
        }
    }
    let best_by_group = sweep.p99_bound.map_or(Vec::new(), |b| {
        report::matrix::best_by_group(&points, b.as_micros() as u64)
    });
    let per_hop = sweep
        .params
        .iter()
        .filter_map(|p| match p {
            SweepParam::Replicas(g) if sweep.line_groups.contains(g) => Some(p.name()),
            _ => None,
        })
        .flat_map(|name| latency_per_hop(&points, &name))
        .collect();
    SweepReport {
        schema_version: report::sweep::SWEEP_SCHEMA_VERSION,
        tool: report::Tool::this(),
        complete: stopped_by.is_none()
            && (outcomes.iter().zip(skips)).all(|(o, s)| o.is_some() || s.is_some()),
        interrupted_by: stopped_by.map(|why| report::redact::redact_text(&why)),
        started_at: humantime::format_rfc3339_seconds(started_at).to_string(),
        finished_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        scenario: report::ScenarioText {
            name: scenario.name.clone(),
            description: scenario.description.clone(),
            path: scenario.path.display().to_string(),
            text: report::redact::redact_scenario_text(&scenario.source),
        },
        runtime,
        host: report::Host::detect(),
        parameters: sweep.params.iter().map(SweepParam::name).collect(),
        p99_bound_ms,
        points,
        best_under_bound,
        best_by_group,
        repeat: (scenario.repeat.count > 1).then_some(report::spread::RepeatInfo {
            count: scenario.repeat.count,
            settle_s: scenario.repeat.settle.as_secs_f64(),
            fresh_network: scenario.repeat.fresh_network,
            thresholds: scenario.repeat.judge,
        }),
        spread,
        per_hop,
    }
}

fn value_json(v: &SweepValue) -> serde_json::Value {
    match v {
        SweepValue::Count(n) => serde_json::json!(n),
        SweepValue::Rate(r) => serde_json::json!(r),
        other => serde_json::Value::String(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::points_left;
    use crate::scenario::parse;
    use std::path::Path;

    #[test]
    fn the_points_left_are_named_up_to_three() {
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/scenarios/valid/alice-pays-bob.yaml"),
        )
        .unwrap();
        let text = format!("{text}sweep:\n  concurrency: [1, 2, 3, 4, 5]\n");
        let sweep = parse(Path::new("s.yaml"), &text, crate::runtime::capabilities)
            .unwrap()
            .sweep
            .unwrap();
        let p = &sweep.points;
        assert_eq!(
            points_left(&p[1..]),
            "  · left: concurrency=2, concurrency=3, concurrency=4 and 1 more"
        );
        assert_eq!(
            points_left(&p[3..]),
            "  · left: concurrency=4, concurrency=5"
        );
        assert_eq!(points_left(&p[5..]), "");
    }
}
