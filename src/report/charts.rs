//! The report's charts as SVG, drawn with plotters' SVG backend (text is written as
//! SVG `<text>`, so no font library is needed). Each chart is written inline in
//! report.html and as its own `.svg` file.

use crate::metrics::{EventKind, RunEvent, SeriesPoint};
use anyhow::{Result, anyhow};
use plotters::prelude::*;

pub const WIDTH: u32 = 900;
pub const HEIGHT: u32 = 380;

/// Most vertices drawn per line: a day at one point a second would otherwise make
/// megabytes of SVG for detail no screen shows. See [`thin`].
pub const MAX_DRAWN_POINTS: usize = 2000;

/// Points in the trailing moving average of TPS.
pub const MOVING_AVERAGE_POINTS: usize = 10;

/// Line colours; tests look the series up by them.
pub const TPS_COLOR: RGBColor = RGBColor(0x9e, 0xc5, 0xe8);
pub const TPS_AVG_COLOR: RGBColor = RGBColor(0x1f, 0x5f, 0xa8);
pub const P50_COLOR: RGBColor = RGBColor(0x2c, 0x8c, 0x3c);
pub const P90_COLOR: RGBColor = RGBColor(0xd9, 0x8a, 0x00);
pub const P99_COLOR: RGBColor = RGBColor(0xc0, 0x2a, 0x2a);
const WARM_UP_SHADE: RGBColor = RGBColor(0xee, 0xee, 0xee);
/// Paused time: a band from each pause to its resume (or the end of the chart).
pub const PAUSE_SHADE: RGBColor = RGBColor(0xfb, 0xe9, 0xc4);
/// Load changes: a thin vertical line with the new setting written at its top.
pub const LOAD_CHANGE_COLOR: RGBColor = RGBColor(0x7b, 0x3f, 0xa0);
/// Faults (`faults:`): a light red band while they last, and their label.
pub const FAULT_SHADE: RGBColor = RGBColor(0xf8, 0xd7, 0xd7);
pub const FAULT_COLOR: RGBColor = RGBColor(0xb0, 0x20, 0x20);
pub(crate) const FONT: &str = "sans-serif";

/// One rendered chart.
#[derive(Debug, Clone)]
pub struct Chart {
    /// File name of the separate `.svg`, also used as the HTML element id.
    pub file_name: &'static str,
    pub title: &'static str,
    /// What the chart shows and how to read it, one sentence.
    pub caption: &'static str,
    pub svg: String,
}

/// Trailing moving average over `window` points (fewer at the start).
pub fn moving_average(values: &[f64], window: usize) -> Vec<f64> {
    let window = window.max(1);
    let mut sum = 0.0;
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            sum += v;
            if i >= window {
                sum -= values[i - window];
            }
            sum / (i + 1).min(window) as f64
        })
        .collect()
}

/// At most [`MAX_DRAWN_POINTS`] of `points` (sorted by x): beyond that, the points
/// are cut into buckets and each bucket keeps its lowest and highest point, in x
/// order, so spikes and dips stay visible.
pub fn thin(points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    if points.len() <= MAX_DRAWN_POINTS {
        return points;
    }
    let bucket = points.len().div_ceil(MAX_DRAWN_POINTS / 2);
    let mut out = Vec::with_capacity(MAX_DRAWN_POINTS);
    for chunk in points.chunks(bucket) {
        let by_y = |a: &&(f64, f64), b: &&(f64, f64)| a.1.total_cmp(&b.1);
        let (Some(lo), Some(hi)) = (chunk.iter().min_by(by_y), chunk.iter().max_by(by_y)) else {
            continue;
        };
        if lo.0 <= hi.0 {
            out.extend([*lo, *hi]);
        } else {
            out.extend([*hi, *lo]);
        }
    }
    out.dedup();
    out
}

/// Upper end of an axis that shows `max` with some headroom, never empty.
pub(crate) fn axis_top(max: f64) -> f64 {
    if max.is_finite() && max > 0.0 {
        (max * 1.1).min(AXIS_LIMIT)
    } else {
        1.0
    }
}

/// The largest magnitude a chart draws (seconds, ms, payments/s): values beyond it
/// (only a damaged or hand-edited report has them) are left out rather than breaking
/// the drawing's arithmetic.
pub(crate) const AXIS_LIMIT: f64 = 1e12;

/// A point a chart can draw: finite, within [`AXIS_LIMIT`].
pub(crate) fn drawable(p: &(f64, f64)) -> bool {
    p.0.is_finite() && p.1.is_finite() && p.0.abs() <= AXIS_LIMIT && p.1.abs() <= AXIS_LIMIT
}

/// A tick label: whole numbers when the axis reaches 10, one decimal below.
pub(crate) fn tick(value: f64, axis_top: f64) -> String {
    if axis_top >= 10.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

pub(crate) fn err(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("drawing a chart: {e}")
}

/// The run's events as drawn on a time axis.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Marks {
    /// Paused from, to (`None`: still paused when the run ended).
    pub pauses: Vec<(f64, Option<f64>)>,
    /// Load changes: when, and the short label of the new setting (e.g. `→15`).
    pub load_changes: Vec<(f64, String)>,
    /// Faults of `faults:`: from, to (`None`: not lifted before the end), label.
    pub faults: Vec<(f64, Option<f64>, String)>,
}

impl Marks {
    pub fn of(events: &[RunEvent]) -> Marks {
        let mut marks = Marks::default();
        let mut paused_at = None;
        for event in events {
            match &event.kind {
                EventKind::Paused => {
                    paused_at.get_or_insert(event.at_s);
                }
                EventKind::Resumed => {
                    if let Some(from) = paused_at.take() {
                        marks.pauses.push((from, Some(event.at_s)));
                    }
                }
                EventKind::FaultBegan { fault } => {
                    marks.faults.push((event.at_s, None, fault.clone()));
                }
                EventKind::FaultEnded { fault } => {
                    let open = (marks.faults.iter_mut())
                        .rev()
                        .find(|(_, to, label)| to.is_none() && label == fault);
                    if let Some(f) = open {
                        f.1 = Some(event.at_s);
                    }
                }
                EventKind::ConcurrencyChanged { to, .. } => {
                    marks.load_changes.push((event.at_s, format!("→{to}")));
                }
                EventKind::RateChanged { to, .. } => {
                    marks
                        .load_changes
                        .push((event.at_s, format!("→{}/s", tick(*to, *to))));
                }
                EventKind::StopRequested | EventKind::PhaseStarted { .. } => {}
            }
        }
        if let Some(from) = paused_at {
            marks.pauses.push((from, None));
        }
        marks
    }

    /// The latest time a mark needs on the x axis.
    fn x_max(&self) -> f64 {
        let pauses = self.pauses.iter().map(|(from, to)| to.unwrap_or(*from));
        let changes = self.load_changes.iter().map(|(at, _)| *at);
        let faults = self.faults.iter().map(|(from, to, _)| to.unwrap_or(*from));
        pauses.chain(changes).chain(faults).fold(0.0, f64::max)
    }
}

/// A line series with its legend entry.
pub(crate) struct Line<'a> {
    pub label: &'a str,
    pub color: RGBColor,
    pub width: u32,
    pub points: Vec<(f64, f64)>,
}

/// A linear chart being drawn: what [`canvas`] hands its `plot` callback.
pub(crate) type Plot<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// The frame every linear chart shares: white canvas, margins, axes with their
/// descriptions and labels. `x_label` formats an x tick (default: [`tick`] on `x`);
/// `x_labels` sets how many x ticks there are (default: plotters' choice).
pub(crate) struct Axes<'a> {
    pub x: std::ops::Range<f64>,
    pub y: std::ops::Range<f64>,
    pub x_desc: &'a str,
    pub y_desc: &'a str,
    pub x_label: Option<&'a dyn Fn(&f64) -> String>,
    pub x_labels: Option<usize>,
}

/// Draws one linear chart as SVG: the frame of `axes`, then `plot`'s series, then
/// the legend of the labelled ones at `legend` (if given); with `empty_note`, that
/// note in the middle (nothing to plot).
pub(crate) fn canvas(
    axes: &Axes,
    legend: Option<SeriesLabelPosition>,
    empty_note: Option<&str>,
    plot: impl FnOnce(&mut Plot) -> Result<()>,
) -> Result<String> {
    let (x_top, y_top) = (axes.x.end, axes.y.end);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(axes.x.clone(), axes.y.clone())
            .map_err(err)?;
        let x_tick = |x: &f64| tick(*x, x_top);
        let y_label = |y: &f64| tick(*y, y_top);
        let mut mesh = chart.configure_mesh();
        mesh.light_line_style(WHITE)
            .x_label_formatter(axes.x_label.unwrap_or(&x_tick))
            .y_label_formatter(&y_label)
            .x_desc(axes.x_desc)
            .y_desc(axes.y_desc)
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14));
        if let Some(n) = axes.x_labels {
            mesh.x_labels(n);
        }
        mesh.draw().map_err(err)?;
        plot(&mut chart)?;
        if let Some(position) = legend {
            chart
                .configure_series_labels()
                .position(position)
                .label_font((FONT, 13))
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK.mix(0.3))
                .draw()
                .map_err(err)?;
        }
        if let Some(note) = empty_note {
            // Centred by eye: about 7 px per character at this size.
            let half = (note.chars().count() * 7 / 2) as i32;
            root.draw(&Text::new(
                note.to_string(),
                (WIDTH as i32 / 2 - half, HEIGHT as i32 / 2),
                (FONT, 16),
            ))
            .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// A legend entry's sample: a short thick line in `color`.
pub(crate) fn legend_line(color: RGBColor) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(3))
}

/// Draws `lines` on one linear chart; `shade_until` greys the x range of the warm-up;
/// `marks` (on time axes) shade pauses and draw load changes. Lines without points
/// get no legend entry; with no points at all, `empty_note` is shown instead.
pub(crate) fn draw(
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
    shade_until: Option<f64>,
    marks: &Marks,
    empty_note: &str,
) -> Result<String> {
    let lines: Vec<Line> = lines
        .iter()
        .map(|l| Line {
            label: l.label,
            color: l.color,
            width: l.width,
            points: l.points.iter().copied().filter(drawable).collect(),
        })
        .collect();
    let lines = &lines[..];
    let x_max = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .fold(marks.x_max(), f64::max);
    let y_max = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    let (x_top, y_top) = (axis_top(x_max), axis_top(y_max));
    let any = lines.iter().any(|l| !l.points.is_empty());
    let axes = Axes {
        x: 0.0..x_top,
        y: 0.0..y_top,
        x_desc,
        y_desc,
        x_label: None,
        x_labels: None,
    };
    let legend = any.then_some(SeriesLabelPosition::UpperRight);
    canvas(&axes, legend, (!any).then_some(empty_note), |chart| {
        if let Some(end) = shade_until.filter(|e| *e > 0.0) {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(0.0, 0.0), (end.min(x_top), y_top)],
                    WARM_UP_SHADE.filled(),
                )))
                .map_err(err)?;
        }
        chart
            .draw_series(marks.pauses.iter().map(|(from, to)| {
                // A pause still open at the end lasts to the last point drawn.
                let to = to.unwrap_or(x_max).min(x_top);
                Rectangle::new([(*from, 0.0), (to, y_top)], PAUSE_SHADE.filled())
            }))
            .map_err(err)?;
        chart
            .draw_series(marks.faults.iter().map(|(from, to, _)| {
                // At least a thin band, so a fault of a moment (a reset) shows.
                let to = to.unwrap_or(x_max).min(x_top).max(from + x_top * 0.003);
                Rectangle::new([(*from, 0.0), (to, y_top)], FAULT_SHADE.filled())
            }))
            .map_err(err)?;
        let fault_style = TextStyle::from((FONT, 12)).color(&FAULT_COLOR);
        chart
            .draw_series(marks.faults.iter().enumerate().map(|(i, (at, _, label))| {
                // Staggered, so faults close together do not overwrite each other.
                let y = y_top * (0.90 - 0.06 * (i % 4) as f64);
                Text::new(label.clone(), (*at + x_top * 0.005, y), &fault_style)
            }))
            .map_err(err)?;
        chart
            .draw_series(marks.load_changes.iter().map(|(at, _)| {
                PathElement::new(
                    vec![(*at, 0.0), (*at, y_top)],
                    LOAD_CHANGE_COLOR.stroke_width(1),
                )
            }))
            .map_err(err)?;
        let label_style = TextStyle::from((FONT, 12)).color(&LOAD_CHANGE_COLOR);
        chart
            .draw_series(marks.load_changes.iter().map(|(at, label)| {
                Text::new(
                    label.clone(),
                    (*at + x_top * 0.005, y_top * 0.98),
                    &label_style,
                )
            }))
            .map_err(err)?;
        for line in lines.iter().filter(|l| !l.points.is_empty()) {
            chart
                .draw_series(LineSeries::new(
                    thin(line.points.clone()),
                    line.color.stroke_width(line.width),
                ))
                .map_err(err)?
                .label(line.label)
                .legend(legend_line(line.color));
        }
        Ok(())
    })
}

pub(crate) fn warm_up_end(series: &[SeriesPoint]) -> Option<f64> {
    series
        .iter()
        .filter(|p| p.warm_up)
        .map(|p| p.at_s)
        .reduce(f64::max)
}

pub fn tps_over_time(series: &[SeriesPoint]) -> Result<String> {
    tps_over_time_marked(series, &[])
}

/// TPS over time with the run's pauses and load changes marked.
pub fn tps_over_time_marked(series: &[SeriesPoint], events: &[RunEvent]) -> Result<String> {
    let points: Vec<(f64, f64)> = series.iter().map(|p| (p.at_s, p.tps)).collect();
    let timed: Vec<(f64, f64)> = series
        .iter()
        .filter(|p| !p.warm_up)
        .map(|p| (p.at_s, p.tps))
        .collect();
    draw(
        "seconds since start",
        "payments / s",
        &tps_lines(points, &timed),
        warm_up_end(series),
        &Marks::of(events),
        "no payments recorded",
    )
}

/// TPS per interval (thin) and the moving average of `averaged` (thick): the points
/// the average covers may leave some out (the warm-up).
fn tps_lines(points: Vec<(f64, f64)>, averaged: &[(f64, f64)]) -> [Line<'static>; 2] {
    let tps: Vec<f64> = averaged.iter().map(|p| p.1).collect();
    let avg = moving_average(&tps, MOVING_AVERAGE_POINTS)
        .into_iter()
        .zip(averaged)
        .map(|(v, p)| (p.0, v))
        .collect();
    [
        Line {
            label: "TPS per interval",
            color: TPS_COLOR,
            width: 1,
            points,
        },
        Line {
            label: "moving average",
            color: TPS_AVG_COLOR,
            width: 2,
            points: avg,
        },
    ]
}

pub fn tps_vs_payments(series: &[SeriesPoint]) -> Result<String> {
    let mut done = 0u64;
    let mut points = Vec::new();
    for p in series.iter().filter(|p| !p.warm_up) {
        done += p.ok;
        points.push((done as f64, p.tps));
    }
    draw(
        "successful payments so far",
        "payments / s",
        &tps_lines(points.clone(), &points),
        None,
        &Marks::default(),
        "no payments recorded",
    )
}

pub fn latency_over_time(series: &[SeriesPoint]) -> Result<String> {
    latency_over_time_marked(series, &[])
}

/// Latency over time with the run's pauses and load changes marked.
pub fn latency_over_time_marked(series: &[SeriesPoint], events: &[RunEvent]) -> Result<String> {
    // An interval without successes has no latency: leave it out rather than draw 0.
    let with_latency: Vec<&SeriesPoint> = series.iter().filter(|p| p.ok > 0).collect();
    let line = |label, color, width, f: fn(&SeriesPoint) -> u64| Line {
        label,
        color,
        width,
        points: with_latency
            .iter()
            .map(|p| (p.at_s, f(p) as f64 / 1000.0))
            .collect(),
    };
    draw(
        "seconds since start",
        "latency, ms",
        &[
            line("p50", P50_COLOR, 2, |p| p.p50_us),
            line("p90", P90_COLOR, 2, |p| p.p90_us),
            line("p99", P99_COLOR, 2, |p| p.p99_us),
        ],
        warm_up_end(series),
        &Marks::of(events),
        "no successful payments recorded",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moving_average_is_trailing_and_starts_short() {
        let avg = moving_average(&[2.0, 4.0, 6.0, 8.0], 2);
        assert_eq!(avg, vec![2.0, 3.0, 5.0, 7.0]);
        assert!(moving_average(&[], 3).is_empty());
        assert_eq!(moving_average(&[5.0], 0), vec![5.0]);
    }

    #[test]
    fn thinning_keeps_the_extremes_of_long_lines() {
        let short: Vec<(f64, f64)> = (0..10).map(|i| (i as f64, 1.0)).collect();
        assert_eq!(thin(short.clone()), short);
        let mut long: Vec<(f64, f64)> = (0..86_400).map(|i| (i as f64, 50.0)).collect();
        long[40_000].1 = 500.0;
        long[60_000].1 = 0.0;
        let thinned = thin(long);
        assert!(thinned.len() <= MAX_DRAWN_POINTS, "{}", thinned.len());
        assert!(thinned.contains(&(40_000.0, 500.0)));
        assert!(thinned.contains(&(60_000.0, 0.0)));
        assert!(thinned.windows(2).all(|w| w[0].0 <= w[1].0), "x order kept");
        assert_eq!(thinned.last().unwrap().0, 86_399.0);
    }

    #[test]
    fn ticks_drop_decimals_on_long_axes() {
        assert_eq!(tick(1500.0, 3500.0), "1500");
        assert_eq!(tick(0.5, 1.1), "0.5");
    }

    fn event(at_s: f64, kind: EventKind) -> RunEvent {
        RunEvent { at_s, kind }
    }

    #[test]
    fn marks_pair_pauses_with_resumes_and_label_load_changes() {
        let marks = Marks::of(&[
            event(
                1.0,
                EventKind::PhaseStarted {
                    phase: crate::metrics::Stage::Hold,
                },
            ),
            event(2.0, EventKind::Paused),
            event(4.0, EventKind::Resumed),
            event(5.0, EventKind::ConcurrencyChanged { from: 4, to: 15 }),
            event(
                6.0,
                EventKind::RateChanged {
                    from: 10.0,
                    to: 2.5,
                },
            ),
            event(7.0, EventKind::Paused),
            event(8.0, EventKind::StopRequested),
        ]);
        assert_eq!(marks.pauses, vec![(2.0, Some(4.0)), (7.0, None)]);
        assert_eq!(
            marks.load_changes,
            vec![(5.0, "→15".to_string()), (6.0, "→2.5/s".to_string())]
        );
        assert_eq!(marks.x_max(), 7.0);
    }

    #[test]
    fn empty_series_still_draws_a_chart_with_a_note() {
        let svg = tps_over_time(&[]).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..60.min(svg.len())]);
        assert!(svg.contains("no payments recorded"));
    }
}
