//! Thresholds of the scenario checked against the results at the end of a run
//! (k6-style): any failed threshold fails the run (exit code 1).

use crate::metrics::{Percentiles, Summary};
use crate::scenario::{LatencyStat, PhaseKind, PhaseThreshold, Threshold};
use serde::Serialize;

/// One threshold and how the run fared against it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThresholdResult {
    /// The key as written in the scenario, e.g. `p99_latency`.
    pub name: String,
    /// `us` (latencies), `tps`, `fraction` (failure rate, 0 to 1), `percent` (the
    /// machine's load) or `payments` (mismatches).
    pub unit: String,
    /// `max` (the actual value may not exceed the limit) or `min`.
    pub bound: String,
    pub limit: f64,
    /// `None` when the run gave nothing to measure (no successful payment for a
    /// latency, no payment at all for the failure rate): the threshold then fails.
    pub actual: Option<f64>,
    pub passed: bool,
    /// The open-loop phase (`ramp`, `hold`) checked, when the threshold is on one;
    /// absent for the whole run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

impl ThresholdResult {
    fn format(&self, value: f64) -> String {
        match self.unit.as_str() {
            "us" => super::format::latency_us(value.round() as u64),
            "fraction" => super::format::percent(value),
            "payments" => format!("{value:.0} payments"),
            _ => format!("{value:.1} payments/s"),
        }
    }

    /// The name with its phase, if any: `p99_latency`, `p99_latency (hold)`.
    pub fn label(&self) -> String {
        match &self.phase {
            Some(phase) => format!("{} ({phase})", self.name),
            None => self.name.clone(),
        }
    }

    /// `≤ 2.00 s`, `≥ 20.0 payments/s`.
    pub fn limit_text(&self) -> String {
        let op = if self.bound == "min" { "≥" } else { "≤" };
        format!("{op} {}", self.format(self.limit))
    }

    pub fn actual_text(&self) -> String {
        self.actual
            .map_or_else(|| "nothing measured".to_string(), |v| self.format(v))
    }
}

/// Checks every threshold against the median of each figure across a point's repeats
/// (`repeat: { thresholds: median }`): TPS, each latency percentile, and the failure
/// rate of the median counts of successes and failures.
pub fn evaluate_on_median(
    thresholds: &[Threshold],
    repeats: &[super::sweep::model::RepeatFigures],
) -> Vec<ThresholdResult> {
    use super::stats::median;
    let m = |f: fn(&super::sweep::model::RepeatFigures) -> f64| {
        median(&repeats.iter().map(f).collect::<Vec<_>>())
    };
    let latency = Percentiles {
        count: m(|r| r.ok as f64).round() as u64,
        p50_us: m(|r| r.p50_us as f64).round() as u64,
        p90_us: m(|r| r.p90_us as f64).round() as u64,
        p99_us: m(|r| r.p99_us as f64).round() as u64,
        p999_us: m(|r| r.p99_us as f64).round() as u64,
        max_us: m(|r| r.max_us as f64).round() as u64,
        mean_us: m(|r| r.p50_us as f64),
    };
    let figures = |_: &Threshold| {
        (!repeats.is_empty()).then(|| Figures {
            ok: latency.count,
            failed: m(|r| r.failed as f64).round() as u64,
            tps: m(|r| r.tps_avg),
            latency: &latency,
            outside_load_pct: median_of(repeats.iter().map(|r| r.outside_load_pct)),
            steal_pct: median_of(repeats.iter().map(|r| r.steal_pct)),
            // Not a median: a payment lost in any repeat is lost.
            mismatches: repeats.iter().map(|r| r.mismatches).sum(),
        })
    };
    thresholds
        .iter()
        .map(|t| check_figures(t, figures(t)))
        .collect()
}

/// The median of figures every repeat has; none when one lacks it.
fn median_of(figures: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let all: Option<Vec<f64>> = figures.collect();
    all.filter(|v| !v.is_empty())
        .map(|v| super::stats::median(&v))
}

/// Checks every threshold against `results`, in the order given.
pub fn evaluate(thresholds: &[Threshold], results: &Summary) -> Vec<ThresholdResult> {
    thresholds.iter().map(|t| check(t, results)).collect()
}

/// Checks every per-phase threshold against that phase's figures in `results`. A
/// phase the run never reached (stopped early) has nothing measured: it fails.
pub fn evaluate_phases(thresholds: &[PhaseThreshold], results: &Summary) -> Vec<ThresholdResult> {
    thresholds
        .iter()
        .map(|t| {
            let name = match t.phase {
                PhaseKind::WarmUp => "warm-up",
                PhaseKind::Ramp => "ramp",
                PhaseKind::Hold => "hold",
            };
            let figures = results
                .phases
                .iter()
                .find(|p| p.phase.as_str() == name)
                .map(|p| Figures {
                    ok: p.ok,
                    failed: p.failed,
                    tps: p.tps_avg,
                    latency: &p.latency,
                    outside_load_pct: results.machine.as_ref().map(|m| m.outside_load_pct),
                    steal_pct: results.machine.as_ref().map(|m| m.steal_pct),
                    mismatches: results.mismatches,
                });
            let mut result = check_figures(&t.threshold, figures);
            result.phase = Some(name.to_string());
            result
        })
        .collect()
}

/// True when every threshold passed (also when there are none).
pub fn all_passed(results: &[ThresholdResult]) -> bool {
    results.iter().all(|r| r.passed)
}

/// What a threshold is checked against: the whole run's figures or one phase's.
struct Figures<'a> {
    ok: u64,
    failed: u64,
    tps: f64,
    latency: &'a Percentiles,
    /// The host's load over the whole run (a phase has none of its own): outside
    /// load (percent of one core) and steal (percent), where the host was sampled.
    outside_load_pct: Option<f64>,
    steal_pct: Option<f64>,
    /// Disagreements with the nodes' ledgers over the whole run, where reconciled.
    mismatches: Option<u64>,
}

fn check(threshold: &Threshold, r: &Summary) -> ThresholdResult {
    check_figures(
        threshold,
        Some(Figures {
            ok: r.ok,
            failed: r.failed,
            tps: r.tps_avg,
            latency: &r.latency,
            outside_load_pct: r.machine.as_ref().map(|m| m.outside_load_pct),
            steal_pct: r.machine.as_ref().map(|m| m.steal_pct),
            mismatches: r.mismatches,
        }),
    )
}

/// `None`: nothing to check against (a phase never reached); the threshold fails.
fn check_figures(threshold: &Threshold, figures: Option<Figures>) -> ThresholdResult {
    let (unit, bound, limit, actual) = match *threshold {
        Threshold::Latency { stat, max } => {
            let l = figures.as_ref().map(|f| f.latency);
            let actual = figures
                .as_ref()
                .filter(|f| f.ok > 0)
                .zip(l)
                .map(|(_, l)| match stat {
                    LatencyStat::P50 => l.p50_us,
                    LatencyStat::P90 => l.p90_us,
                    LatencyStat::P99 => l.p99_us,
                    LatencyStat::Max => l.max_us,
                } as f64);
            ("us", "max", max.as_secs_f64() * 1e6, actual)
        }
        Threshold::MinTps(min) => ("tps", "min", min, figures.as_ref().map(|f| f.tps)),
        Threshold::MaxFailureRate(max) => {
            let actual = figures.as_ref().and_then(|f| {
                let attempted = f.ok + f.failed;
                (attempted > 0).then(|| f.failed as f64 / attempted as f64)
            });
            ("fraction", "max", max, actual)
        }
        Threshold::MaxOutsideLoad(max) => (
            "percent",
            "max",
            max,
            figures.as_ref().and_then(|f| f.outside_load_pct),
        ),
        Threshold::MaxSteal(max) => (
            "percent",
            "max",
            max,
            figures.as_ref().and_then(|f| f.steal_pct),
        ),
        Threshold::MaxMismatches(max) => (
            "payments",
            "max",
            max as f64,
            figures
                .as_ref()
                .and_then(|f| f.mismatches)
                .map(|m| m as f64),
        ),
    };
    let passed = match (bound, actual) {
        (_, None) => false,
        ("min", Some(a)) => a >= limit,
        (_, Some(a)) => a <= limit,
    };
    ThresholdResult {
        name: threshold.name().to_string(),
        unit: unit.to_string(),
        bound: bound.to_string(),
        limit,
        actual,
        passed,
        phase: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Percentiles;
    use crate::metrics::process::ProcessStats;
    use std::time::Duration;

    fn results(ok: u64, failed: u64, tps: f64, p99_us: u64) -> Summary {
        Summary {
            started_unix_ms: 0,
            ended_unix_ms: 0,
            elapsed_s: 10.0,
            active_s: 10.0,
            paused_s: 0.0,
            ok,
            failed,
            warm_up_excluded: 0,
            indeterminate: 0,
            routes: Vec::new(),
            stream: None,
            parts: None,
            drain: None,
            attack: None,
            rebalance: None,
            mismatches: None,
            dropped: 0,
            tps_avg: tps,
            latency: Percentiles {
                count: ok,
                p50_us: p99_us / 4,
                p90_us: p99_us / 2,
                p99_us,
                p999_us: p99_us,
                max_us: p99_us * 2,
                mean_us: 0.0,
            },
            latency_spectrum: Vec::new(),
            phases: Vec::new(),
            failures_by_reason: Default::default(),
            series_resolution_s: 1,
            series: Vec::new(),
            events: Vec::new(),
            events_dropped: 0,
            tool_cpu_s: None,
            interval_log: None,
            payment_log: None,
            tool_process: ProcessStats::default(),
            machine: None,
        }
    }

    fn p99(max: Duration) -> Threshold {
        Threshold::Latency {
            stat: LatencyStat::P99,
            max,
        }
    }

    #[test]
    fn passing_and_failing_thresholds() {
        let r = results(990, 10, 25.0, 1_500_000);
        let out = evaluate(
            &[
                p99(Duration::from_secs(2)),
                Threshold::MinTps(30.0),
                Threshold::MaxFailureRate(0.02),
                Threshold::Latency {
                    stat: LatencyStat::Max,
                    max: Duration::from_secs(2),
                },
            ],
            &r,
        );
        let got: Vec<(&str, bool)> = out.iter().map(|t| (t.name.as_str(), t.passed)).collect();
        assert_eq!(
            got,
            [
                ("p99_latency", true),
                ("min_tps", false),
                ("max_failure_rate", true),
                ("max_latency", false),
            ]
        );
        assert_eq!(out[0].limit, 2_000_000.0);
        assert_eq!(out[0].actual, Some(1_500_000.0));
        assert_eq!(out[2].actual, Some(0.01));
        assert!(!all_passed(&out));
        assert!(all_passed(&out[..1]));
        assert!(all_passed(&[]));
    }

    #[test]
    fn a_value_equal_to_the_limit_passes() {
        let r = results(99, 1, 20.0, 2_000_000);
        let out = evaluate(
            &[
                p99(Duration::from_secs(2)),
                Threshold::MinTps(20.0),
                Threshold::MaxFailureRate(0.01),
            ],
            &r,
        );
        assert!(out.iter().all(|t| t.passed), "{out:#?}");
        let just_over = evaluate(&[p99(Duration::from_micros(1_999_999))], &r);
        assert!(!just_over[0].passed);
    }

    #[test]
    fn an_empty_run_fails_every_threshold_it_cannot_measure() {
        let r = results(0, 0, 0.0, 0);
        let out = evaluate(
            &[
                p99(Duration::from_secs(2)),
                Threshold::MinTps(1.0),
                Threshold::MaxFailureRate(0.5),
                Threshold::MinTps(0.0),
            ],
            &r,
        );
        let passed: Vec<bool> = out.iter().map(|t| t.passed).collect();
        assert_eq!(passed, [false, false, false, true]);
        assert_eq!(out[0].actual, None);
        assert_eq!(out[0].actual_text(), "nothing measured");
        assert_eq!(out[2].actual, None);
    }

    fn phase(
        stage: crate::metrics::Stage,
        ok: u64,
        failed: u64,
        tps: f64,
        p99_us: u64,
    ) -> crate::metrics::PhaseSummary {
        crate::metrics::PhaseSummary {
            phase: stage,
            active_s: 10.0,
            ok,
            failed,
            tps_avg: tps,
            latency: Percentiles {
                count: ok,
                p99_us,
                max_us: p99_us,
                ..Percentiles::default()
            },
        }
    }

    #[test]
    fn phase_thresholds_use_that_phases_figures() {
        use crate::metrics::Stage;
        let mut r = results(1000, 10, 30.0, 900_000);
        r.phases = vec![
            phase(Stage::Ramp, 300, 10, 15.0, 3_000_000),
            phase(Stage::Hold, 700, 0, 50.0, 500_000),
        ];
        let on = |phase, threshold| PhaseThreshold { phase, threshold };
        let out = evaluate_phases(
            &[
                on(PhaseKind::Hold, p99(Duration::from_secs(1))),
                on(PhaseKind::Ramp, p99(Duration::from_secs(1))),
                on(PhaseKind::Hold, Threshold::MinTps(40.0)),
                on(PhaseKind::Ramp, Threshold::MinTps(40.0)),
                on(PhaseKind::Ramp, Threshold::MaxFailureRate(0.01)),
                on(PhaseKind::Hold, Threshold::MaxFailureRate(0.0)),
            ],
            &r,
        );
        let got: Vec<(String, bool)> = out.iter().map(|t| (t.label(), t.passed)).collect();
        assert_eq!(
            got,
            [
                ("p99_latency (hold)".to_string(), true),
                ("p99_latency (ramp)".to_string(), false),
                ("min_tps (hold)".to_string(), true),
                ("min_tps (ramp)".to_string(), false),
                ("max_failure_rate (ramp)".to_string(), false),
                ("max_failure_rate (hold)".to_string(), true),
            ]
        );
        assert_eq!(out[0].actual, Some(500_000.0));
        assert_eq!(out[1].actual, Some(3_000_000.0));
        assert_eq!(out[3].actual, Some(15.0));
        assert_eq!(out[0].phase.as_deref(), Some("hold"));
        // The same threshold on the whole run passes: only the phase's figures count.
        assert!(evaluate(&[p99(Duration::from_secs(1))], &r)[0].passed);
    }

    #[test]
    fn a_phase_never_reached_fails_with_nothing_measured() {
        let r = results(100, 0, 30.0, 900_000);
        let out = evaluate_phases(
            &[PhaseThreshold {
                phase: PhaseKind::Hold,
                threshold: Threshold::MinTps(0.0),
            }],
            &r,
        );
        assert!(!out[0].passed);
        assert_eq!(out[0].actual_text(), "nothing measured");
        let json = serde_json::to_value(&out[0]).unwrap();
        assert_eq!(json["phase"], "hold");
        let whole = serde_json::to_value(&evaluate(&[Threshold::MinTps(1.0)], &r)[0]).unwrap();
        assert!(
            whole.get("phase").is_none(),
            "no phase key on whole-run thresholds"
        );
    }

    #[test]
    fn texts_use_the_units_of_the_threshold() {
        let r = results(99, 1, 20.0, 1_520_000);
        let out = evaluate(
            &[p99(Duration::from_secs(2)), Threshold::MaxFailureRate(0.01)],
            &r,
        );
        assert_eq!(out[0].limit_text(), "≤ 2.00 s");
        assert_eq!(out[0].actual_text(), "1.52 s");
        assert_eq!(out[1].limit_text(), "≤ 1.00%");
        let tps = evaluate(&[Threshold::MinTps(20.0)], &r);
        assert_eq!(tps[0].limit_text(), "≥ 20.0 payments/s");
    }
}
