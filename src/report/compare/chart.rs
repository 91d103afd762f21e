//! The comparison's overlaid charts: one line per run, drawn with plotters' SVG
//! backend like the report's own charts (same size, thinning and moving average).

use super::input::Point;
use crate::report::charts::{HEIGHT, MOVING_AVERAGE_POINTS, WIDTH, moving_average, thin};
use anyhow::{Result, anyhow};
use plotters::prelude::*;

const FONT: &str = "sans-serif";

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

fn err(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("drawing a comparison chart: {e}")
}

fn axis_top(max: f64) -> f64 {
    if max.is_finite() && max > 0.0 {
        max * 1.1
    } else {
        1.0
    }
}

fn tick(value: f64, top: f64) -> String {
    if top >= 10.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

fn overlay(
    x_desc: &str,
    y_desc: &str,
    lines: &[(&str, Vec<(f64, f64)>)],
    empty_note: &str,
) -> Result<String> {
    let all = || lines.iter().flat_map(|(_, points)| points.iter());
    let x_top = axis_top(all().map(|p| p.0).fold(0.0, f64::max));
    let y_top = axis_top(all().map(|p| p.1).fold(0.0, f64::max));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..x_top, 0f64..y_top)
            .map_err(err)?;
        let x_label = |x: &f64| tick(*x, x_top);
        let y_label = |y: &f64| tick(*y, y_top);
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .x_label_formatter(&x_label)
            .y_label_formatter(&y_label)
            .x_desc(x_desc)
            .y_desc(y_desc)
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14))
            .draw()
            .map_err(err)?;
        let mut any = false;
        for (i, (label, points)) in lines.iter().enumerate() {
            let color = RUN_COLORS[i % RUN_COLORS.len()];
            // Every run gets a legend entry, even one with nothing to draw.
            any |= !points.is_empty();
            chart
                .draw_series(LineSeries::new(thin(points.clone()), color.stroke_width(2)))
                .map_err(err)?
                .label(*label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(3))
                });
        }
        if !any {
            root.draw(&Text::new(
                empty_note.to_string(),
                (WIDTH as i32 / 2 - 80, HEIGHT as i32 / 2),
                (FONT, 16),
            ))
            .map_err(err)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .label_font((FONT, 13))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
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
