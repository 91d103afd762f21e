//! A history ladder (`sweep: { history: [...] }`): its table, and its curves against
//! the payments the network had made when each step's load started: the load's p99,
//! each node's data dir, and each node's restart time. TPS against the step is the
//! sweep's own chart.

use crate::report::charts::{Axes, Chart, axis_top, canvas, err, legend_line};
use crate::report::compare::chart::RUN_COLORS;
use crate::report::format;
use crate::report::sweep::{PointReport, SweepReport};
use anyhow::Result;
use plotters::prelude::*;
use std::fmt::Write;

/// The sweep parameter of a history ladder.
const HISTORY: &str = "history";

/// One line: its name and its (payments made, value) points, in ladder order.
type Line = (String, Vec<(f64, f64)>);

/// The ladder's three charts; none for a sweep without `history`.
pub fn charts(report: &SweepReport) -> Result<Vec<Chart>> {
    if !report.parameters.iter().any(|p| p == HISTORY) {
        return Ok(Vec::new());
    }
    let p99 = lines(report, |p| {
        let r = p.results.as_ref()?;
        Some(vec![(String::new(), r.latency.p99_us as f64 / 1000.0)])
    });
    let data_dir = lines(report, |p| {
        let nodes = &p.results.as_ref()?.nodes;
        Some(
            (nodes.iter())
                .filter_map(|n| Some((n.node.clone(), n.data_dir_bytes? as f64 / 1048576.0)))
                .collect(),
        )
    });
    let restart = lines(report, |p| {
        let nodes = &p.results.as_ref()?.nodes;
        Some(
            (nodes.iter())
                .filter_map(|n| Some((n.node.clone(), n.restart_s?)))
                .collect(),
        )
    });
    Ok(vec![
        Chart {
            file_name: "history-p99.svg",
            title: "p99 against payments made",
            caption: "p99 latency of each step's measured load, against the payments the network had made when the load started (history phases and earlier loads).",
            svg: draw(&p99, "p99 latency, ms")?,
        },
        Chart {
            file_name: "history-data-dir.svg",
            title: "Data dir against payments made",
            caption: "Each node's data dir when its step's load ended, against the payments made when the load started; the slope is the bytes per payment of the history.",
            svg: draw(&data_dir, "data dir, MiB")?,
        },
        Chart {
            file_name: "history-restart.svg",
            title: "Restart time against payments made",
            caption: "after_load: restart: seconds from each node's start until its channels were active again, after each step.",
            svg: draw(&restart, "until channels active, s")?,
        },
    ])
}

/// The ladder table's columns.
pub const COLUMNS: [&str; 7] = [
    "point",
    "made before the load",
    "phase: paid, TPS",
    "TPS",
    "p99",
    "data dir per node (per payment made)",
    "restart until channels active",
];

/// The ladder table's rows: per step, the payments made before its load, what the
/// phase paid and how fast, the load's TPS and p99, and per node its data dir (with
/// the bytes per payment of the whole history) and restart time. Empty without a
/// ladder.
pub fn rows(report: &SweepReport) -> Vec<[String; 7]> {
    if !report.parameters.iter().any(|p| p == HISTORY) {
        return Vec::new();
    }
    let dash = |v: Vec<String>| {
        if v.is_empty() {
            "-".into()
        } else {
            v.join(" · ")
        }
    };
    let mut out = Vec::new();
    for p in &report.points {
        let (Some(h), Some(r)) = (&p.history, &p.results) else {
            continue;
        };
        // Every payment the network made until this load ended.
        let all = h.made() + r.ok;
        let dirs: Vec<String> = (r.nodes.iter())
            .filter_map(|n| {
                let bytes = n.data_dir_bytes?;
                let per = (all > 0).then(|| format!(" ({})", format::bytes(bytes / all)));
                Some(format!(
                    "{} {}{}",
                    n.node,
                    format::bytes(bytes),
                    per.unwrap_or_default()
                ))
            })
            .collect();
        let restarts: Vec<String> = (r.nodes.iter())
            .filter_map(|n| Some(format!("{} {:.1} s", n.node, n.restart_s?)))
            .collect();
        out.push([
            p.label.clone(),
            h.made().to_string(),
            format!("{}, {}", h.paid, format::tps(h.tps)),
            format::tps(r.tps_avg),
            format::latency_us(r.latency.p99_us),
            dash(dirs),
            dash(restarts),
        ]);
    }
    out
}

/// sweep.md's ladder table ([`rows`]); empty without a ladder.
pub fn markdown(report: &SweepReport) -> String {
    let rows = rows(report);
    let mut out = String::new();
    if rows.is_empty() {
        return out;
    }
    out.push_str("\nHistory ladder (payments made on the network before each load):\n\n");
    let _ = writeln!(out, "| {} |", COLUMNS.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(COLUMNS.len()));
    for r in rows {
        let _ = writeln!(out, "| {} |", r.join(" | "));
    }
    out
}

/// The payments made when point `p`'s load started: its history phase's count.
fn made(p: &PointReport) -> Option<f64> {
    let h = p.history.as_ref()?;
    Some(h.made() as f64)
}

/// One line per network (the point's values but the history step) and per name
/// `value` gives (a node, or "" for one figure per point).
fn lines(
    report: &SweepReport,
    value: impl Fn(&PointReport) -> Option<Vec<(String, f64)>>,
) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::new();
    for p in &report.points {
        let (Some(x), Some(values)) = (made(p), value(p)) else {
            continue;
        };
        let rest: Vec<String> = (p.values.iter())
            .filter(|(k, _)| k.as_str() != HISTORY)
            .map(|(k, v)| format!("{k}={}", v.as_str().map_or(v.to_string(), str::to_string)))
            .collect();
        for (name, y) in values {
            let label = [rest.join(","), name]
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
            match out.iter_mut().find(|(l, _)| *l == label) {
                Some((_, pts)) => pts.push((x, y)),
                None => out.push((label, vec![(x, y)])),
            }
        }
    }
    out
}

fn draw(lines: &[Line], y_desc: &str) -> Result<String> {
    let all = || lines.iter().flat_map(|(_, pts)| pts.iter());
    let x_max = all().map(|p| p.0).fold(0.0, f64::max);
    let y_max = all().map(|p| p.1).fold(0.0, f64::max);
    let axes = Axes {
        x: 0.0..axis_top(x_max).max(1.0),
        y: 0.0..axis_top(y_max),
        x_desc: "payments made before the load",
        y_desc,
        x_label: None,
        x_labels: None,
    };
    let empty = lines.iter().all(|(_, pts)| pts.is_empty());
    let legend = (lines.len() > 1 || lines.iter().any(|(l, _)| !l.is_empty()))
        .then_some(SeriesLabelPosition::UpperLeft);
    canvas(
        &axes,
        legend,
        empty.then_some("no step measured"),
        |chart| {
            for (i, (name, pts)) in lines.iter().enumerate() {
                let color = RUN_COLORS[i % RUN_COLORS.len()];
                let series = chart
                    .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                    .map_err(err)?;
                if !name.is_empty() {
                    series.label(name.as_str()).legend(legend_line(color));
                }
                chart
                    .draw_series(pts.iter().map(|p| Circle::new(*p, 4, color.filled())))
                    .map_err(err)?;
            }
            Ok(())
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::history_phase::HistoryPhase;
    use crate::report::sweep::NodeFigures;
    use crate::report::sweep::tests::{point, report};
    use serde_json::json;

    fn step(made: u64, p99_ms: u64, bob_mib: u64, bob_restart_s: f64) -> PointReport {
        let mut p = point(
            &format!("history={made}"),
            &[("history", json!(made))],
            50.0,
            100,
            p99_ms,
        );
        p.history = Some(HistoryPhase {
            target: made,
            before: made / 2,
            paid: made - made / 2,
            failed: 0,
            failures_by_reason: Default::default(),
            seconds: 1.0,
            tps: 1.0,
            concurrency: 10,
        });
        p.results.as_mut().unwrap().nodes = vec![NodeFigures {
            node: "bob".into(),
            implementation: "lnd".into(),
            version: "v".into(),
            database: "bbolt".into(),
            cpu_pct_avg: None,
            cpu_ms_per_payment: None,
            bytes_per_payment: None,
            data_dir_bytes: Some(bob_mib * 1048576),
            restart_s: Some(bob_restart_s),
            completion: None,
        }];
        p
    }

    #[test]
    fn a_ladder_draws_its_figures_against_the_payments_made() {
        let mut r = report(
            vec![step(0, 200, 1, 3.0), step(10_000, 250, 100, 7.5)],
            None,
        );
        r.parameters = vec!["history".into()];
        let data_dir = lines(&r, |p| {
            let n = &p.results.as_ref()?.nodes[0];
            Some(vec![(n.node.clone(), n.data_dir_bytes? as f64 / 1048576.0)])
        });
        assert_eq!(
            data_dir,
            [("bob".to_string(), vec![(0.0, 1.0), (10_000.0, 100.0)])]
        );
        let charts = charts(&r).unwrap();
        let names: Vec<&str> = charts.iter().map(|c| c.file_name).collect();
        assert_eq!(
            names,
            [
                "history-p99.svg",
                "history-data-dir.svg",
                "history-restart.svg"
            ]
        );
        assert!(
            charts
                .iter()
                .all(|c| c.svg.contains("payments made before the load"))
        );
        assert!(charts[1].svg.contains("bob"), "{}", charts[1].svg);
        let table = markdown(&r);
        assert!(
            table.contains("| history=10000 | 10000 | 5000, 1.0 | 50.0 | 250.0 ms | bob 100.0 MiB (10.1 KiB) | bob 7.5 s |"),
            "{table}"
        );
        // sweep.html has the same table, cells escaped, the label linking its report.
        let html = crate::report::sweep::html(&r, &charts).unwrap();
        let section = &html[html
            .find("<section id=\"ladder\">")
            .expect("ladder section")..];
        let section = &section[..section.find("</section>").unwrap()];
        assert!(
            section.contains("<a href=\"history=10000/report.html\">history=10000</a>"),
            "{section}"
        );
        assert!(
            section.contains("<td class=\"num\">bob 100.0 MiB (10.1 KiB)</td>"),
            "{section}"
        );
        // A sweep without a ladder has neither table nor charts.
        r.parameters = vec!["concurrency".into()];
        assert!(markdown(&r).is_empty());
        let html = crate::report::sweep::html(&r, &[]).unwrap();
        assert!(!html.contains("id=\"ladder\""));
        assert!(super::charts(&r).unwrap().is_empty());
    }
}
