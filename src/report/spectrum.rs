//! The latency percentile spectrum chart, drawn as HdrHistogram's plotter draws it:
//! latency against percentile, the percentile axis log-scaled in 1 / (1 − p) so each
//! "nine" (90%, 99%, 99.9%, …) gets the same width and the tail is as readable as
//! the median.

use super::charts::{FONT, HEIGHT, WIDTH};
use crate::metrics::SpectrumPoint;
use anyhow::{Result, anyhow};
use plotters::prelude::*;

/// The spectrum line's colour; tests look the series up by it.
pub const SPECTRUM_COLOR: RGBColor = RGBColor(0x6a, 0x1b, 0x9a);
/// The axis always reaches 99.999% (five nines); very large runs get up to seven.
const MIN_NINES: i32 = 5;
const MAX_NINES: i32 = 7;

fn err(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("drawing the latency spectrum: {e}")
}

/// The label of the tick `nines` decades along the axis: 0%, 90%, 99%, 99.9%, ...
pub fn percentile_label(nines: i32) -> String {
    if nines <= 0 {
        return "0%".into();
    }
    let decimals = (nines - 2).max(0) as usize;
    format!("{:.*}%", decimals, 100.0 - 100.0 / 10f64.powi(nines))
}

/// Where percentile `p` (0 to 100) lies on the axis: 1 / (1 − p/100), clamped to
/// `x_top` (100% itself would be infinitely far).
fn x_of(percentile: f64, x_top: f64) -> f64 {
    let rest = 1.0 - percentile / 100.0;
    if rest <= 1.0 / x_top {
        x_top
    } else {
        1.0 / rest
    }
}

/// How many nines the axis shows for a run of `count` payments.
fn nines_for(count: u64) -> i32 {
    let needed = (count.max(1) as f64).log10().ceil() as i32;
    needed.clamp(MIN_NINES, MAX_NINES)
}

/// The spectrum as an SVG chart; with no points, an empty chart with a note.
pub fn latency_spectrum(points: &[SpectrumPoint]) -> Result<String> {
    let count = points.last().map_or(0, |p| p.total_count);
    let nines = nines_for(count);
    let x_top = 10f64.powi(nines);
    let line: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (x_of(p.percentile, x_top), p.latency_us as f64 / 1000.0))
        .collect();
    let y_max = line.iter().map(|p| p.1).fold(0.0, f64::max);
    let y_top = if y_max > 0.0 { y_max * 1.1 } else { 1.0 };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let ticks: Vec<f64> = (0..=nines).map(|k| 10f64.powi(k)).collect();
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            // Room for the last tick label, centred on the right edge.
            .margin_right(36)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(
                (1f64..x_top).log_scale().with_key_points(ticks),
                0f64..y_top,
            )
            .map_err(err)?;
        let x_label = |x: &f64| percentile_label(x.log10().round() as i32);
        let y_label = |y: &f64| {
            if y_top >= 10.0 {
                format!("{y:.0}")
            } else {
                format!("{y:.1}")
            }
        };
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .bold_line_style(BLACK.mix(0.12))
            .x_label_formatter(&x_label)
            .y_label_formatter(&y_label)
            .x_desc("percentile of successful payments")
            .y_desc("latency, ms")
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14))
            .draw()
            .map_err(err)?;
        if line.is_empty() {
            root.draw(&Text::new(
                "no successful payments recorded".to_string(),
                (WIDTH as i32 / 2 - 110, HEIGHT as i32 / 2),
                (FONT, 16),
            ))
            .map_err(err)?;
        } else {
            chart
                .draw_series(LineSeries::new(line, SPECTRUM_COLOR.stroke_width(2)))
                .map_err(err)?
                .label("latency at percentile")
                .legend(|(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], SPECTRUM_COLOR.stroke_width(3))
                });
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .label_font((FONT, 13))
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK.mix(0.3))
                .draw()
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(percentile: f64, latency_us: u64, total_count: u64) -> SpectrumPoint {
        SpectrumPoint {
            percentile,
            latency_us,
            total_count,
        }
    }

    #[test]
    fn labels_count_the_nines() {
        let labels: Vec<String> = (0..=6).map(percentile_label).collect();
        assert_eq!(
            labels,
            ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"]
        );
    }

    #[test]
    fn the_axis_is_one_over_the_rest() {
        assert_eq!(x_of(0.0, 1e5), 1.0);
        assert!((x_of(90.0, 1e5) - 10.0).abs() < 1e-9);
        assert!((x_of(99.9, 1e5) - 1000.0).abs() < 1e-6);
        assert_eq!(x_of(100.0, 1e5), 1e5, "100% sits at the right edge");
        assert_eq!(nines_for(10), 5);
        assert_eq!(nines_for(2_000_000), 7);
        assert_eq!(nines_for(10_000_000_000), 7);
    }

    #[test]
    fn the_chart_has_the_series_and_every_tick_label() {
        let points = [
            point(0.0, 1_000, 1),
            point(50.0, 20_000, 500),
            point(90.0, 40_000, 900),
            point(99.0, 80_000, 990),
            point(100.0, 250_000, 1000),
        ];
        let svg = latency_spectrum(&points).unwrap();
        assert!(svg.starts_with("<svg"));
        let color = format!(
            "#{:02X}{:02X}{:02X}",
            SPECTRUM_COLOR.0, SPECTRUM_COLOR.1, SPECTRUM_COLOR.2
        );
        let series: Vec<&str> = svg
            .split("<polyline")
            .skip(1)
            .filter(|p| p.contains(&format!("stroke=\"{color}\"")))
            .collect();
        assert_eq!(series.len(), 2, "the line and its legend entry");
        let vertices = series
            .iter()
            .map(|p| {
                p.split("points=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap()
            })
            .map(|pts| pts.split_whitespace().count())
            .max();
        assert_eq!(vertices, Some(5));
        for label in ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%"] {
            assert!(
                svg.contains(&format!(">\n{label}\n<")),
                "tick {label} missing"
            );
        }
        assert!(svg.contains("latency at percentile"));
        assert!(svg.contains("percentile of successful payments"));
    }

    #[test]
    fn no_points_give_a_note() {
        let svg = latency_spectrum(&[]).unwrap();
        assert!(svg.contains("no successful payments recorded"));
    }
}
