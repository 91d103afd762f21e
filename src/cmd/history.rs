//! `lnbench-tui history ...`: import report directories into the results store, list
//! and show the runs recorded, trend a metric, check the latest run for a regression.

use crate::cli::{HistoryArgs, HistoryCommand};
use crate::exit::{Exit, UsageError};
use crate::history::check::{self, By, Metric};
use crate::history::record::PointRecord;
use crate::history::store::{Inserted, Store, StoredRun};
use crate::history::{BadStore, import};
use crate::lines::{errln, outln};
use crate::report::stats::median;
use anyhow::Result;

pub(crate) fn history(args: HistoryArgs) -> Result<Exit> {
    let Some(path) = crate::history::store_path(args.store.as_deref()) else {
        return Err(UsageError(
            "no results store: LNBENCH_HISTORY is `off` and no --store was given",
        )
        .into());
    };
    match args.command {
        HistoryCommand::Import { dirs } => import_dirs(&path, &dirs),
        HistoryCommand::List {
            scenario,
            implementation,
            version,
            since,
        } => list_runs(
            &path,
            &scenario,
            &implementation,
            &version,
            since.as_deref(),
        ),
        HistoryCommand::Show { id } => {
            let mut store = Store::open_existing(&path)?;
            let Some(run) = store.run(id)? else {
                return Err(BadStore(format!(
                    "no run {id} in {}: `lnbench-tui history list` shows the ids",
                    store.at()
                ))
                .into());
            };
            show(&run);
            Ok(Exit::Ok)
        }
        HistoryCommand::Trend {
            metric,
            scenario,
            by,
        } => {
            let metric = Metric::parse(&metric).expect("clap checked the metric");
            let by = if by == "commit" {
                By::Commit
            } else {
                By::Version
            };
            let runs = Store::open_existing(&path)?.runs()?;
            let trends = check::trend(&runs, scenario.as_deref(), metric, by);
            if trends.is_empty() {
                outln!("no complete run recorded{}", for_scenario(&scenario));
            }
            for t in &trends {
                print_trend(t, metric);
            }
            Ok(Exit::Ok)
        }
        HistoryCommand::Site { dir } => {
            let runs = Store::open_existing(&path)?.runs()?;
            crate::files::check_writable(&dir, "history site DIR")?;
            for page in crate::history::site::write(&runs, &dir)? {
                outln!("{}", page.display());
            }
            Ok(Exit::Ok)
        }
        HistoryCommand::Check {
            scenario,
            last,
            metric,
            min_change,
        } => check_latest(&path, scenario.as_deref(), last, &metric, min_change),
    }
}

/// `history import DIR...`: every directory read first, so a bad one records nothing.
fn import_dirs(path: &std::path::Path, dirs: &[std::path::PathBuf]) -> Result<Exit> {
    let mut runs = Vec::new();
    for dir in dirs {
        runs.push(import::read_dir(dir)?);
    }
    let mut store = Store::open(path)?;
    for (dir, run) in dirs.iter().zip(&runs) {
        match store.insert(run)? {
            Inserted::New(id) => outln!(
                "{}: recorded as run {id} ({}, {} points)",
                dir.display(),
                run.scenario,
                run.points.len()
            ),
            Inserted::Already(id) => {
                outln!("{}: already recorded as run {id}", dir.display())
            }
        }
    }
    Ok(Exit::Ok)
}

/// `history list` with its filters.
fn list_runs(
    path: &std::path::Path,
    scenario: &Option<String>,
    implementation: &Option<String>,
    version: &Option<String>,
    since: Option<&str>,
) -> Result<Exit> {
    let since = since.map(since_of).transpose()?;
    let runs = Store::open_existing(path)?.runs()?;
    let shown: Vec<&StoredRun> = runs
        .iter()
        .filter(|r| scenario.as_ref().is_none_or(|s| &r.run.scenario == s))
        .filter(|r| since.as_ref().is_none_or(|d| r.run.started_at >= *d))
        .filter(|r| {
            has_node(r, |n| {
                implementation
                    .as_ref()
                    .is_none_or(|i| &n.implementation == i)
                    && version
                        .as_ref()
                        .is_none_or(|v| n.version.contains(v.as_str()))
            })
        })
        .collect();
    list(&shown);
    Ok(Exit::Ok)
}

/// `history check`: exit 1 (as a failed threshold) on a significant regression.
fn check_latest(
    path: &std::path::Path,
    scenario: Option<&str>,
    last: usize,
    metric: &[String],
    min_change_pct: f64,
) -> Result<Exit> {
    if last == 0 {
        return Err(UsageError("--last must be at least 1").into());
    }
    if !(min_change_pct.is_finite() && min_change_pct >= 0.0) {
        return Err(UsageError("--min-change must be a percentage of 0 or more (5, 12.5)").into());
    }
    let opts = check::CheckOptions {
        last,
        metrics: (metric.iter())
            .map(|m| Metric::parse(m).expect("clap checked the metric"))
            .collect(),
        min_change_pct,
    };
    let runs = Store::open_existing(path)?.runs()?;
    let Some(report) = check::check(&runs, scenario, &opts) else {
        outln!(
            "no complete run recorded{}: nothing to check",
            for_scenario(&scenario.map(str::to_string))
        );
        return Ok(Exit::Ok);
    };
    print_check(&report);
    Ok(if report.regression() {
        Exit::ThresholdFailed
    } else {
        Exit::Ok
    })
}

fn for_scenario(scenario: &Option<String>) -> String {
    scenario
        .as_ref()
        .map_or_else(String::new, |s| format!(" of scenario {s}"))
}

/// `--since 2026-11-20` (or RFC 3339) as the RFC 3339 text reports start with.
fn since_of(text: &str) -> Result<String> {
    let full = if text.len() == 10 {
        format!("{text}T00:00:00Z")
    } else {
        text.to_string()
    };
    match humantime::parse_rfc3339_weak(&full) {
        Ok(t) => Ok(humantime::format_rfc3339_seconds(t).to_string()),
        Err(_) => Err(BadStore(format!(
            "--since {text}: not a date; write 2026-11-20 or 2026-11-20T12:00:00Z"
        ))
        .into()),
    }
}

fn has_node(r: &StoredRun, pred: impl Fn(&crate::history::record::NodeRecord) -> bool) -> bool {
    (r.run.points.iter()).any(|p| p.nodes.iter().any(&pred)) || r.run.points.is_empty()
}

fn complete_points(r: &StoredRun) -> Vec<&PointRecord> {
    r.run.points.iter().filter(|p| p.complete).collect()
}

fn list(runs: &[&StoredRun]) {
    if runs.is_empty() {
        outln!("no run recorded matches");
        return;
    }
    outln!(
        "{:>4}  {:<20}  {:<24}  {:>6}  {:>8}  {:>9}  nodes",
        "id",
        "started",
        "scenario",
        "points",
        "TPS",
        "p99"
    );
    for r in runs {
        let done = complete_points(r);
        let tps: Vec<f64> = done.iter().map(|p| p.tps).collect();
        let p99: Vec<f64> = done.iter().map(|p| p.p99_us as f64).collect();
        let (tps, p99) = if done.is_empty() {
            ("-".to_string(), "-".to_string())
        } else {
            (
                Metric::Tps.text(median(&tps)),
                Metric::P99.text(median(&p99)),
            )
        };
        let partial = if r.run.complete { "" } else { " (partial)" };
        outln!(
            "{:>4}  {:<20}  {:<24}  {:>6}  {:>8}  {:>9}  {}{partial}",
            r.id,
            r.run.started_at,
            r.run.scenario,
            r.run.points.len(),
            tps,
            p99,
            r.run
                .points
                .first()
                .map_or_else(String::new, |p| check::versions_of(p, By::Version))
        );
    }
}

fn show(r: &StoredRun) {
    let run = &r.run;
    outln!("run {}: {} ({})", r.id, run.scenario, run.source);
    outln!(
        "  started {}, finished {}{}",
        run.started_at,
        run.finished_at,
        if run.complete { "" } else { ", partial" }
    );
    outln!("  recorded {}", r.recorded_at);
    outln!("  scenario sha256 {}", run.scenario_hash);
    outln!(
        "  runtime {}; lnbench-tui {}",
        run.runtime,
        run.tool_version
    );
    outln!(
        "  host {} ({}, kernel {})",
        run.host.class(),
        run.host.os,
        run.host.kernel
    );
    for p in &run.points {
        let name = if p.label.is_empty() { "run" } else { &p.label };
        outln!(
            "  {name}: TPS {}, p50 {}, p90 {}, p99 {}, ok {}, failed {}, CPU {}, bytes per payment {}{}",
            Metric::Tps.text(p.tps),
            Metric::P50.text(p.p50_us as f64),
            Metric::P90.text(p.p90_us as f64),
            Metric::P99.text(p.p99_us as f64),
            p.ok,
            p.failed,
            p.cpu_pct
                .map_or_else(|| "-".into(), |c| Metric::Cpu.text(c)),
            (p.bytes_per_payment).map_or_else(|| "-".into(), |b| Metric::BytesPerPayment.text(b)),
            if p.complete { "" } else { " (partial)" }
        );
        outln!("    envelope: {}", p.envelope);
        if let Some(n) = p.made_before {
            outln!("    history: {n} payments made before the load");
        }
        outln!(
            "    outside load: {}",
            match (p.outside_load_pct, p.steal_pct) {
                (Some(o), s) => format!(
                    "{o:.1} % of a core, steal {:.1} %{}",
                    s.unwrap_or(0.0),
                    if p.disturbed == Some(true) {
                        ", disturbed"
                    } else {
                        ""
                    }
                ),
                (None, _) => "not sampled".into(),
            }
        );
        for n in &p.nodes {
            outln!(
                "    {} {} {}{}{}",
                n.name,
                n.implementation,
                n.version,
                n.database
                    .as_ref()
                    .map_or_else(String::new, |d| format!(", {d}")),
                n.cpu_pct
                    .map_or_else(String::new, |c| format!(", CPU {c:.0} %"))
            );
        }
        outln!("    report: {}", p.report);
    }
}

fn print_trend(t: &check::Trend, metric: Metric) {
    let point = if t.group.is_empty() {
        String::new()
    } else {
        format!(" [{}]", t.group)
    };
    outln!("{} {}{point}", t.scenario, metric.name());
    let top = t.rows.iter().map(|r| r.median).fold(0.0_f64, f64::max);
    let width = t.rows.iter().map(|r| r.label.len()).max().unwrap_or(0);
    for r in &t.rows {
        let bar = if top > 0.0 {
            (r.median / top * 40.0).round() as usize
        } else {
            0
        };
        let runs: Vec<String> = r.runs.iter().map(|i| i.to_string()).collect();
        outln!(
            "  {:<width$}  {:>9}  {}  n={} (runs {})",
            r.label,
            metric.text(r.median),
            "#".repeat(bar.max(1)),
            r.n,
            runs.join(", ")
        );
    }
}

fn print_check(report: &check::CheckReport) {
    outln!("history check: run {}", report.latest);
    for p in &report.points {
        let point = if p.group.is_empty() {
            "run".to_string()
        } else {
            p.group.clone()
        };
        if p.baseline_runs.is_empty() {
            outln!(
                "  {point}: no earlier comparable run (same scenario, load, envelope and host class): nothing to compare"
            );
            continue;
        }
        let ids: Vec<String> = p.baseline_runs.iter().map(|i| i.to_string()).collect();
        outln!("  {point}: against runs {}", ids.join(", "));
        for v in &p.verdicts {
            let words = match &v.significance {
                Some(s) => {
                    let flag = if v.regression() {
                        format!(", beyond {} REGRESSION", floor_words(v))
                    } else if v.worse() {
                        format!(", within {}: not a regression", floor_words(v))
                    } else if s.significant {
                        " better".into()
                    } else {
                        String::new()
                    };
                    format!("{}{flag}", s.words())
                }
                None => format!(
                    "cannot judge: {} earlier vs {} latest figures, at least 2 each are needed (run with --repeat 4 or more)",
                    v.baseline.len(),
                    v.latest.len()
                ),
            };
            let latest: Vec<f64> = v.latest.clone();
            outln!(
                "    {} {} (median of {}): {words}",
                v.metric.name(),
                if latest.is_empty() {
                    "-".into()
                } else {
                    v.metric.text(median(&latest))
                },
                latest.len()
            );
        }
    }
    if report.regression() {
        errln!(
            "history check: significant regression in run {}",
            report.latest
        );
    }
}

/// `the 5 % floor (--min-change)` or `the 21.4 % floor (the widest swing of an
/// earlier run)`.
fn floor_words(v: &check::MetricVerdict) -> String {
    let from_spread = v.spread_pct.is_some_and(|s| s >= v.floor_pct);
    format!(
        "the {:.1} % floor ({})",
        v.floor_pct,
        if from_spread {
            "the widest swing of an earlier run"
        } else {
            "--min-change"
        }
    )
}
