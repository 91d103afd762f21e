//! The sweep report's charts, drawn with the helpers of `charts.rs`: TPS against the
//! swept parameter, and latency against TPS (Narwhal's latency-vs-throughput view,
//! where the knee of the curve is the capacity), with the p99 bound when one is set.

use super::charts::{
    Axes, Chart, FONT, P50_COLOR, P99_COLOR, axis_top, canvas, err, legend_line, tick,
};
use super::compare::chart::RUN_COLORS;
use super::sweep::model::{PointReport, PointStatus, SweepReport};
use anyhow::Result;
use plotters::prelude::*;

const BOUND_COLOR: RGBColor = RGBColor(0x7b, 0x3f, 0xa0);

/// One line of points: a value of the parameters that are not on the x axis.
struct Series<'a> {
    name: String,
    points: Vec<(f64, &'a PointReport)>,
}

/// The x axis of the TPS chart: the fastest-varying numeric parameter, one line per
/// combination of the others; with no numeric parameter, the points in run order.
fn series(report: &SweepReport) -> (String, bool, Vec<Series<'_>>) {
    let measured: Vec<&PointReport> = report
        .points
        .iter()
        .filter(|p| p.status != PointStatus::NotRun && p.results.is_some())
        .collect();
    let numeric = report.parameters.iter().rev().find(|name| {
        report.points.iter().all(|p| {
            p.values
                .get(*name)
                .is_some_and(serde_json::Value::is_number)
        })
    });
    let Some(x) = numeric else {
        let points = report
            .points
            .iter()
            .enumerate()
            .filter(|(_, p)| measured.iter().any(|m| std::ptr::eq(*m, *p)))
            .map(|(i, p)| ((i + 1) as f64, p))
            .collect();
        let one = Series {
            name: "TPS".into(),
            points,
        };
        return ("point".into(), false, vec![one]);
    };
    let mut out: Vec<Series> = Vec::new();
    for p in measured {
        let rest: Vec<String> = p
            .values
            .iter()
            .filter(|(k, _)| *k != x)
            .map(|(k, v)| format!("{k}={}", v.as_str().map_or(v.to_string(), str::to_string)))
            .collect();
        let name = if rest.is_empty() {
            "TPS".to_string()
        } else {
            rest.join(",")
        };
        let xv = p.values[x].as_f64().unwrap_or(0.0);
        match out.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push((xv, p)),
            None => out.push(Series {
                name,
                points: vec![(xv, p)],
            }),
        }
    }
    for s in &mut out {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    (x.clone(), true, out)
}

fn tps(p: &PointReport) -> f64 {
    p.results.as_ref().map_or(0.0, |r| r.tps_avg)
}

fn p99_ms(p: &PointReport) -> f64 {
    p.results
        .as_ref()
        .map_or(0.0, |r| r.latency.p99_us as f64 / 1000.0)
}

fn p50_ms(p: &PointReport) -> f64 {
    p.results
        .as_ref()
        .map_or(0.0, |r| r.latency.p50_us as f64 / 1000.0)
}

pub fn render_all(report: &SweepReport) -> Result<Vec<Chart>> {
    Ok(vec![
        Chart {
            file_name: "sweep-tps.svg",
            title: "TPS vs the swept parameter",
            caption: "Average TPS (successful payments per active second) of each point; one line per combination of the other swept parameters.",
            svg: tps_vs_parameter(report)?,
        },
        Chart {
            file_name: "sweep-latency-vs-tps.svg",
            title: "Latency vs throughput",
            caption: "p99 (solid) and p50 (dashed) latency against the TPS each point reached, points in sweep order: where latency climbs while TPS stops growing, the nodes are at capacity. Purple line: the p99 bound.",
            svg: latency_vs_tps(report)?,
        },
    ])
}

pub fn tps_vs_parameter(report: &SweepReport) -> Result<String> {
    let (x_name, numeric, lines) = series(report);
    let xs = lines.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let x_max = xs.clone().fold(0.0, f64::max);
    let x_min = if numeric { 0.0 } else { 0.5 };
    let y_max = lines
        .iter()
        .flat_map(|s| s.points.iter().map(|p| tps(p.1)))
        .fold(0.0, f64::max);
    let (x_top, y_top) = (
        if numeric {
            axis_top(x_max)
        } else {
            x_max + 0.5
        },
        axis_top(y_max),
    );
    let labels: Vec<String> = report.points.iter().map(|p| p.label.clone()).collect();
    let by_point = |x: &f64| {
        if (x.fract()).abs() < 1e-9 && *x >= 1.0 {
            labels.get(*x as usize - 1).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    let axes = Axes {
        x: x_min..x_top.max(x_min + 1.0),
        y: 0.0..y_top,
        x_desc: &x_name,
        y_desc: "payments / s (average)",
        x_label: (!numeric).then_some(&by_point as &dyn Fn(&f64) -> String),
        x_labels: (!numeric).then(|| labels.len().max(1)),
    };
    let empty = lines.iter().all(|l| l.points.is_empty());
    let legend = (lines.len() > 1).then_some(SeriesLabelPosition::UpperLeft);
    canvas(
        &axes,
        legend,
        empty.then_some("no point measured"),
        |chart| {
            for (i, line) in lines.iter().enumerate() {
                let color = RUN_COLORS[i % RUN_COLORS.len()];
                let pts: Vec<(f64, f64)> = line.points.iter().map(|(x, p)| (*x, tps(p))).collect();
                chart
                    .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                    .map_err(err)?
                    .label(line.name.as_str())
                    .legend(legend_line(color));
                chart
                    .draw_series(pts.iter().map(|p| Circle::new(*p, 4, color.filled())))
                    .map_err(err)?;
            }
            Ok(())
        },
    )
}

pub fn latency_vs_tps(report: &SweepReport) -> Result<String> {
    let (_, _, lines) = series(report);
    let all: Vec<&PointReport> = lines
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .collect();
    let x_max = all.iter().map(|p| tps(p)).fold(0.0, f64::max);
    let bound = report.p99_bound_ms;
    let y_max = all
        .iter()
        .map(|p| p99_ms(p))
        .chain(bound)
        .fold(0.0, f64::max);
    let (x_top, y_top) = (axis_top(x_max), axis_top(y_max));
    let axes = Axes {
        x: 0.0..x_top,
        y: 0.0..y_top,
        x_desc: "payments / s (average)",
        y_desc: "latency, ms",
        x_label: None,
        x_labels: None,
    };
    let empty = all.is_empty().then_some("no point measured");
    canvas(&axes, None, empty, |chart| {
        if let Some(b) = bound {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(0.0, b), (x_top, b)],
                    BOUND_COLOR.stroke_width(1),
                )))
                .map_err(err)?;
            let style = TextStyle::from((FONT, 12)).color(&BOUND_COLOR);
            chart
                .draw_series(std::iter::once(Text::new(
                    format!("p99 bound {}", tick(b, b.max(10.0))),
                    (x_top * 0.01, b + y_top * 0.06),
                    &style,
                )))
                .map_err(err)?;
        }
        let grey = BLACK.mix(0.7);
        let label_style = TextStyle::from((FONT, 11)).color(&grey);
        for line in &lines {
            // In sweep order: the parameter grows along the line.
            let p99: Vec<(f64, f64)> = line
                .points
                .iter()
                .map(|(_, p)| (tps(p), p99_ms(p)))
                .collect();
            let p50: Vec<(f64, f64)> = line
                .points
                .iter()
                .map(|(_, p)| (tps(p), p50_ms(p)))
                .collect();
            chart
                .draw_series(LineSeries::new(p99.clone(), P99_COLOR.stroke_width(2)))
                .map_err(err)?;
            chart
                .draw_series(p99.iter().map(|p| Circle::new(*p, 4, P99_COLOR.filled())))
                .map_err(err)?;
            chart
                .draw_series(DashedLineSeries::new(
                    p50.clone(),
                    6,
                    4,
                    P50_COLOR.stroke_width(2),
                ))
                .map_err(err)?;
            chart
                .draw_series(p50.iter().map(|p| Circle::new(*p, 3, P50_COLOR.filled())))
                .map_err(err)?;
            chart
                .draw_series(line.points.iter().map(|(_, p)| {
                    Text::new(
                        p.label.clone(),
                        (tps(p) + x_top * 0.008, p99_ms(p) + y_top * 0.02),
                        &label_style,
                    )
                }))
                .map_err(err)?;
        }
        Ok(())
    })
}
