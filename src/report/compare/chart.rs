//! The comparison's overlaid charts: one line per run, drawn with plotters' SVG
//! backend like the report's own charts (same size, thinning and moving average).

use super::input::Point;
use crate::report::charts::{Line, MOVING_AVERAGE_POINTS, Marks, draw, moving_average};
use anyhow::Result;
use plotters::style::RGBColor;

/// Run colours in input order (a colour-blind-safe palette); runs past the last
/// reuse them from the start.
pub const RUN_COLORS: [RGBColor; 6] = [
    RGBColor(0x1f, 0x5f, 0xa8),
    RGBColor(0xd9, 0x5f, 0x02),
    RGBColor(0x1b, 0x9e, 0x77),
    RGBColor(0x75, 0x70, 0xb3),
    RGBColor(0xe7, 0x29, 0x8a),
    RGBColor(0x66, 0x66, 0x66),
];

/// One run's line.
pub struct RunLine<'a> {
    pub label: &'a str,
    pub series: &'a [Point],
}

/// A rendered chart.
pub struct Chart {
    pub id: &'static str,
    pub title: &'static str,
    pub caption: &'static str,
    pub svg: String,
}

pub fn render_all(runs: &[RunLine]) -> Result<Vec<Chart>> {
    Ok(vec![
        Chart {
            id: "tps-over-time",
            title: "TPS over time",
            caption: "Moving average (10 points) of successful payments per active second, one line per run. Warm-up is left out.",
            svg: tps_over_time(runs)?,
        },
        Chart {
            id: "latency-p99-over-time",
            title: "Latency p99 over time",
            caption: "p99 latency of the successful payments of each interval, milliseconds, one line per run. Warm-up and intervals without a success are left out.",
            svg: p99_over_time(runs)?,
        },
    ])
}

pub fn tps_over_time(runs: &[RunLine]) -> Result<String> {
    let lines = runs
        .iter()
        .map(|run| {
            let timed: Vec<&Point> = run.series.iter().filter(|p| !p.warm_up).collect();
            let tps: Vec<f64> = timed.iter().map(|p| p.tps).collect();
            let points = moving_average(&tps, MOVING_AVERAGE_POINTS)
                .into_iter()
                .zip(&timed)
                .map(|(v, p)| (p.at_s, v))
                .collect();
            (run.label, points)
        })
        .collect::<Vec<_>>();
    overlay(
        "seconds since start",
        "payments / s",
        &lines,
        "no payments recorded",
    )
}

pub fn p99_over_time(runs: &[RunLine]) -> Result<String> {
    let lines = runs
        .iter()
        .map(|run| {
            let points = run
                .series
                .iter()
                .filter(|p| !p.warm_up && p.ok > 0)
                .map(|p| (p.at_s, p.p99_us as f64 / 1000.0))
                .collect();
            (run.label, points)
        })
        .collect::<Vec<_>>();
    overlay(
        "seconds since start",
        "latency p99, ms",
        &lines,
        "no successful payments recorded",
    )
}

/// Draws one line per run with the report's chart drawing (same axes, legend, size).
fn overlay(
    x_desc: &str,
    y_desc: &str,
    lines: &[(&str, Vec<(f64, f64)>)],
    empty_note: &str,
) -> Result<String> {
    let lines: Vec<Line> = lines
        .iter()
        .enumerate()
        .map(|(i, (label, points))| Line {
            label,
            color: RUN_COLORS[i % RUN_COLORS.len()],
            width: 2,
            points: points.clone(),
        })
        .collect();
    draw(x_desc, y_desc, &lines, None, &Marks::default(), empty_note)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(at_s: f64, tps: f64, p99_us: u64, warm_up: bool) -> Point {
        Point {
            at_s,
            tps,
            ok: tps as u64,
            p99_us,
            warm_up,
        }
    }

    #[test]
    fn draws_one_legend_entry_and_colour_per_run() {
        let a = [
            point(1.0, 10.0, 5_000, true),
            point(2.0, 50.0, 20_000, false),
        ];
        let b = [point(1.0, 60.0, 30_000, false), point(2.0, 0.0, 0, false)];
        let runs = [
            RunLine {
                label: "run <a>",
                series: &a,
            },
            RunLine {
                label: "run b",
                series: &b,
            },
        ];
        for svg in [tps_over_time(&runs).unwrap(), p99_over_time(&runs).unwrap()] {
            assert!(svg.contains("run &lt;a&gt;") && !svg.contains("run <a>"));
            assert!(svg.contains("\nrun b\n"), "legend entry of run b");
            for color in &RUN_COLORS[..2] {
                let hex = format!("#{:02X}{:02X}{:02X}", color.0, color.1, color.2);
                assert!(svg.contains(&hex), "{hex} missing");
            }
        }
    }

    #[test]
    fn empty_runs_still_draw_with_a_note() {
        let svg = p99_over_time(&[RunLine {
            label: "empty",
            series: &[],
        }])
        .unwrap();
        assert!(svg.contains("no successful payments recorded"));
    }
}
