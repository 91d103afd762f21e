//! The profiles section of report.html and summary.md: a flame graph per profiled
//! node (inline SVG, also a file), its top functions by self time, the nodes that
//! were not profiled and why, and what profiling cost the run.

use super::Report;
use super::format::cell;
use crate::profile::{ProfileReport, ProfilingReport, flame};
use serde::Serialize;
use std::fmt::Write;

/// Functions listed per profile in summary.md (report.html lists more).
const MARKDOWN_ROWS: usize = 10;

/// The section as the HTML template lays it out.
#[derive(Serialize)]
pub struct ProfilesView {
    pub window: String,
    pub overhead: String,
    pub graphs: Vec<GraphView>,
    /// `(node, kind, why)` of each profile not taken.
    pub missing: Vec<(String, String, String)>,
}

#[derive(Serialize)]
pub struct GraphView {
    pub id: String,
    pub title: String,
    pub caption: String,
    pub files: String,
    pub svg: minijinja::Value,
    /// `(function, self %, total %)`.
    pub top: Vec<(String, String, String)>,
}

fn title(p: &ProfileReport) -> String {
    let what = match p.kind.as_str() {
        "heap" => "memory in use at the end of the load",
        _ => "CPU",
    };
    format!("{} ({}): {what}, {}", p.node, p.implementation, p.profiler)
}

/// What the profilers cost this run, in words.
pub fn overhead(p: &ProfilingReport) -> String {
    match (p.tps_in_window, p.tps_after_window) {
        (Some(inside), Some(after)) if after > 0.0 => format!(
            "{inside:.1} payments/s while profiling against {after:.1} payments/s after it \
             ({:+.1} %); {}",
            (inside / after - 1.0) * 100.0,
            crate::profile::MEASURED_OVERHEAD
        ),
        _ => format!(
            "not measurable on this run (the load has no full second after the window); {}",
            crate::profile::MEASURED_OVERHEAD
        ),
    }
}

fn window(p: &ProfilingReport) -> String {
    format!(
        "CPU profiles from {:.0} s into the load for {:.0} s",
        p.start_s, p.seconds
    )
}

fn pct(v: f64) -> String {
    format!("{v:.1} %")
}

pub fn view(report: &Report) -> Option<ProfilesView> {
    let p = report.profiling.as_ref()?;
    let graphs = (p.profiles.iter())
        .filter_map(|g| {
            let svg = g.svg.as_ref()?;
            Some(GraphView {
                id: format!("flamegraph-{}-{}", g.node, g.kind),
                title: title(g),
                caption: caption(g),
                files: g.files.join(", "),
                svg: minijinja::Value::from_safe_string(flame::inline_svg(svg)),
                top: (g.top_functions.iter())
                    .map(|t| (t.function.clone(), pct(t.self_pct), pct(t.total_pct)))
                    .collect(),
            })
        })
        .collect();
    let missing = (p.profiles.iter())
        .filter_map(|g| {
            let why = g.not_profiled.clone()?;
            Some((g.node.clone(), g.kind.clone(), why))
        })
        .collect();
    Some(ProfilesView {
        window: window(p),
        overhead: overhead(p),
        graphs,
        missing,
    })
}

fn caption(g: &ProfileReport) -> String {
    let total = match g.unit.as_str() {
        "nanoseconds" => format!("{:.2} CPU seconds sampled", g.total as f64 / 1e9),
        "bytes" => format!("{} in use", super::format::bytes(g.total)),
        unit => format!("{} {unit}", g.total),
    };
    let text = match (g.start_s, g.seconds) {
        (Some(start), Some(secs)) => {
            format!("{total} over {secs:.1} s, from {start:.1} s into the load.")
        }
        _ => format!("{total}."),
    };
    match &g.note {
        Some(note) => format!("{text} Note: {note}."),
        None => text,
    }
}

/// The profiles in summary.md: the top functions by self time per CPU profile.
pub fn markdown(report: &Report) -> String {
    let Some(p) = &report.profiling else {
        return String::new();
    };
    let mut out = format!("\n### Profiles\n\n{}; {}.\n", window(p), overhead(p));
    for g in &p.profiles {
        if let Some(why) = &g.not_profiled {
            let _ = writeln!(
                out,
                "\n{} {}: not profiled ({}).",
                cell(&g.node),
                cell(&g.kind),
                cell(why)
            );
            continue;
        }
        if g.kind != "cpu" {
            continue;
        }
        let _ = writeln!(
            out,
            "\n{} (flame graph: `{}`){}\n\n| function | self | total |\n|---|---|---|",
            cell(&title(g)),
            g.files.last().map_or("", String::as_str).replace('`', "'"),
            g.note
                .as_ref()
                .map_or(String::new(), |n| format!(". Note: {}", cell(n)))
        );
        for t in g.top_functions.iter().take(MARKDOWN_ROWS) {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} |",
                t.function
                    .replace('|', "\\|")
                    .replace('`', "'")
                    .replace(['\n', '\r'], " "),
                pct(t.self_pct),
                pct(t.total_pct)
            );
        }
    }
    out
}
