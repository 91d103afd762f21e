//! Thresholds of the scenario checked against the results at the end of a run
//! (k6-style): any failed threshold fails the run (exit code 1).

use crate::metrics::Summary;
use crate::scenario::{LatencyStat, Threshold};
use serde::Serialize;

/// One threshold and how the run fared against it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThresholdResult {
    /// The key as written in the scenario, e.g. `p99_latency`.
    pub name: String,
    /// `us` (latencies), `tps` or `fraction` (failure rate, 0 to 1).
    pub unit: String,
    /// `max` (the actual value may not exceed the limit) or `min`.
    pub bound: String,
    pub limit: f64,
    /// `None` when the run gave nothing to measure (no successful payment for a
    /// latency, no payment at all for the failure rate): the threshold then fails.
    pub actual: Option<f64>,
    pub passed: bool,
}

impl ThresholdResult {
    fn format(&self, value: f64) -> String {
        match self.unit.as_str() {
            "us" => super::format::latency_us(value.round() as u64),
            "fraction" => super::format::percent(value),
            _ => format!("{value:.1} payments/s"),
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

/// Checks every threshold against `results`, in the order given.
pub fn evaluate(thresholds: &[Threshold], results: &Summary) -> Vec<ThresholdResult> {
    thresholds.iter().map(|t| check(t, results)).collect()
}

/// True when every threshold passed (also when there are none).
pub fn all_passed(results: &[ThresholdResult]) -> bool {
    results.iter().all(|r| r.passed)
}

fn check(threshold: &Threshold, r: &Summary) -> ThresholdResult {
    let (unit, bound, limit, actual) = match *threshold {
        Threshold::Latency { stat, max } => {
            let l = &r.latency;
            let value = match stat {
                LatencyStat::P50 => l.p50_us,
                LatencyStat::P90 => l.p90_us,
                LatencyStat::P99 => l.p99_us,
                LatencyStat::Max => l.max_us,
            };
            let actual = (r.ok > 0).then_some(value as f64);
            ("us", "max", max.as_secs_f64() * 1e6, actual)
        }
        Threshold::MinTps(min) => ("tps", "min", min, Some(r.tps_avg)),
        Threshold::MaxFailureRate(max) => {
            let attempted = r.ok + r.failed;
            let actual = (attempted > 0).then(|| r.failed as f64 / attempted as f64);
            ("fraction", "max", max, actual)
        }
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
            failures_by_reason: Default::default(),
            series_resolution_s: 1,
            series: Vec::new(),
            events: Vec::new(),
            events_dropped: 0,
            tool_cpu_s: None,
            interval_log: None,
            tool_process: ProcessStats::default(),
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
