//! `history site DIR`: a static site of the runs recorded, without script: an index
//! of scenarios, and per scenario a page with an SVG trend chart per point and metric
//! (TPS, p50, p99, CPU, bytes per payment), one dot per finished load in the order run, labelled by the
//! nodes' versions, each dot a link to that load's report.html.

use super::check::{By, Metric, versions_of};
use super::store::StoredRun;
use anyhow::Result;
use std::fmt::Write;
use std::path::{Component, Path, PathBuf};

pub const INDEX: &str = "index.html";
const METRICS: [Metric; 5] = [
    Metric::Tps,
    Metric::P50,
    Metric::P99,
    Metric::Cpu,
    Metric::BytesPerPayment,
];
const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 220.0;
const PAD: f64 = 48.0;

/// Text safe in HTML and SVG (both as element text and in attributes).
fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// A file name for a scenario's page: its name's letters, digits and dashes.
pub fn page_name(scenario: &str) -> String {
    let slug: String = scenario
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("scenario-{slug}.html")
}

/// `to` relative to the directory `from` (both absolute), with `/` separators.
pub fn relative(from: &Path, to: &Path) -> String {
    let a: Vec<Component> = from.components().collect();
    let b: Vec<Component> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = vec!["..".into(); a.len() - common];
    parts.extend(
        b[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><title>{t}</title>\
         <style>body{{font-family:sans-serif;margin:2em;max-width:60em}}svg{{background:#fafafa}}\
         .dot{{fill:#1f6fb2}}.line{{fill:none;stroke:#1f6fb2}}text{{font-size:11px}}</style>\
         </head><body><h1>{t}</h1>\n{body}</body></html>\n",
        t = esc(title)
    )
}

/// Writes the site into `dir` (created): index.html and one page per scenario.
/// Returns the pages written, the index first.
pub fn write(runs: &[StoredRun], dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let base = std::fs::canonicalize(dir)?;
    let mut scenarios: Vec<&str> = Vec::new();
    for r in runs {
        if !scenarios.contains(&r.run.scenario.as_str()) {
            scenarios.push(&r.run.scenario);
        }
    }
    let mut index = String::from("<ul>\n");
    let mut pages = Vec::new();
    for s in &scenarios {
        let of: Vec<&StoredRun> = runs.iter().filter(|r| r.run.scenario == *s).collect();
        let _ = writeln!(
            index,
            "<li><a href=\"{}\">{}</a>: {} runs</li>",
            esc(&page_name(s)),
            esc(s),
            of.len()
        );
        let html = page(
            &format!("lnbench-tui history: {s}"),
            &scenario_body(&of, &base),
        );
        pages.push(crate::files::write_file(dir, &page_name(s), &html)?);
    }
    index.push_str("</ul>\n");
    if scenarios.is_empty() {
        index = "<p>No run recorded.</p>\n".into();
    }
    let first = crate::files::write_file(dir, INDEX, &page("lnbench-tui history", &index))?;
    pages.insert(0, first);
    Ok(pages)
}

/// One load on a chart: its value, its label, its report's link.
struct Dot {
    value: f64,
    label: String,
    run: i64,
    href: String,
}

fn scenario_body(runs: &[&StoredRun], base: &Path) -> String {
    let mut groups: Vec<&str> = Vec::new();
    for r in runs {
        for p in r.run.points.iter().filter(|p| p.complete) {
            if !groups.contains(&p.group.as_str()) {
                groups.push(&p.group);
            }
        }
    }
    let mut body = String::from("<p><a href=\"index.html\">All scenarios</a></p>\n");
    for g in groups {
        if !g.is_empty() {
            let _ = writeln!(body, "<h2>{}</h2>", esc(g));
        }
        for m in METRICS {
            let dots: Vec<Dot> = runs
                .iter()
                .flat_map(|r| {
                    (r.run.points.iter())
                        .filter(|p| p.complete && p.group == g)
                        .filter_map(move |p| {
                            let report = Path::new(&p.report).with_file_name("report.html");
                            Some(Dot {
                                value: m.value(p)?,
                                label: versions_of(p, By::Version),
                                run: r.id,
                                href: relative(base, &report),
                            })
                        })
                })
                .collect();
            if !dots.is_empty() {
                let _ = writeln!(body, "<h3>{}</h3>\n{}", m.name(), chart(&dots, m));
            }
        }
    }
    body
}

/// A line of dots in run order, the y axis from 0 (or the lowest value, when one is
/// below 0: a node that shrank its files) to the largest value.
fn chart(dots: &[Dot], m: Metric) -> String {
    let top = dots.iter().map(|d| d.value).fold(0.0_f64, f64::max);
    let low = dots.iter().map(|d| d.value).fold(0.0_f64, f64::min);
    let span = (top - low).max(1e-9);
    let step = (WIDTH - 2.0 * PAD) / (dots.len().max(2) - 1) as f64;
    let xy = |i: usize, v: f64| {
        (
            PAD + step * i as f64,
            HEIGHT - PAD - ((v - low) / span) * (HEIGHT - 2.0 * PAD),
        )
    };
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
         role=\"img\" aria-label=\"{} by run\">",
        m.name()
    );
    let _ = write!(
        svg,
        "<text x=\"4\" y=\"{:.0}\">{}</text><text x=\"4\" y=\"{:.0}\">{}</text>",
        PAD,
        esc(&m.text(top)),
        HEIGHT - PAD,
        if low < 0.0 {
            esc(&m.text(low))
        } else {
            "0".into()
        }
    );
    let points: Vec<String> = (dots.iter().enumerate())
        .map(|(i, d)| {
            let (x, y) = xy(i, d.value);
            format!("{x:.1},{y:.1}")
        })
        .collect();
    let _ = write!(
        svg,
        "<polyline class=\"line\" points=\"{}\"/>",
        points.join(" ")
    );
    let mut last_label = "";
    for (i, d) in dots.iter().enumerate() {
        let (x, y) = xy(i, d.value);
        let _ = write!(
            svg,
            "<a href=\"{}\"><circle class=\"dot\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"4\"><title>run {}: {} ({})</title></circle></a>",
            esc(&d.href),
            d.run,
            esc(&m.text(d.value)),
            esc(&d.label)
        );
        if d.label != last_label {
            let _ = write!(
                svg,
                "<text x=\"{x:.1}\" y=\"{:.0}\">{}</text>",
                HEIGHT - PAD / 2.0,
                esc(&d.label)
            );
            last_label = &d.label;
        }
    }
    svg.push_str("</svg>");
    svg
}
