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
    for point in &sweep.points {
        run::preflight_points(&point.scenario)?;
    }
    let exporter = run::metrics_endpoint::start(opts.metrics_listen, &scenario.name).await?;
    let started_at = SystemTime::now();
    let total = sweep.points.len();
    let networks = sweep.points.last().map_or(0, |p| p.network + 1);
    eprintln!(
        "sweep {}: {total} points on {networks} network(s): {}",
        scenario.name,
        sweep
            .points
            .iter()
            .map(|p| p.label.as_str())
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let signals = Signals::watch();
    let mut outcomes: Vec<Outcome> = Vec::with_capacity(total);
    let mut error: Option<anyhow::Error> = None;
    let mut stopped_by: Option<String> = None;

    for network in 0..networks {
        if stopped_by.is_some() || error.is_some() {
            break;
        }
        let points: Vec<(usize, &SweepPoint)> = sweep
            .points
            .iter()
            .enumerate()
            .filter(|(_, p)| p.network == network)
            .collect();
        let first = &points[0].1.scenario;
        let run_id = run::run_id(&scenario.name, started_at, Some(network + 1));
        let run_dir = make_run_dir(&opts, &run_id)?;
        eprintln!(
            "==> network {}/{networks}: {} nodes, for {} point(s) (run {run_id})",
            network + 1,
            first.nodes.len(),
            points.len()
        );
        let chosen = run::choose_runtime(first).await?;
        let mut runtime = chosen.create(&run_id, &scenario.name, &run_dir, opts.keep);
        let mut log = StepLog::default();
        let mut facts = RunFacts::on(runtime.as_ref());
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
                for (i, point) in points {
                    let label = format!("point {}/{total}: {}", i + 1, point.label);
                    let left = total - i - 1;
                    eprintln!("==> {label} ({left} left after it)");
                    // The live view's header also names what is left.
                    let label = format!("{label}{}", points_left(&sweep.points[i + 1..]));
                    let measured = measure(
                        Point {
                            scenario: &point.scenario,
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
                    outcomes.push(Outcome {
                        status,
                        measured: Some(measured),
                    });
                    if stopped_by.is_some() {
                        break;
                    }
                }
            }
            Ok(None) => stopped_by = signals.received().map(str::to_string),
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

    let report = combined(&scenario, &sweep, &outcomes, started_at, stopped_by.clone());
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
    let thresholds_failed = outcomes
        .iter()
        .filter_map(|o| o.measured.as_ref())
        .any(|m| !m.thresholds_passed);
    Ok(if interrupted {
        Exit::Interrupted
    } else if thresholds_failed {
        Exit::ThresholdFailed
    } else {
        Exit::Ok
    })
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
    outcomes: &[Outcome],
    started_at: SystemTime,
    stopped_by: Option<String>,
) -> SweepReport {
    let points: Vec<PointReport> = sweep
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let outcome = outcomes.get(i);
            let w = &p.scenario.workload;
            let kind = serde_json::to_value(w.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            PointReport {
                label: p.label.clone(),
                values: p
                    .values
                    .iter()
                    .map(|(param, v)| (param.name(), value_json(v)))
                    .collect(),
                network: p.network,
                status: outcome.map_or(PointStatus::NotRun, |o| o.status.clone()),
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
                    .map(|m| PointResults::of(&m.summary, &m.cpu_pct_avg)),
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
        complete: stopped_by.is_none() && outcomes.len() == sweep.points.len(),
        interrupted_by: stopped_by.map(|why| report::redact::redact_text(&why)),
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
        parameters: sweep.params.iter().map(SweepParam::name).collect(),
        p99_bound_ms,
        points,
        best_under_bound,
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
        let sweep = parse(Path::new("s.yaml"), &text).unwrap().sweep.unwrap();
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
