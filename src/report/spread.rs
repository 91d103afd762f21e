//! The spread across repeats (`repeat:`): for each sweep point run N times, every
//! repeat's figures, their min / median / max / standard deviation, and the repeats
//! that stand out (see [`super::stats`]).

use super::format;
use super::stats::{Stats, outliers};
use super::sweep::model::{PointReport, PointStatus, RepeatFigures, Spread, SweepReport};

/// The point's values but `repeat`.
pub fn group_of(p: &PointReport) -> String {
    p.label_without(&["repeat"]).unwrap_or_else(|| "all".into())
}

/// The spread of every repeated point, in the order points first appear.
pub fn spreads(points: &[PointReport]) -> Vec<Spread> {
    let mut groups: Vec<String> = Vec::new();
    for p in points.iter().filter(|p| p.values.contains_key("repeat")) {
        let g = group_of(p);
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    groups
        .into_iter()
        .map(|group| {
            let mut repeats: Vec<RepeatFigures> = (points.iter())
                .filter(|p| group_of(p) == group && p.values.contains_key("repeat"))
                .filter(|p| matches!(p.status, PointStatus::Done | PointStatus::Partial))
                .filter_map(|p| {
                    let r = p.results.as_ref()?;
                    Some(RepeatFigures {
                        label: p.label.clone(),
                        repeat: p.values["repeat"].as_u64().unwrap_or(0) as u32,
                        tps_avg: r.tps_avg,
                        p50_us: r.latency.p50_us,
                        p90_us: r.latency.p90_us,
                        p99_us: r.latency.p99_us,
                        max_us: r.latency.max_us,
                        ok: r.ok,
                        failed: r.failed,
                        outlier: false,
                        outside_load_pct: r.machine.as_ref().map(|m| m.outside_load_pct),
                        steal_pct: r.machine.as_ref().map(|m| m.steal_pct),
                        disturbed: r.machine.as_ref().is_some_and(|m| m.disturbed),
                        mismatches: r.mismatches,
                    })
                })
                .collect();
            let tps: Vec<f64> = repeats.iter().map(|r| r.tps_avg).collect();
            let us = |f: fn(&RepeatFigures) -> u64| -> Vec<f64> {
                repeats.iter().map(|r| f(r) as f64).collect()
            };
            let (p50, p90, p99) = (us(|r| r.p50_us), us(|r| r.p90_us), us(|r| r.p99_us));
            let outside: Vec<f64> = repeats.iter().filter_map(|r| r.outside_load_pct).collect();
            let tps_avg = Stats::of(&tps);
            for ((r, a), b) in repeats.iter_mut().zip(outliers(&tps)).zip(outliers(&p99)) {
                r.outlier = a || b;
            }
            Spread {
                group,
                tps_cv_pct: tps_avg.and_then(|s| s.cv_pct()),
                tps_avg,
                p50_us: Stats::of(&p50),
                p90_us: Stats::of(&p90),
                p99_us: Stats::of(&p99),
                outside_load_pct: Stats::of(&outside),
                disturbed: repeats.iter().filter(|r| r.disturbed).count(),
                repeats,
                thresholds_passed: None,
            }
        })
        .collect()
}

/// `36.1 (34.0 – 37.2, sd 1.2)`.
fn tps_cell(s: &Option<Stats>) -> String {
    match s {
        Some(s) => format!(
            "{} ({} – {}, sd {})",
            format::tps(s.median),
            format::tps(s.min),
            format::tps(s.max),
            format::tps(s.stddev)
        ),
        None => "-".into(),
    }
}

fn us_cell(s: &Option<Stats>) -> String {
    let us = |v: f64| format::latency_us(v.round().max(0.0) as u64);
    match s {
        Some(s) => format!(
            "{} ({} – {}, sd {})",
            us(s.median),
            us(s.min),
            us(s.max),
            us(s.stddev)
        ),
        None => "-".into(),
    }
}

pub const COLUMNS: [&str; 9] = [
    "point",
    "repeats",
    "TPS median (min – max, sd)",
    "TPS CV",
    "p50 median (min – max, sd)",
    "p99 median (min – max, sd)",
    "outside load median (max)",
    "outliers",
    "thresholds on the median",
];

/// `3.1 %`, or `-` under two repeats.
fn cv_cell(cv: Option<f64>) -> String {
    cv.map_or_else(|| "-".into(), |v| format!("{v:.1} %"))
}

/// `2 % (4 %) of a core`, then `; 1 of 5 disturbed` when any was; `not sampled`
/// where no repeat's host was.
fn outside_cell(s: &Spread) -> String {
    let Some(o) = s.outside_load_pct else {
        return "not sampled".into();
    };
    let mut cell = format!("{:.0} % ({:.0} %) of a core", o.median, o.max);
    if s.disturbed > 0 {
        cell.push_str(&format!(
            "; {} of {} disturbed",
            s.disturbed,
            s.repeats.len()
        ));
    }
    cell
}

pub fn row(s: &Spread) -> Vec<String> {
    let out: Vec<String> = (s.repeats.iter())
        .filter(|r| r.outlier)
        .map(|r| format!("repeat {}", r.repeat))
        .collect();
    vec![
        s.group.clone(),
        s.repeats.len().to_string(),
        tps_cell(&s.tps_avg),
        cv_cell(s.tps_cv_pct),
        us_cell(&s.p50_us),
        us_cell(&s.p99_us),
        outside_cell(s),
        if out.is_empty() {
            "none".into()
        } else {
            out.join(", ")
        },
        match s.thresholds_passed {
            Some(true) => "pass".into(),
            Some(false) => "FAIL".into(),
            None => "-".into(),
        },
    ]
}

pub fn markdown(report: &SweepReport) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    if report.spread.is_empty() {
        return out;
    }
    let _ = writeln!(out, "\n### Spread across repeats\n");
    let _ = writeln!(out, "| {} |", COLUMNS.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(COLUMNS.len()));
    for s in &report.spread {
        let _ = writeln!(out, "| {} |", row(s).join(" | "));
    }
    let _ = writeln!(
        out,
        "\nsd: sample standard deviation; CV: sd over the mean, in percent. Outside \
         load: CPU the host spent outside the run, per repeat. An outlier's TPS or p99 has a modified z-score \
         (0.6745 × distance to the median / median absolute deviation) above 3.5."
    );
    out
}

#[cfg(test)]
mod tests;
