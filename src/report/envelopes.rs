//! The envelope table of report.html and summary.md (`resources:`): each node's (the
//! chain's, a database server's) limits and what the kernel counted against them.

use super::format::cell;
use super::resources::UNKNOWN;
use super::resources_charts::with_resources;
use super::{Report, format};
use serde::Serialize;
use std::fmt::Write;

/// One row, formatted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnvelopeRow {
    pub name: String,
    /// `2 CPUs, 2.0 GiB, CPUs 0-1`.
    pub limits: String,
    pub applied_by: String,
    /// Time held back by the CPU limit, and in how many periods.
    pub throttled: String,
    pub memory_peak: String,
    pub oom_kills: String,
    /// What could not be read (empty when all was).
    pub note: String,
}

/// A row per envelope; empty when the scenario set none.
pub fn rows(report: &Report) -> Vec<EnvelopeRow> {
    let or_unknown = |v: Option<String>| v.unwrap_or_else(|| UNKNOWN.to_string());
    with_resources(report)
        .into_iter()
        .filter_map(|(name, r)| Some((name, r.envelope.as_ref()?)))
        .map(|(name, e)| {
            let limits: Vec<String> = [
                e.cpus.map(|c| format!("{c} CPUs")),
                e.memory_bytes.map(format::bytes),
                e.cpuset.as_ref().map(|c| format!("on CPUs {c}")),
            ]
            .into_iter()
            .flatten()
            .collect();
            let k = &e.kernel;
            let throttled = k.throttled_us.map(|us| {
                let periods = k
                    .throttled_periods
                    .map_or(String::new(), |p| format!(" in {p} periods"));
                format!("{:.2} s{periods}", us as f64 / 1e6)
            });
            EnvelopeRow {
                name: name.to_string(),
                limits: limits.join(", "),
                applied_by: e.applied_by.clone(),
                throttled: or_unknown(throttled),
                memory_peak: or_unknown(k.memory_peak_bytes.map(format::bytes)),
                oom_kills: or_unknown(k.oom_kills.map(|n| n.to_string())),
                note: e.not_available.clone(),
            }
        })
        .collect()
}

/// The table as markdown (with a lead line), or nothing without envelopes.
pub fn markdown(report: &Report) -> String {
    let rows = rows(report);
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\nEnvelopes (`resources:`), as the kernel counted them until the load ended:\n\n\
         | node | limits | applied by | CPU throttled | memory peak | OOM kills |\n\
         |---|---|---|---|---|---|\n",
    );
    for r in &rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            cell(&r.name),
            cell(&r.limits),
            cell(&r.applied_by),
            r.throttled,
            r.memory_peak,
            r.oom_kills
        );
    }
    // Why a counter is missing quotes the kernel or the engine: text, never markdown.
    for r in rows.iter().filter(|r| !r.note.is_empty()) {
        let _ = writeln!(out, "\n{}: not available: {}", cell(&r.name), cell(&r.note));
    }
    out
}
