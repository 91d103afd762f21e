//! The implementation matrix of a sweep (`sweep: { implementation: [...], database:
//! [...] }`), as a person reads it: one row per implementation × database × load with
//! TPS, p50, p99 and each node's costs (CPU per payment, data-dir bytes per payment,
//! restart time), the releases the nodes reported, the best rate under the p99 bound
//! per implementation; and two grouped bar charts (TPS and p99 per implementation, at
//! each load).

use super::charts::{Axes, Chart, axis_top, canvas, err};
use super::compare::chart::RUN_COLORS;
use super::format;
use super::sweep::model::{
    BestPoint, GroupBest, NodeFigures, PointReport, PointStatus, SweepReport, max_tps_under_bound,
};
use anyhow::Result;
use plotters::prelude::*;

/// Parameters that change the load on one network, not what runs.
const LOAD_KEYS: [&str; 3] = ["concurrency", "rate", "kind"];

/// True when the sweep compares implementations or databases.
pub fn is_matrix(parameters: &[String]) -> bool {
    parameters
        .iter()
        .any(|p| p == "database" || p == "implementation" || p.ends_with(".implementation"))
}

pub const COLUMNS: [&str; 13] = [
    "implementation",
    "release",
    "database",
    "load",
    "status",
    "ok / failed",
    "TPS",
    "p50",
    "p99",
    "completion",
    "CPU / payment",
    "data dir / payment",
    "restart",
];

/// What runs in a point (its implementation and database values), e.g.
/// `implementation=cln,database=postgres`: the group a point belongs to.
pub fn group_of(p: &PointReport) -> String {
    let mut left_out = LOAD_KEYS.to_vec();
    left_out.push("repeat");
    p.label_without(&left_out)
        .unwrap_or_else(|| "all points".into())
}

/// The load of a point: `concurrency 10`, `rate 20/s`, or `-`.
pub fn load_of(p: &PointReport) -> String {
    let mut parts = Vec::new();
    if let Some(c) = p.values.get("concurrency") {
        parts.push(format!("concurrency {c}"));
    }
    if let Some(r) = p.values.get("rate") {
        parts.push(format!("rate {r}/s"));
    }
    if let Some(k) = p.values.get("kind").and_then(|k| k.as_str()) {
        parts.push(k.to_string());
    }
    if parts.is_empty() {
        p.load.clone()
    } else {
        parts.join(", ")
    }
}

/// `lnd` when every node has the same value, else `alice lnd · bob cln`.
fn per_node(nodes: &[NodeFigures], value: impl Fn(&NodeFigures) -> String) -> String {
    let values: Vec<String> = nodes.iter().map(&value).collect();
    if values.is_empty() {
        return "-".into();
    }
    if values.iter().all(|v| *v == values[0]) {
        return values[0].clone();
    }
    (nodes.iter().zip(values))
        .map(|(n, v)| format!("{} {v}", n.node))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// `alice 1.2 ms · bob 0.8 ms`: a cost of every node that has it.
fn each_node(nodes: &[NodeFigures], value: impl Fn(&NodeFigures) -> Option<String>) -> String {
    let parts: Vec<String> = nodes
        .iter()
        .filter_map(|n| Some(format!("{} {}", n.node, value(n)?)))
        .collect();
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(" · ")
    }
}

/// One row of the matrix for a point: skipped and unrun points too, so holes show.
pub fn row(p: &PointReport) -> Vec<String> {
    let nodes = p.results.as_ref().map_or(&[][..], |r| r.nodes.as_slice());
    let from_values = |key: &str| {
        (p.values.iter())
            .filter(|(k, _)| *k == key || k.ends_with(&format!(".{key}")))
            .map(|(_, v)| v.as_str().map_or(v.to_string(), str::to_string))
            .collect::<Vec<_>>()
            .join(" · ")
    };
    let implementation = if nodes.is_empty() {
        from_values("implementation")
    } else {
        per_node(nodes, |n| n.implementation.clone())
    };
    let database = if nodes.is_empty() {
        from_values("database")
    } else {
        per_node(nodes, |n| n.database.clone())
    };
    // A skipped or failed point's reason is a note below the table ([`rows`]).
    let mut cells = vec![
        or_dash(implementation),
        per_node(nodes, |n| short_commits(release(&n.version))),
        or_dash(database),
        load_of(p),
        p.status_text(),
    ];
    match &p.results {
        Some(r) => cells.extend([
            format!("{} / {}", r.ok, r.failed),
            format::tps(r.tps_avg),
            format::latency_us(r.latency.p50_us),
            format::latency_us(r.latency.p99_us),
            completion(nodes),
            each_node(nodes, |n| {
                n.cpu_ms_per_payment.map(|ms| format!("{ms:.1} ms"))
            }),
            each_node(nodes, |n| {
                n.bytes_per_payment.map(|b| {
                    if b < 0.0 {
                        format!("-{}", format::bytes((-b) as u64))
                    } else {
                        format::bytes(b as u64)
                    }
                })
            }),
            each_node(nodes, |n| n.restart_s.map(|s| format!("{s:.1} s"))),
        ]),
        None => cells.extend(std::iter::repeat_n("-".to_string(), 8)),
    }
    cells
}

/// How the senders learned that payments ended: one value when all agree, else per
/// sender (`alice stream, exact · carol websocket event, exact`).
/// Every point's row, a skipped or failed one's status followed by the number of its
/// reason (`skipped [1]`), and the reasons, each once, in the order first met.
pub fn rows(points: &[PointReport]) -> (Vec<Vec<String>>, Vec<String>) {
    let mut notes: Vec<String> = Vec::new();
    let rows = (points.iter())
        .map(|p| {
            let mut cells = row(p);
            if let Some(why) = p
                .reason
                .as_ref()
                .filter(|_| matches!(p.status, PointStatus::Skipped | PointStatus::Failed))
            {
                let n = match notes.iter().position(|n| n == why) {
                    Some(i) => i + 1,
                    None => {
                        notes.push(why.clone());
                        notes.len()
                    }
                };
                cells[4] = format!("{} [{n}]", cells[4]);
            }
            cells
        })
        .collect();
    (rows, notes)
}

/// The release a node reported, without the dangling `-` of one built from a source
/// tree without git metadata (Eclair's `0.13.0-`: its release, then an empty commit).
fn release(version: &str) -> &str {
    version.strip_suffix('-').unwrap_or(version)
}

fn completion(nodes: &[NodeFigures]) -> String {
    let senders: Vec<NodeFigures> = (nodes.iter())
        .filter(|n| n.completion.is_some())
        .cloned()
        .collect();
    per_node(&senders, |n| n.completion.clone().unwrap_or_default())
}

/// A release as a person reads it: 40-hex commit ids cut to 12 (`source ee1c96cc7c62`).
fn short_commits(version: &str) -> String {
    (version.split(' '))
        .map(|word| {
            let hex = word.trim_end_matches(')');
            if hex.len() == 40 && hex.chars().all(|c| c.is_ascii_hexdigit()) {
                format!("{}{}", &hex[..12], &word[hex.len()..])
            } else {
                word.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn or_dash(s: String) -> String {
    if s.is_empty() { "-".into() } else { s }
}

/// Per group, in the order groups first appear: the point with the highest TPS whose
/// p99 is at most `bound_us` (closed- and open-loop points alike).
pub fn best_by_group(points: &[PointReport], bound_us: u64) -> Vec<GroupBest> {
    let mut groups: Vec<String> = Vec::new();
    for p in points {
        let g = group_of(p);
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    groups
        .into_iter()
        .map(|group| {
            let members: Vec<PointReport> = (points.iter())
                .filter(|p| group_of(p) == group)
                .cloned()
                .collect();
            let best = max_tps_under_bound(&members, bound_us).and_then(|i| {
                let r = members[i].results.as_ref()?;
                Some(BestPoint {
                    label: members[i].label.clone(),
                    tps_avg: r.tps_avg,
                    p99_us: r.latency.p99_us,
                })
            });
            GroupBest { group, best }
        })
        .collect()
}

/// `implementation=lnd: 41.2 TPS at rate=40 (p99 812 ms)`, one line per group.
pub fn best_lines(report: &SweepReport) -> Vec<String> {
    let Some(bound) = report.p99_bound_ms else {
        return Vec::new();
    };
    let bound = format::latency_us((bound * 1000.0) as u64);
    (report.best_by_group.iter())
        .map(|g| match &g.best {
            Some(b) => format!(
                "{}: {} at {} (p99 {}, bound {bound})",
                g.group,
                format::tps(b.tps_avg),
                b.label,
                format::latency_us(b.p99_us)
            ),
            None if group_all(report, &g.group, PointStatus::Skipped) => {
                format!("{}: skipped", g.group)
            }
            None if group_all(report, &g.group, PointStatus::Failed) => {
                format!("{}: failed", g.group)
            }
            None => format!("{}: no finished point kept p99 under {bound}", g.group),
        })
        .collect()
}

/// True when every point of `group` has `status` (none was measured).
fn group_all(report: &SweepReport, group: &str, status: PointStatus) -> bool {
    let mut members = (report.points.iter()).filter(|p| group_of(p) == group);
    members.all(|p| p.status == status)
}

pub fn markdown(report: &SweepReport) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "\n### Implementation matrix\n");
    let _ = writeln!(out, "| {} |", COLUMNS.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(COLUMNS.len()));
    let (rows, notes) = rows(&report.points);
    for cells in rows {
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    if !notes.is_empty() {
        let _ = writeln!(out);
    }
    for (i, why) in notes.iter().enumerate() {
        let _ = writeln!(out, "[{}] {why}  ", i + 1);
    }
    let best = best_lines(report);
    if !best.is_empty() {
        let _ = writeln!(
            out,
            "\nHighest TPS under the p99 bound, per implementation:\n"
        );
        for line in best {
            let _ = writeln!(out, "- {line}");
        }
    }
    out
}

/// The grouped bar charts: TPS and p99 per group, at each load.
pub fn charts(report: &SweepReport) -> Result<Vec<Chart>> {
    Ok(vec![
        Chart {
            file_name: "matrix-tps.svg",
            title: "TPS per implementation",
            caption: "Average TPS of each implementation × database (one colour each) at each load; a missing bar is a point skipped or not run.",
            svg: grouped(report, "payments / s (average)", |r| r.tps_avg)?,
        },
        Chart {
            file_name: "matrix-p99.svg",
            title: "p99 latency per implementation",
            caption: "p99 latency of successful payments of each implementation × database at each load (lower is better).",
            svg: grouped(report, "p99 latency (ms)", |r| {
                r.latency.p99_us as f64 / 1000.0
            })?,
        },
    ])
}

fn grouped(
    report: &SweepReport,
    y_desc: &str,
    value: impl Fn(&super::sweep::model::PointResults) -> f64,
) -> Result<String> {
    let mut groups: Vec<String> = Vec::new();
    let mut loads: Vec<String> = Vec::new();
    for p in &report.points {
        let (g, l) = (group_of(p), load_of(p));
        if !groups.contains(&g) {
            groups.push(g);
        }
        if !loads.contains(&l) {
            loads.push(l);
        }
    }
    let bars: Vec<(usize, usize, f64)> = (report.points.iter())
        .filter(|p| matches!(p.status, PointStatus::Done | PointStatus::Partial))
        .filter_map(|p| {
            let r = p.results.as_ref()?;
            let gi = groups.iter().position(|g| *g == group_of(p))?;
            let li = loads.iter().position(|l| *l == load_of(p))?;
            Some((gi, li, value(r)))
        })
        .filter(|(_, _, v)| v.is_finite())
        .collect();
    let y_max = bars.iter().map(|b| b.2).fold(0.0, f64::max);
    let label = |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-9 && i >= 1.0 {
            loads.get(i as usize - 1).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    let axes = Axes {
        x: 0.5..loads.len() as f64 + 0.5,
        // Headroom for the legend, drawn in the upper left.
        y: 0.0..axis_top(y_max * 1.35),
        x_desc: "load",
        y_desc,
        x_label: Some(&label),
        x_labels: Some(loads.len().max(1)),
    };
    let width = 0.8 / groups.len().max(1) as f64;
    canvas(
        &axes,
        Some(SeriesLabelPosition::UpperLeft),
        bars.is_empty().then_some("no point measured"),
        |chart| {
            for (gi, group) in groups.iter().enumerate() {
                let color = RUN_COLORS[gi % RUN_COLORS.len()];
                let rects: Vec<Rectangle<(f64, f64)>> = (bars.iter())
                    .filter(|b| b.0 == gi)
                    .map(|(_, li, v)| {
                        let x0 = *li as f64 + 1.0 - 0.4 + gi as f64 * width;
                        Rectangle::new([(x0, 0.0), (x0 + width * 0.9, *v)], color.filled())
                    })
                    .collect();
                chart
                    .draw_series(rects)
                    .map_err(err)?
                    .label(group.as_str())
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled())
                    });
            }
            Ok(())
        },
    )
}

#[cfg(test)]
mod tests;
