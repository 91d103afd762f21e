//! The per-node resource table of report.html and summary.md: average and peak CPU,
//! peak memory, data-dir size and growth, and bytes per successful payment.

use super::format::cell;
use super::resources_charts::{signed_bytes, with_resources};
use super::{Report, format};
use serde::Serialize;
use std::fmt::Write;

/// Shown where the runtime could not read a figure.
pub const UNKNOWN: &str = "–";

/// One node's (or the chain's) row, formatted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResourceRow {
    pub name: String,
    pub cpu_avg: String,
    pub cpu_peak: String,
    pub mem_peak: String,
    pub data_dir_end: String,
    pub data_dir_growth: String,
    pub bytes_per_payment: String,
}

/// A row per node and the chain; empty when the runtime read no resources.
pub fn rows(report: &Report) -> Vec<ResourceRow> {
    let all = with_resources(report);
    if all.iter().all(|(_, r)| r.is_empty()) {
        return Vec::new();
    }
    let or_unknown = |v: Option<String>| v.unwrap_or_else(|| UNKNOWN.to_string());
    let pct = |p: f64| format!("{p:.1}%");
    all.into_iter()
        .map(|(name, r)| ResourceRow {
            name: name.to_string(),
            cpu_avg: or_unknown(r.cpu_pct_avg.map(pct)),
            cpu_peak: or_unknown(r.cpu_pct_peak().map(pct)),
            mem_peak: or_unknown(r.mem_bytes_peak.map(format::bytes)),
            data_dir_end: or_unknown(r.data_dir_bytes_end.map(format::bytes)),
            data_dir_growth: or_unknown(r.data_dir_growth().map(|g| {
                let text = signed_bytes(g as f64);
                if g > 0 { format!("+{text}") } else { text }
            })),
            bytes_per_payment: or_unknown(r.bytes_per_payment.map(signed_bytes)),
        })
        .collect()
}

/// The table as markdown (with a heading), or nothing without resources.
pub fn markdown(report: &Report) -> String {
    let rows = rows(report);
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n| node | CPU avg | CPU peak | memory peak | data dir | growth | per payment |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            cell(&r.name),
            r.cpu_avg,
            r.cpu_peak,
            r.mem_peak,
            r.data_dir_end,
            r.data_dir_growth,
            r.bytes_per_payment
        );
    }
    out
}

/// One restarted node's row (`after_load: restart:`), formatted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RestartRow {
    pub name: String,
    pub data_dir: String,
    pub stop: String,
    pub rpc: String,
    pub channels: String,
    pub active_channels: u32,
}

/// A row per restarted node, in report order; empty when none was restarted.
pub fn restart_rows(report: &Report) -> Vec<RestartRow> {
    let secs = |s: f64| format!("{s:.1} s");
    (report.nodes.iter())
        .filter_map(|n| n.restart.as_ref().map(|r| (n, r)))
        .map(|(n, r)| RestartRow {
            name: n.name.clone(),
            data_dir: r
                .data_dir_bytes
                .map_or_else(|| UNKNOWN.to_string(), format::bytes),
            stop: secs(r.stop_s),
            rpc: secs(r.rpc_s),
            channels: secs(r.channels_s),
            active_channels: r.active_channels,
        })
        .collect()
}

/// The tool's own memory over the load: `first / last / peak` RSS, if sampled.
pub fn tool_memory(report: &Report) -> Option<String> {
    let t = report.tool_resources.as_ref()?;
    let mem = |s: Option<&crate::metrics::ResourceSample>| s.and_then(|s| s.mem_bytes);
    let (first, last) = (mem(t.samples.first()), mem(t.samples.last()));
    let show = |b: Option<u64>| b.map_or_else(|| UNKNOWN.to_string(), format::bytes);
    Some(format!(
        "{} / {} / {}",
        show(first),
        show(last),
        show(t.mem_bytes_peak)
    ))
}

/// The restart table and the tool's memory line as markdown, or nothing.
pub fn restart_markdown(report: &Report) -> String {
    let mut out = String::new();
    let rows = restart_rows(report);
    if !rows.is_empty() {
        out.push_str(
            "\n| restarted node | data dir | stop | RPC answers | channels active |\n\
             |---|---|---|---|---|\n",
        );
        for r in rows {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} ({}) |",
                cell(&r.name),
                cell(&r.data_dir),
                r.stop,
                r.rpc,
                r.channels,
                r.active_channels
            );
        }
    }
    if let Some(mem) = tool_memory(report) {
        let _ = writeln!(out, "\nTool RSS first / last / peak: {mem}.");
    }
    out
}
