//! The report of a network run (`topology:` / `workload: activity:`): setup time,
//! figures per sender and per route length, and the graph drawn as SVG with each
//! node's CPU as its colour.

use crate::engine::activity::{ActivityPlan, Counts};
use crate::metrics::Summary;
use crate::scenario::{Scenario, Shape};
use crate::setup::StepTiming;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

#[derive(Debug, Clone, Serialize)]
pub struct NetworkReport {
    /// The generated graph's shape and the number its generator started from (`seed:`;
    /// not a credential, so not named so). Absent for nodes written out.
    pub shape: Option<Shape>,
    pub generator: Option<u64>,
    pub nodes: Vec<String>,
    /// Links between nodes by index into `nodes` (each carries one or more channels).
    pub edges: Vec<(usize, usize)>,
    pub channels: u32,
    pub senders_count: usize,
    /// From the first setup step to routes ready, seconds.
    pub setup_s: f64,
    /// Route lengths of successful payments come from the paying node's answer
    /// (`from_node`); failed ones, and those of nodes that do not tell (Core
    /// Lightning), from the shortest path in the generated graph (`from_graph`;
    /// group 0 when there is no generated graph).
    pub route_length_from_node: u64,
    pub route_length_from_graph: u64,
    pub per_sender: Vec<GroupFigures>,
    pub by_route_length: Vec<GroupFigures>,
}

/// Payments of one sender or one route length.
#[derive(Debug, Clone, Serialize)]
pub struct GroupFigures {
    /// The sender's name, or the route length in channels (`0`: unknown).
    pub group: String,
    pub ok: u64,
    pub failed: u64,
    /// Timed out, or in flight when the load ended: in neither ok nor failed (the
    /// reconciliation resolves them in the senders' counts).
    pub indeterminate: u64,
    /// Successful payments per second over the timed load.
    pub tps: f64,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub failures_by_reason: BTreeMap<&'static str, u64>,
}

impl GroupFigures {
    fn of(group: String, c: &Counts, seconds: f64) -> GroupFigures {
        let ms = |q: f64| (c.ok > 0).then(|| c.latency.value_at_quantile(q) as f64 / 1000.0);
        GroupFigures {
            group,
            ok: c.ok,
            failed: c.failed,
            indeterminate: c.indeterminate,
            tps: if seconds > 0.0 {
                c.ok as f64 / seconds
            } else {
                0.0
            },
            p50_ms: ms(0.5),
            p99_ms: ms(0.99),
            failures_by_reason: c.failures.clone(),
        }
    }
}

pub fn build(
    scenario: &Scenario,
    activity: &ActivityPlan,
    summary: &Summary,
    setup: &[StepTiming],
) -> NetworkReport {
    let seconds = summary.active_s;
    let (nodes, edges, shape, seed) = match &scenario.topology {
        Some(t) => (
            t.nodes.clone(),
            t.edges.clone(),
            Some(t.shape),
            Some(t.seed),
        ),
        None => {
            let nodes: Vec<String> = scenario.nodes.iter().map(|n| n.name.clone()).collect();
            let at = |name: &str| nodes.iter().position(|n| n == name);
            let mut edges: Vec<(usize, usize)> = (scenario.channels.iter())
                .filter_map(|c| Some((at(&c.from)?, at(&c.to)?)))
                .map(|(a, b)| (a.min(b), a.max(b)))
                .collect();
            edges.sort_unstable();
            edges.dedup();
            (nodes, edges, None, None)
        }
    };
    let (from_node, from_graph) = activity.stats.hops_sources();
    NetworkReport {
        shape,
        generator: seed,
        nodes,
        edges,
        channels: scenario.channels.iter().map(|c| c.count).sum(),
        senders_count: activity.stats.senders.len(),
        setup_s: setup.iter().map(|s| s.seconds).sum(),
        route_length_from_node: from_node,
        route_length_from_graph: from_graph,
        per_sender: (activity.stats.per_sender().iter())
            .map(|(name, c)| GroupFigures::of(name.clone(), c, seconds))
            .collect(),
        by_route_length: (activity.stats.by_hops().iter())
            .map(|(hops, c)| GroupFigures::of(hops.to_string(), c, seconds))
            .collect(),
    }
}

/// The graph as SVG: nodes on a circle, links as lines, each node filled by its
/// average CPU (pale: idle, dark red: the busiest node), its name and CPU beside it.
pub fn graph_svg(network: &NetworkReport, cpu_pct: &dyn Fn(&str) -> Option<f64>) -> String {
    const SIZE: f64 = 560.0;
    let n = network.nodes.len().max(1);
    let radius = SIZE / 2.0 - 60.0;
    let centre = SIZE / 2.0;
    let at = |i: usize| {
        let angle = std::f64::consts::TAU * i as f64 / n as f64 - std::f64::consts::FRAC_PI_2;
        (centre + radius * angle.cos(), centre + radius * angle.sin())
    };
    let cpus: Vec<Option<f64>> = network.nodes.iter().map(|name| cpu_pct(name)).collect();
    let busiest = cpus.iter().flatten().copied().fold(1.0_f64, f64::max);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {SIZE} {SIZE}\" width=\"{SIZE}\" height=\"{SIZE}\" role=\"img\" aria-label=\"network graph, node colour = CPU\">\n"
    );
    for &(a, b) in &network.edges {
        let ((x1, y1), (x2, y2)) = (at(a), at(b));
        let _ = writeln!(
            svg,
            "<line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" stroke=\"#999\" stroke-width=\"1\"/>"
        );
    }
    for (i, name) in network.nodes.iter().enumerate() {
        let (x, y) = at(i);
        let (fill, label) = match cpus[i] {
            Some(cpu) => (heat(cpu / busiest), format!("{name} {cpu:.0}%")),
            None => ("#ddd".to_string(), name.clone()),
        };
        let name = escape(&label);
        let _ = writeln!(
            svg,
            "<g><title>{name}</title><circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"11\" fill=\"{fill}\" stroke=\"#333\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" font-family=\"sans-serif\" text-anchor=\"middle\">{name}</text></g>",
            x + (x - centre) * 0.16,
            y + (y - centre) * 0.16 + 4.0,
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// A colour from pale yellow (0) to dark red (1).
fn heat(share: f64) -> String {
    let s = share.clamp(0.0, 1.0);
    let r = 255.0 - 95.0 * s;
    let g = 240.0 * (1.0 - s);
    let b = 180.0 * (1.0 - s);
    format!("rgb({r:.0},{g:.0},{b:.0})")
}

/// Text for HTML or SVG (minijinja's escaping, as the templates').
fn escape(s: &str) -> String {
    minijinja::HtmlEscape(s).to_string()
}

/// The network section of summary.md.
pub fn markdown(network: &NetworkReport) -> String {
    let mut md = format!(
        "\n## Network\n\n{} nodes, {} channels, {} senders; setup {:.1} s (from nothing to routes ready).\n\
         Route lengths: {} from the paying node, {} from the generated graph.\n\n",
        network.nodes.len(),
        network.channels,
        network.senders_count,
        network.setup_s,
        network.route_length_from_node,
        network.route_length_from_graph,
    );
    md.push_str(
        "| route length | ok | failed | indeterminate | TPS | p50 ms | p99 ms |\n|---|---|---|---|---|---|---|\n",
    );
    for g in &network.by_route_length {
        md.push_str(&row(g));
    }
    md.push_str(
        "\n| sender | ok | failed | indeterminate | TPS | p50 ms | p99 ms |\n|---|---|---|---|---|---|---|\n",
    );
    for g in &network.per_sender {
        md.push_str(&row(g));
    }
    md
}

fn row(g: &GroupFigures) -> String {
    let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
    format!(
        "| {} | {} | {} | {} | {:.2} | {} | {} |\n",
        g.group,
        g.ok,
        g.failed,
        g.indeterminate,
        g.tps,
        ms(g.p50_ms),
        ms(g.p99_ms)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_senders_row_shows_its_indeterminate_payments_apart_from_failures() {
        let g = GroupFigures {
            group: "alice".into(),
            ok: 7,
            failed: 1,
            indeterminate: 2,
            tps: 3.5,
            p50_ms: Some(12.0),
            p99_ms: None,
            failures_by_reason: BTreeMap::from([("no_route", 1)]),
        };
        assert_eq!(row(&g), "| alice | 7 | 1 | 2 | 3.50 | 12.0 | - |\n");
    }
}
