//! The network section of report.html: the graph (node colour = CPU), TPS and
//! latency by route length and per sender, and a per-node table that sorts by a
//! column without script (one radio button per order; CSS shows the chosen copy).

use super::Report;
use super::network::{GroupFigures, NetworkReport, graph_svg};
use std::fmt::Write as _;

/// One row of the per-node table.
struct NodeRow<'a> {
    name: &'a str,
    degree: usize,
    sent: Option<&'a GroupFigures>,
    cpu: Option<f64>,
    mem: Option<u64>,
}

/// The orders the per-node table can be shown in: id, label.
const ORDERS: [(&str, &str); 5] = [
    ("name", "name"),
    ("cpu", "CPU avg"),
    ("mem", "memory peak"),
    ("tps", "TPS sent"),
    ("p99", "p99 sent"),
];

/// The section's HTML, or None for a run that is not a network run.
pub fn section(report: &Report) -> Option<String> {
    let network = report.network.as_ref()?;
    let node = |name: &str| report.nodes.iter().find(|n| n.name == name);
    let cpu = |name: &str| node(name).and_then(|n| n.resources.cpu_pct_avg);
    let mut html = String::from("<section id=\"network\">\n<h2>Network</h2>\n");
    let _ = writeln!(
        html,
        "<p>{} nodes, {} channels over {} links, {} senders. Setup from nothing to routes ready: <strong>{:.1} s</strong>. \
         Route lengths: {} from the paying node's answer (successful payments), {} from the shortest path in the generated graph (failed payments, and nodes that do not say, such as Core Lightning).</p>",
        network.nodes.len(),
        network.channels,
        network.edges.len(),
        network.senders_count,
        network.setup_s,
        network.route_length_from_node,
        network.route_length_from_graph
    );
    html.push_str("<figure>");
    html.push_str(&graph_svg(network, &cpu));
    html.push_str("<figcaption>Nodes on a circle, links between them; colour is each node's average CPU during the load (pale: idle, dark red: the busiest).</figcaption></figure>\n");
    html.push_str("<h3>By route length</h3>\n");
    html.push_str(&groups_table("channels", &network.by_route_length));
    html.push_str("<h3>Per node</h3>\n");
    html.push_str(&node_table(network, report));
    html.push_str("</section>\n");
    Some(html)
}

fn ms(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.1} ms"))
}

fn groups_table(what: &str, groups: &[GroupFigures]) -> String {
    let mut t = format!(
        "<table>\n<tr><th>{what}</th><th>ok</th><th>failed</th><th>indeterminate</th><th>TPS</th><th>p50</th><th>p99</th><th>failures</th></tr>\n"
    );
    for g in groups {
        let failures: Vec<String> = (g.failures_by_reason.iter())
            .map(|(r, n)| format!("{r} {n}"))
            .collect();
        let group = if g.group == "0" { "unknown" } else { &g.group };
        let _ = writeln!(
            t,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.2}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            escape(group),
            g.ok,
            g.failed,
            g.indeterminate,
            g.tps,
            ms(g.p50_ms),
            ms(g.p99_ms),
            escape(&failures.join(", "))
        );
    }
    t.push_str("</table>\n");
    t
}

fn node_table(network: &NetworkReport, report: &Report) -> String {
    let rows: Vec<NodeRow> = (network.nodes.iter().enumerate())
        .map(|(i, name)| {
            let n = report.nodes.iter().find(|n| &n.name == name);
            NodeRow {
                name,
                degree: (network.edges.iter())
                    .filter(|(a, b)| *a == i || *b == i)
                    .count(),
                sent: network.per_sender.iter().find(|g| &g.group == name),
                cpu: n.and_then(|n| n.resources.cpu_pct_avg),
                mem: n.and_then(|n| n.resources.mem_bytes_peak),
            }
        })
        .collect();
    let mut html = String::from("<div class=\"sortable\">\n<span>Sort by:</span> ");
    for (i, (id, label)) in ORDERS.iter().enumerate() {
        let checked = if i == 0 { " checked" } else { "" };
        let _ = write!(
            html,
            "<input type=\"radio\" name=\"node-order\" id=\"order-{id}\"{checked}><label for=\"order-{id}\">{label}</label> "
        );
    }
    html.push('\n');
    for (id, _) in ORDERS {
        let mut sorted: Vec<&NodeRow> = rows.iter().collect();
        let desc = |v: Option<f64>| std::cmp::Reverse(v.map(|v| (v * 1000.0) as i64));
        match id {
            "cpu" => sorted.sort_by_key(|r| desc(r.cpu)),
            "mem" => sorted.sort_by_key(|r| desc(r.mem.map(|m| m as f64))),
            "tps" => sorted.sort_by_key(|r| desc(r.sent.map(|g| g.tps))),
            "p99" => sorted.sort_by_key(|r| desc(r.sent.and_then(|g| g.p99_ms))),
            _ => {}
        }
        let _ = writeln!(
            html,
            "<table class=\"by-{id}\">\n<tr><th>node</th><th>links</th><th>sent ok</th><th>failed</th><th>indeterminate</th><th>TPS</th><th>p50</th><th>p99</th><th>CPU avg</th><th>memory peak</th></tr>"
        );
        for r in sorted {
            let (ok, failed, indeterminate, tps, p50, p99) = match r.sent {
                Some(g) => (
                    g.ok.to_string(),
                    g.failed.to_string(),
                    g.indeterminate.to_string(),
                    format!("{:.2}", g.tps),
                    ms(g.p50_ms),
                    ms(g.p99_ms),
                ),
                None => {
                    let dash = || "-".to_string();
                    (dash(), dash(), dash(), dash(), dash(), dash())
                }
            };
            let _ = writeln!(
                html,
                "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{ok}</td><td class=\"num\">{failed}</td><td class=\"num\">{indeterminate}</td><td class=\"num\">{tps}</td><td class=\"num\">{p50}</td><td class=\"num\">{p99}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                escape(r.name),
                r.degree,
                r.cpu.map_or("-".into(), |c| format!("{c:.1}%")),
                r.mem
                    .map_or("-".into(), |m| format!("{:.1} MB", m as f64 / 1e6)),
            );
        }
        html.push_str("</table>\n");
    }
    html.push_str("</div>\n");
    html
}

/// Text for HTML or SVG (minijinja's escaping, as the templates').
fn escape(s: &str) -> String {
    minijinja::HtmlEscape(s).to_string()
}
