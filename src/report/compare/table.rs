//! The comparison table: one row per metric, one value per run, and for each run
//! after the first its change against the first, judged by the metric's direction
//! and flagged beyond the noise threshold.

use super::input::Results;
use crate::report::format;

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

/// A change judged against the noise threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Within the noise threshold (or no change at all).
    Noise,
    Better,
    Worse,
}

/// How a run's value differs from the first run's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    /// value - baseline, in the metric's unit.
    pub delta: f64,
    /// The change in percent of the baseline; none when the baseline is zero and the
    /// value is not (no percentage describes growth from nothing).
    pub pct: Option<f64>,
    pub verdict: Verdict,
}

/// The change from `base` to `value`. It is flagged (better or worse, by `better`)
/// when its size exceeds `noise_pct` percent of the baseline; a change of exactly
/// `noise_pct` is noise. From a zero baseline, any change is flagged.
pub fn change(base: f64, value: f64, better: Better, noise_pct: f64) -> Change {
    let delta = value - base;
    let pct = if base == 0.0 {
        (delta == 0.0).then_some(0.0)
    } else {
        Some(delta / base.abs() * 100.0)
    };
    let beyond_noise = match pct {
        Some(p) => p.abs() > noise_pct,
        None => true,
    };
    let verdict = if !beyond_noise || delta == 0.0 {
        Verdict::Noise
    } else if (delta > 0.0) == (better == Better::Higher) {
        Verdict::Better
    } else {
        Verdict::Worse
    };
    Change {
        delta,
        pct,
        verdict,
    }
}

/// How a metric's values and deltas are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Tps,
    Micros,
    Count,
    Fraction,
    CpuMicros,
}

impl Unit {
    pub fn value(self, v: f64) -> String {
        match self {
            Unit::Tps => format::tps(v),
            Unit::Micros => format::latency_us(v.round().max(0.0) as u64),
            Unit::Count => format!("{v:.0}"),
            Unit::Fraction => format::percent(v),
            Unit::CpuMicros => format!("{v:.1} µs"),
        }
    }

    pub fn delta(self, d: f64) -> String {
        let sign = if d < 0.0 { "-" } else { "+" };
        let size = d.abs();
        let text = match self {
            // Percentage points, so the delta is not read as a % change.
            Unit::Fraction => format!("{:.2} pp", size * 100.0),
            other => other.value(size),
        };
        format!("{sign}{text}")
    }
}

/// One metric as the table shows it.
#[derive(Debug, Clone, Copy)]
pub struct Metric {
    pub name: &'static str,
    pub unit: Unit,
    pub better: Better,
    pub get: fn(&Results) -> Option<f64>,
}

/// The metrics compared, in table order.
pub const METRICS: [Metric; 10] = [
    Metric {
        name: "TPS (avg)",
        unit: Unit::Tps,
        better: Better::Higher,
        get: |r| Some(r.tps_avg),
    },
    Metric {
        name: "latency p50",
        unit: Unit::Micros,
        better: Better::Lower,
        get: |r| Some(r.latency.p50_us as f64),
    },
    Metric {
        name: "latency p90",
        unit: Unit::Micros,
        better: Better::Lower,
        get: |r| Some(r.latency.p90_us as f64),
    },
    Metric {
        name: "latency p99",
        unit: Unit::Micros,
        better: Better::Lower,
        get: |r| Some(r.latency.p99_us as f64),
    },
    Metric {
        name: "latency p99.9",
        unit: Unit::Micros,
        better: Better::Lower,
        get: |r| Some(r.latency.p999_us as f64),
    },
    Metric {
        name: "latency max",
        unit: Unit::Micros,
        better: Better::Lower,
        get: |r| Some(r.latency.max_us as f64),
    },
    Metric {
        name: "successful payments",
        unit: Unit::Count,
        better: Better::Higher,
        get: |r| Some(r.ok as f64),
    },
    Metric {
        name: "failed payments",
        unit: Unit::Count,
        better: Better::Lower,
        get: |r| Some(r.failed as f64),
    },
    Metric {
        name: "failure rate",
        unit: Unit::Fraction,
        better: Better::Lower,
        get: Results::failure_rate,
    },
    Metric {
        name: "tool CPU / payment",
        unit: Unit::CpuMicros,
        better: Better::Lower,
        get: Results::tool_cpu_per_payment_us,
    },
];

/// A cell comparing a run with the first one.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeCell {
    pub text: String,
    /// None when either value is missing.
    pub verdict: Option<Verdict>,
}

/// One row: the metric, each run's value, and each later run's change.
#[derive(Debug, Clone)]
pub struct Row {
    pub metric: &'static str,
    pub values: Vec<String>,
    pub changes: Vec<ChangeCell>,
}

/// Text for a missing value: a figure the run did not measure (tool CPU) or that has
/// nothing to measure (failure rate without payments).
pub const MISSING: &str = "n/a";

pub fn rows(runs: &[&Results], noise_pct: f64) -> Vec<Row> {
    METRICS
        .iter()
        .map(|m| {
            let values: Vec<Option<f64>> = runs.iter().map(|r| (m.get)(r)).collect();
            let base = values.first().copied().flatten();
            Row {
                metric: m.name,
                values: values
                    .iter()
                    .map(|v| v.map_or_else(|| MISSING.into(), |v| m.unit.value(v)))
                    .collect(),
                changes: values
                    .iter()
                    .skip(1)
                    .map(|v| match (base, *v) {
                        (Some(b), Some(v)) => {
                            let c = change(b, v, m.better, noise_pct);
                            ChangeCell {
                                text: change_text(m.unit, &c),
                                verdict: Some(c.verdict),
                            }
                        }
                        _ => ChangeCell {
                            text: MISSING.into(),
                            verdict: None,
                        },
                    })
                    .collect(),
            }
        })
        .collect()
}

/// `+12.5 ms (+8.3%) ▲ worse`: the delta, the % change and, beyond the noise
/// threshold, the direction of the value and whether that is better or worse.
pub fn change_text(unit: Unit, c: &Change) -> String {
    let pct = match c.pct {
        Some(p) => format!("{}{:.1}%", if p < 0.0 { "-" } else { "+" }, p.abs()),
        None => "from 0".into(),
    };
    let arrow = if c.delta < 0.0 { "▼" } else { "▲" };
    let flag = match c.verdict {
        Verdict::Noise => String::new(),
        Verdict::Better => format!(" {arrow} better"),
        Verdict::Worse => format!(" {arrow} worse"),
    };
    format!("{} ({pct}){flag}", unit.delta(c.delta))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direction_decides_better_or_worse() {
        assert_eq!(
            change(100.0, 120.0, Better::Higher, 5.0).verdict,
            Verdict::Better
        );
        assert_eq!(
            change(100.0, 80.0, Better::Higher, 5.0).verdict,
            Verdict::Worse
        );
        assert_eq!(
            change(100.0, 120.0, Better::Lower, 5.0).verdict,
            Verdict::Worse
        );
        assert_eq!(
            change(100.0, 80.0, Better::Lower, 5.0).verdict,
            Verdict::Better
        );
        let c = change(200.0, 150.0, Better::Lower, 5.0);
        assert_eq!((c.delta, c.pct), (-50.0, Some(-25.0)));
    }

    #[test]
    fn exactly_the_noise_threshold_is_not_flagged() {
        assert_eq!(
            change(100.0, 105.0, Better::Higher, 5.0).verdict,
            Verdict::Noise
        );
        assert_eq!(
            change(100.0, 95.0, Better::Lower, 5.0).verdict,
            Verdict::Noise
        );
        assert_eq!(
            change(100.0, 105.1, Better::Higher, 5.0).verdict,
            Verdict::Better
        );
        assert_eq!(
            change(100.0, 94.9, Better::Higher, 5.0).verdict,
            Verdict::Worse
        );
        // A zero threshold flags any change, but never an unchanged value.
        assert_eq!(
            change(100.0, 100.1, Better::Lower, 0.0).verdict,
            Verdict::Worse
        );
        assert_eq!(
            change(100.0, 100.0, Better::Lower, 0.0).verdict,
            Verdict::Noise
        );
    }

    #[test]
    fn a_zero_baseline_has_no_percentage_but_is_flagged() {
        let c = change(0.0, 3.0, Better::Lower, 5.0);
        assert_eq!((c.delta, c.pct, c.verdict), (3.0, None, Verdict::Worse));
        assert_eq!(
            change(0.0, 3.0, Better::Higher, 50.0).verdict,
            Verdict::Better
        );
        let same = change(0.0, 0.0, Better::Lower, 5.0);
        assert_eq!((same.pct, same.verdict), (Some(0.0), Verdict::Noise));
        assert_eq!(change_text(Unit::Count, &c), "+3 (from 0) ▲ worse");
    }

    #[test]
    fn change_text_shows_delta_percent_and_flag() {
        let c = change(20_000.0, 32_500.0, Better::Lower, 5.0);
        assert_eq!(change_text(Unit::Micros, &c), "+12.5 ms (+62.5%) ▲ worse");
        let c = change(0.02, 0.01, Better::Lower, 5.0);
        assert_eq!(
            change_text(Unit::Fraction, &c),
            "-1.00 pp (-50.0%) ▼ better"
        );
        let c = change(100.0, 102.0, Better::Higher, 5.0);
        assert_eq!(change_text(Unit::Tps, &c), "+2.0 (+2.0%)");
    }
}
