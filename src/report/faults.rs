//! The faults section of report.html and summary.md: each fault with TPS and
//! failures before, during and after it, the time to recover and a node's way back;
//! the links of `links:`; and the channels at the end (pending HTLCs, force closes).

use super::Report;
use super::format::cell;
use crate::faults::FaultRecord;
use crate::faults::windows::Window;
use serde::Serialize;
use std::fmt::Write;

/// One row of the faults table, as text.
#[derive(Debug, Serialize)]
pub struct FaultRow {
    pub label: String,
    pub began: String,
    pub ended: String,
    pub before: String,
    pub during: String,
    pub after: String,
    pub recovered: String,
    pub failures: String,
    pub unknown: String,
    pub node_back: String,
    pub error: String,
}

#[derive(Debug, Serialize)]
pub struct FaultsView {
    pub rows: Vec<FaultRow>,
    /// `alice–bob: +15 ms each way`.
    pub links: Vec<String>,
    /// `alice: 4 channels, 4 active, 0 pending HTLCs, 0 force-closed`.
    pub channels: Vec<String>,
}

fn secs(s: Option<f64>) -> String {
    s.map_or("–".into(), |s| format!("{s:.1} s"))
}

fn tps(w: &Option<Window>) -> String {
    w.as_ref().map_or("–".into(), |w| {
        format!("{:.1} ({} ok, {} failed)", w.tps, w.ok, w.failed)
    })
}

fn failures(r: &FaultRecord) -> String {
    let mut by: std::collections::BTreeMap<&str, u64> = Default::default();
    for w in [&r.windows.during, &r.windows.after].into_iter().flatten() {
        for (k, n) in &w.failures_by_reason {
            *by.entry(k.as_str()).or_default() += n;
        }
    }
    if by.is_empty() {
        return "none".into();
    }
    let parts: Vec<String> = by.iter().map(|(k, n)| format!("{k} {n}")).collect();
    parts.join(", ")
}

/// Said beside the recovery when it was measured against the scheduled rate, which
/// `before` ran above (a burst of payments an earlier fault held).
fn scheduled_baseline(w: &crate::faults::windows::FaultWindows) -> String {
    match (w.baseline_tps, &w.before) {
        (Some(b), Some(before)) if b < before.tps - 1e-9 => {
            format!(" (to 90 % of the scheduled {b:.1}/s)")
        }
        _ => String::new(),
    }
}

fn row(r: &FaultRecord) -> FaultRow {
    let w = &r.windows;
    FaultRow {
        label: r.label.clone(),
        began: secs(r.began_s),
        ended: match (r.began_s, r.ended_s) {
            (None, _) => "did not begin".into(),
            (Some(_), None) => "not lifted".into(),
            (Some(_), e) => secs(e),
        },
        before: tps(&w.before),
        during: tps(&w.during),
        after: tps(&w.after),
        recovered: match (w.recovered_after_s, r.ended_s, &w.before) {
            (Some(s), _, _) => format!("{s:.1} s{}", scheduled_baseline(w)),
            (None, Some(_), Some(_)) => format!("not within the load{}", scheduled_baseline(w)),
            (None, Some(_), None) => "no baseline".into(),
            (None, None, _) => "–".into(),
        },
        failures: failures(r),
        unknown: w.unknown_outcome.to_string(),
        node_back: match (r.node_back, r.chain_back) {
            (Some(b), _) => format!("RPC {:.1} s, channels {:.1} s", b.rpc_s, b.channels_s),
            (None, Some(b)) => format!(
                "RPC {:.1} s ({} blocks lost), height {} on every node {:.1} s, channels {:.1} s",
                b.rpc_s, b.lost_blocks, b.height, b.synced_s, b.channels_s
            ),
            (None, None) => "–".into(),
        },
        error: r.error.clone().unwrap_or_default(),
    }
}

/// The section's content; None without links and faults.
pub fn view(report: &Report) -> Option<FaultsView> {
    if report.faults.is_empty() && report.links.is_empty() {
        return None;
    }
    let links = (report.links.iter())
        .map(|l| {
            let mut shape = format!("+{:.0} ms each way", l.latency_ms);
            if l.jitter_ms > 0.0 {
                let _ = write!(shape, " ± {:.0} ms", l.jitter_ms);
            }
            if let Some(kb) = l.bandwidth_kb_s {
                let _ = write!(shape, ", {kb} KB/s");
            }
            format!("{}–{}: {shape}", l.between[0], l.between[1])
        })
        .collect();
    let channels = (report.channel_health.iter())
        .map(|h| match (&h.health, &h.error) {
            (Some(c), _) => format!(
                "{}: {} channels, {} active, {} pending HTLCs, {} force-closed",
                h.node,
                c.channels,
                c.active,
                c.pending_htlcs.map_or("-".to_string(), |n| n.to_string()),
                c.force_closed
            ),
            (None, Some(e)) => format!("{}: not read ({e})", h.node),
            (None, None) => format!("{}: not read (its client cannot tell)", h.node),
        })
        .collect();
    Some(FaultsView {
        rows: report.faults.iter().map(row).collect(),
        links,
        channels,
    })
}

/// The same for summary.md; empty without links and faults.
pub fn markdown(report: &Report) -> String {
    let Some(v) = view(report) else {
        return String::new();
    };
    // Errors quote the nodes: every text is printed as text ([`cell`]).
    let mut out = String::new();
    if !v.links.is_empty() {
        out.push_str("\nLinks (through the fault proxy): ");
        out.push_str(&cell(&v.links.join("; ")));
        out.push('\n');
    }
    if !v.rows.is_empty() {
        out.push_str(
            "\n| fault | began | lifted | TPS before | TPS during | TPS after | recovered after | \
             failed during/after | unknown outcome | node back |\n\
             |---|---|---|---|---|---|---|---|---|---|\n",
        );
        for r in &v.rows {
            let cells = [
                &r.label,
                &r.began,
                &r.ended,
                &r.before,
                &r.during,
                &r.after,
                &r.recovered,
                &r.failures,
                &r.unknown,
                &r.node_back,
            ]
            .map(|c| cell(c));
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        for r in v.rows.iter().filter(|r| !r.error.is_empty()) {
            let _ = writeln!(
                out,
                "\nFault {} went wrong: {}",
                cell(&r.label),
                cell(&r.error)
            );
        }
    }
    if !v.channels.is_empty() {
        out.push_str("\nChannels at the end: ");
        out.push_str(&cell(&v.channels.join("; ")));
        out.push('\n');
    }
    out
}
