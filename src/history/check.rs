//! `history check` and `history trend`: figures over stored runs. Two loads are
//! comparable when they ran the same scenario text, the same point of it with the
//! same load, under the same envelope, on the same class of host.

use super::record::PointRecord;
use super::store::StoredRun;
use crate::report::stats::{Significance, median, significance};

/// A figure of a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    Tps,
    P50,
    P90,
    P99,
    Cpu,
    /// The nodes' data-dir growth per successful payment (summed over the nodes).
    BytesPerPayment,
}

impl Metric {
    pub const ALL: [Metric; 6] = [
        Metric::Tps,
        Metric::P50,
        Metric::P90,
        Metric::P99,
        Metric::Cpu,
        Metric::BytesPerPayment,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Metric::Tps => "tps",
            Metric::P50 => "p50",
            Metric::P90 => "p90",
            Metric::P99 => "p99",
            Metric::Cpu => "cpu",
            Metric::BytesPerPayment => "bytes-per-payment",
        }
    }

    pub fn parse(text: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name() == text)
    }

    pub fn value(self, p: &PointRecord) -> Option<f64> {
        match self {
            Metric::Tps => Some(p.tps),
            Metric::P50 => Some(p.p50_us as f64),
            Metric::P90 => Some(p.p90_us as f64),
            Metric::P99 => Some(p.p99_us as f64),
            Metric::Cpu => p.cpu_pct,
            Metric::BytesPerPayment => p.bytes_per_payment,
        }
    }

    pub fn higher_is_better(self) -> bool {
        self == Metric::Tps
    }

    /// A value as a reader takes it: TPS, milliseconds, percent of a core.
    pub fn text(self, v: f64) -> String {
        match self {
            Metric::Tps => crate::report::format::tps(v),
            Metric::Cpu => format!("{v:.0} %"),
            Metric::BytesPerPayment => crate::report::resources_charts::signed_bytes(v),
            _ => crate::report::format::latency_us(v.round().max(0.0) as u64),
        }
    }
}

/// What makes two loads comparable.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key<'a> {
    scenario_hash: &'a str,
    group: &'a str,
    load: &'a str,
    envelope: &'a str,
    host_class: String,
}

fn key<'a>(run: &'a StoredRun, p: &'a PointRecord) -> Key<'a> {
    Key {
        scenario_hash: &run.run.scenario_hash,
        group: &p.group,
        load: &p.load,
        envelope: &p.envelope,
        host_class: run.run.host.class(),
    }
}

/// One point of the latest run against the earlier comparable runs.
#[derive(Debug, Clone, PartialEq)]
pub struct PointCheck {
    /// The point (`concurrency=4`), empty for a single run.
    pub group: String,
    /// The earlier runs compared with, oldest first.
    pub baseline_runs: Vec<i64>,
    pub verdicts: Vec<MetricVerdict>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MetricVerdict {
    pub metric: Metric,
    pub baseline: Vec<f64>,
    pub latest: Vec<f64>,
    /// `None` when a side has fewer than two figures.
    pub significance: Option<Significance>,
    /// How far the median of an earlier run strayed, at most, from the median of all
    /// the earlier runs' figures, percent of it: the run-to-run noise that repeats
    /// within one run do not show. `None` with fewer than two earlier runs.
    pub spread_pct: Option<f64>,
    /// The smallest change called a regression, percent: the larger of the minimum
    /// asked for (`--min-change`) and `spread_pct`.
    pub floor_pct: f64,
}

impl MetricVerdict {
    /// Significantly worse than the baseline.
    pub fn worse(&self) -> bool {
        self.significance.is_some_and(|s| {
            s.significant && ((s.change_pct > 0.0) != self.metric.higher_is_better())
        })
    }

    /// Significantly worse, by more than the floor.
    pub fn regression(&self) -> bool {
        self.worse() && (self.significance).is_some_and(|s| s.change_pct.abs() > self.floor_pct)
    }

    /// One metric's figures against the earlier runs' (`per_run`, one list of loads
    /// per run).
    fn of(
        metric: Metric,
        per_run: &[Vec<PointRecord>],
        mine: &[PointRecord],
        min_change_pct: f64,
    ) -> MetricVerdict {
        let values = |loads: &[PointRecord]| -> Vec<f64> {
            loads.iter().filter_map(|p| metric.value(p)).collect()
        };
        let baseline: Vec<f64> = per_run.iter().flat_map(|r| values(r)).collect();
        let latest = values(mine);
        let spread_pct = run_to_run_spread(per_run.iter().map(|r| values(r)), &baseline);
        MetricVerdict {
            metric,
            significance: significance(&baseline, &latest),
            floor_pct: spread_pct.map_or(min_change_pct, |s| s.max(min_change_pct)),
            spread_pct,
            baseline,
            latest,
        }
    }
}

/// The largest distance of a run's median from the median of `all`, percent of the
/// latter; `None` with fewer than two runs that have a figure, or a median of 0.
fn run_to_run_spread(runs: impl Iterator<Item = Vec<f64>>, all: &[f64]) -> Option<f64> {
    let medians: Vec<f64> = runs.filter(|v| !v.is_empty()).map(|v| median(&v)).collect();
    let center = median(all);
    if medians.len() < 2 || center == 0.0 {
        return None;
    }
    let widest = medians
        .iter()
        .map(|m| (m - center).abs())
        .fold(0.0, f64::max);
    Some(widest / center.abs() * 100.0)
}

/// The latest run and how each of its points compares.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckReport {
    pub latest: i64,
    pub points: Vec<PointCheck>,
}

impl CheckReport {
    pub fn regression(&self) -> bool {
        (self.points.iter()).any(|p| p.verdicts.iter().any(MetricVerdict::regression))
    }
}

/// What `check` compares and how strictly.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckOptions {
    /// Up to this many earlier comparable runs.
    pub last: usize,
    pub metrics: Vec<Metric>,
    /// A significant change for the worse is a regression only beyond this many
    /// percent (and beyond the earlier runs' own spread).
    pub min_change_pct: f64,
}

/// The latest complete run (of `scenario`, if named) against up to `last` earlier
/// comparable runs per point: every repeat of those runs is the baseline sample,
/// every repeat of the latest the other, tested as `compare` does. `None` without
/// a complete run.
pub fn check(
    runs: &[StoredRun],
    scenario: Option<&str>,
    opts: &CheckOptions,
) -> Option<CheckReport> {
    let (at, latest) = runs
        .iter()
        .enumerate()
        .filter(|(_, r)| r.run.complete && scenario.is_none_or(|s| r.run.scenario == s))
        .max_by(|a, b| {
            (a.1.run.started_at.as_str(), a.1.id).cmp(&(b.1.run.started_at.as_str(), b.1.id))
        })?;
    let mut groups: Vec<Key> = Vec::new();
    for p in latest.run.points.iter().filter(|p| p.complete) {
        let k = key(latest, p);
        if !groups.contains(&k) {
            groups.push(k);
        }
    }
    let earlier: Vec<&StoredRun> = runs
        .iter()
        .enumerate()
        .filter(|(i, r)| {
            *i != at
                && r.run.complete
                && (r.run.started_at.as_str(), r.id) < (latest.run.started_at.as_str(), latest.id)
        })
        .map(|(_, r)| r)
        .collect();
    let points = groups
        .iter()
        .map(|k| {
            let of = |run: &'_ StoredRun| -> Vec<PointRecord> {
                (run.run.points.iter())
                    .filter(|p| p.complete && key(run, p) == *k)
                    .cloned()
                    .collect()
            };
            let mut base_runs: Vec<&StoredRun> = earlier
                .iter()
                .copied()
                .filter(|r| !of(r).is_empty())
                .collect();
            let skip = base_runs.len().saturating_sub(opts.last);
            base_runs.drain(..skip);
            let per_run: Vec<Vec<PointRecord>> = base_runs.iter().map(|r| of(r)).collect();
            let mine = of(latest);
            PointCheck {
                group: k.group.to_string(),
                baseline_runs: base_runs.iter().map(|r| r.id).collect(),
                verdicts: (opts.metrics.iter())
                    .map(|&m| MetricVerdict::of(m, &per_run, &mine, opts.min_change_pct))
                    .collect(),
            }
        })
        .collect();
    Some(CheckReport {
        latest: latest.id,
        points,
    })
}

/// What `trend` groups runs by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    Version,
    Commit,
}

/// A metric over runs of one scenario point: per version (or commit), in the order
/// first run, the median over its loads and how many.
#[derive(Debug, Clone, PartialEq)]
pub struct Trend {
    pub scenario: String,
    pub group: String,
    pub rows: Vec<TrendRow>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TrendRow {
    pub label: String,
    pub median: f64,
    pub n: usize,
    /// The runs it is drawn from.
    pub runs: Vec<i64>,
}

/// The nodes' implementations and versions (or commits) of a point, each once.
pub fn versions_of(p: &PointRecord, by: By) -> String {
    let mut names: Vec<String> = Vec::new();
    for n in &p.nodes {
        let what = match (by, &n.commit) {
            (By::Commit, Some(c)) => c.clone(),
            _ => n.version.clone(),
        };
        let name = format!("{} {what}", n.implementation);
        if !names.contains(&name) {
            names.push(name);
        }
    }
    if names.is_empty() {
        "(no nodes)".into()
    } else {
        names.join(", ")
    }
}

/// `metric` over the complete loads of `runs` (of `scenario`, if named), one trend
/// per scenario and point.
pub fn trend(runs: &[StoredRun], scenario: Option<&str>, metric: Metric, by: By) -> Vec<Trend> {
    let mut trends: Vec<(Trend, Vec<Vec<f64>>)> = Vec::new();
    for run in runs
        .iter()
        .filter(|r| scenario.is_none_or(|s| r.run.scenario == s))
    {
        for p in run.run.points.iter().filter(|p| p.complete) {
            let Some(v) = metric.value(p) else { continue };
            let at = match (trends.iter())
                .position(|(t, _)| t.scenario == run.run.scenario && t.group == p.group)
            {
                Some(i) => i,
                None => {
                    trends.push((
                        Trend {
                            scenario: run.run.scenario.clone(),
                            group: p.group.clone(),
                            rows: Vec::new(),
                        },
                        Vec::new(),
                    ));
                    trends.len() - 1
                }
            };
            let (t, values) = &mut trends[at];
            let label = versions_of(p, by);
            let row = match t.rows.iter().position(|r| r.label == label) {
                Some(i) => i,
                None => {
                    t.rows.push(TrendRow {
                        label,
                        median: 0.0,
                        n: 0,
                        runs: Vec::new(),
                    });
                    values.push(Vec::new());
                    t.rows.len() - 1
                }
            };
            values[row].push(v);
            if !t.rows[row].runs.contains(&run.id) {
                t.rows[row].runs.push(run.id);
            }
        }
    }
    trends
        .into_iter()
        .map(|(mut t, values)| {
            for (row, v) in t.rows.iter_mut().zip(values) {
                row.median = median(&v);
                row.n = v.len();
            }
            t
        })
        .collect()
}
