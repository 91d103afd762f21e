//! How the points of a run ended, and what that makes of the run: its exit code and,
//! for a sweep, the combined report (`sweep.json`, `sweep.html`, `sweep.md` in the
//! report directory), also when the sweep is cut short (marked partial, the points not
//! run listed as such).

use super::plan::Plan;
use super::point::Measured;
use super::{RunOptions, Signals};
use crate::exit::Exit;
use crate::report::sweep::{
    BestPoint, PointReport, PointResults, PointStatus, SweepReport, latency_per_hop,
    max_tps_under_bound,
};
use crate::report::{self, format};
use crate::scenario::{Load, Scenario, Sweep, SweepParam, SweepPoint, SweepValue};
use anyhow::Result;
use std::time::SystemTime;

/// Per point, why it did not run (skipped, or failed with its network), if so.
type Reasons<'a> = &'a [Option<String>];

/// How a point ended, for the combined report.
struct Outcome {
    status: PointStatus,
    measured: Option<Measured>,
}

/// The points' outcomes so far, and what stops the run.
pub(super) struct Tally {
    outcomes: Vec<Option<Outcome>>,
    /// Why each point failed without running (its network did not come up).
    failed: Vec<Option<String>>,
    /// The networks of a matrix that did not come up.
    not_up: Vec<String>,
    /// The error the run ends with (the first one).
    pub error: Option<anyhow::Error>,
    /// Why the run stopped before its last point, if it did.
    pub stopped_by: Option<String>,
    /// What the first network ran on, for the combined report.
    pub runtime: Option<String>,
}

impl Tally {
    pub fn new(points: usize) -> Self {
        Tally {
            outcomes: (0..points).map(|_| None).collect(),
            failed: vec![None; points],
            not_up: Vec::new(),
            error: None,
            stopped_by: None,
            runtime: None,
        }
    }

    /// True once an error or a stop ends the run: no further network starts.
    pub fn stopped(&self) -> bool {
        self.stopped_by.is_some() || self.error.is_some()
    }

    /// Records how point `i` ended; true when it stops the run (an error, a signal,
    /// the operator quitting the live view).
    pub fn record(
        &mut self,
        i: usize,
        mut measured: Measured,
        signals: &Signals,
        quit: bool,
    ) -> bool {
        let status = if measured.complete {
            PointStatus::Done
        } else {
            PointStatus::Partial
        };
        if let Some(e) = measured.load_err.take() {
            self.stopped_by = Some(format!("{e:#}"));
            self.error = Some(e);
        } else if let Some(sig) = signals.received() {
            self.stopped_by = Some(sig.to_string());
        } else if quit {
            self.stopped_by = Some("the operator quit the live view".into());
        }
        self.outcomes[i] = Some(Outcome {
            status,
            measured: Some(measured),
        });
        self.stopped_by.is_some()
    }

    /// Marks every point of a network that could not be brought up (or whose runtime
    /// could not be chosen) as failed, with the reason, in a matrix that goes on.
    pub fn fail_network(&mut self, plan: &Plan, points: &[usize], e: &anyhow::Error) {
        let why = crate::redact::redact_text(&format!("{e:#}"));
        let first = plan.label(points[0]).unwrap_or_default().to_string();
        crate::lines::errln!("network of {first} did not come up: {why}");
        for &i in points {
            self.outcomes[i] = Some(Outcome {
                status: PointStatus::Failed,
                measured: None,
            });
            self.failed[i] = Some(why.clone());
        }
        self.not_up.push(first);
    }

    /// The end of the run: a sweep's combined report printed and written, then the
    /// exit code (the run's error first, then a matrix network that did not come up,
    /// a signal (130 for SIGINT, 143 for SIGTERM), a failed threshold).
    pub fn finish(
        mut self,
        plan: &Plan,
        opts: &RunOptions,
        signals: Signals,
        started_at: SystemTime,
    ) -> Result<Exit> {
        let scenario = &plan.scenario;
        let spread = match &scenario.sweep {
            Some(sweep) => {
                let report = combined(
                    scenario,
                    sweep,
                    (&self.outcomes, &plan.skips, &self.failed),
                    (self.runtime.take())
                        .unwrap_or_else(|| "none (no network was brought up)".into()),
                    started_at,
                    self.stopped_by.clone(),
                );
                crate::lines::outln!("{}", report::sweep::markdown(&report));
                if let Some(dir) = &opts.report_dir {
                    match report::sweep::write_all(&report, dir) {
                        Ok(paths) => {
                            for p in &paths {
                                tracing::debug!("sweep report file: {}", p.display());
                            }
                            crate::lines::errln!(
                                "sweep report: {} ({} files in {}: sweep.json, sweep.md, \
                                 charts; each point's report in its folder)",
                                dir.join(report::sweep::HTML_FILE).display(),
                                paths.len(),
                                dir.display()
                            );
                        }
                        Err(e) => {
                            self.error.get_or_insert(e);
                        }
                    }
                }
                report.spread
            }
            None => Vec::new(),
        };
        if let Some(path) = &opts.junit
            && let Err(e) = self.write_junit(plan, &spread, path, started_at)
        {
            self.error.get_or_insert(e);
        }
        let interrupted = signals.received().map(Exit::for_signal);
        signals.stop();
        if let Some(e) = self.error {
            return Err(e);
        }
        if !self.not_up.is_empty() {
            anyhow::bail!(
                "{} network(s) of the matrix did not come up (their points are marked failed in the report): {}",
                self.not_up.len(),
                self.not_up.join("; ")
            );
        }
        // Each repeat judged, or (repeat: { thresholds: median }) the median of each point.
        let thresholds_failed = if judged_on_median(scenario) {
            spread.iter().any(|s| s.thresholds_passed == Some(false))
        } else {
            (self.outcomes.iter())
                .filter_map(|o| o.as_ref()?.measured.as_ref())
                .any(|m| !m.thresholds_passed)
        };
        Ok(if let Some(exit) = interrupted {
            exit
        } else if thresholds_failed {
            Exit::ThresholdFailed
        } else {
            Exit::Ok
        })
    }
}

impl Tally {
    /// `--junit FILE`: a test suite per measured point with its verdicts, or, when
    /// the medians of repeats are judged, per point with the medians' verdicts.
    fn write_junit(
        &self,
        plan: &Plan,
        spread: &[report::sweep::Spread],
        path: &std::path::Path,
        started_at: SystemTime,
    ) -> Result<()> {
        let scenario = &plan.scenario;
        let timestamp = humantime::format_rfc3339_seconds(started_at).to_string();
        let suite_name = |label: Option<&str>| match label {
            Some(label) => format!("{}/{label}", scenario.name),
            None => scenario.name.clone(),
        };
        let suites: Vec<report::junit::Suite> = if judged_on_median(scenario) {
            (spread.iter())
                .map(|s| report::junit::Suite {
                    name: suite_name(Some(&format!("{} (median)", s.group))),
                    timestamp: timestamp.clone(),
                    time_s: 0.0,
                    results: report::thresholds::evaluate_on_median(
                        &scenario.thresholds,
                        &s.repeats,
                    ),
                })
                .collect()
        } else {
            (self.outcomes.iter().enumerate())
                .filter_map(|(i, o)| Some((i, o.as_ref()?.measured.as_ref()?)))
                .map(|(i, m)| report::junit::Suite {
                    name: suite_name(plan.label(i)),
                    timestamp: timestamp.clone(),
                    time_s: m.summary.elapsed_s,
                    results: m.thresholds.clone(),
                })
                .collect()
        };
        let (dir, name) = split_path(path)?;
        crate::files::write_file(dir, name, &report::junit::render(&suites))?;
        crate::lines::errln!("junit: {}", path.display());
        Ok(())
    }
}

/// True when `repeat: { thresholds: median }` judges the medians of the repeats.
fn judged_on_median(scenario: &Scenario) -> bool {
    scenario.repeat.judge == crate::scenario::Judge::Median && scenario.repeat.count > 1
}

/// The directory and file name of `path`, as the atomic writer takes them.
fn split_path(path: &std::path::Path) -> Result<(&std::path::Path, &str)> {
    let name = (path.file_name().and_then(|n| n.to_str()))
        .ok_or_else(|| anyhow::anyhow!("--junit {}: not a file name", path.display()))?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    Ok((dir.unwrap_or(std::path::Path::new(".")), name))
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
            point_report(p, outcome, reason)
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
        interrupted_by: stopped_by.map(|why| crate::redact::redact_text(&why)),
        started_at: humantime::format_rfc3339_seconds(started_at).to_string(),
        finished_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        scenario: report::ScenarioText::of(scenario),
        runtime,
        host: report::Host::detect(),
        parameters: sweep.params.iter().map(SweepParam::name).collect(),
        p99_bound_ms,
        points,
        best_under_bound,
        best_by_group,
        repeat: (scenario.repeat.count > 1).then_some(report::sweep::RepeatInfo {
            count: scenario.repeat.count,
            settle_s: scenario.repeat.settle.as_secs_f64(),
            fresh_network: scenario.repeat.fresh_network,
            thresholds: scenario.repeat.judge,
        }),
        spread,
        per_hop,
    }
}

/// One point's line of the sweep report: its values, status and results.
fn point_report(p: &SweepPoint, outcome: Option<&Outcome>, reason: Option<String>) -> PointReport {
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
        history: (outcome.and_then(|o| o.measured.as_ref())).and_then(|m| m.history.clone()),
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
}

fn value_json(v: &SweepValue) -> serde_json::Value {
    match v {
        SweepValue::Count(n) => serde_json::json!(n),
        SweepValue::Rate(r) => serde_json::json!(r),
        other => serde_json::Value::String(other.to_string()),
    }
}
