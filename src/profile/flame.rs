//! Folded stacks -> flame graph SVG (the `inferno` crate), the top functions by self
//! time, and the differential graph of two runs.

use anyhow::{Context, Result};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// Folded stacks: `root;...;leaf` -> samples (or bytes, for a heap profile).
pub type Folded = HashMap<String, u64>;

/// A frame name made safe for the folded format (no `;`, no line breaks) and short
/// enough to read: Go's long argument lists and C++ parameter lists stay.
pub fn clean_frame(name: &str) -> String {
    let name = name.trim();
    if name.is_empty() {
        return "?".into();
    }
    name.replace([';', '\n', '\r'], ":")
}

/// The folded stacks as text, one `stack count` a line, sorted (the same input
/// always gives the same file).
pub fn folded_text(folded: &Folded) -> String {
    let mut lines: Vec<String> = folded.iter().map(|(s, n)| format!("{s} {n}")).collect();
    lines.sort();
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// Reads folded text back (`stack count` lines).
pub fn parse_folded(text: &str) -> Folded {
    let mut folded = Folded::new();
    for line in text.lines() {
        if let Some((stack, n)) = line.rsplit_once(' ')
            && let Ok(n) = n.trim().parse::<u64>()
        {
            *folded.entry(stack.to_string()).or_default() += n;
        }
    }
    folded
}

fn options(title: &str, subtitle: &str, count_name: &str) -> inferno::flamegraph::Options<'static> {
    let mut opt = inferno::flamegraph::Options::default();
    opt.title = title.to_string();
    opt.subtitle = Some(subtitle.to_string());
    opt.count_name = count_name.to_string();
    opt.deterministic = true;
    opt.hash = true;
    opt.min_width = 0.2;
    opt
}

/// A flame graph of `folded` as a standalone SVG document.
pub fn render(folded: &Folded, title: &str, subtitle: &str, count_name: &str) -> Result<String> {
    let text = folded_text(folded);
    let mut opt = options(title, subtitle, count_name);
    let mut out = Vec::new();
    inferno::flamegraph::from_lines(&mut opt, text.lines().filter(|l| !l.is_empty()), &mut out)
        .context("drawing the flame graph")?;
    String::from_utf8(out).context("the flame graph is not UTF-8")
}

/// A differential flame graph: the shape of `after`, each frame red where it took a
/// larger share of the samples than in `before`, blue where a smaller one.
pub fn render_differential(
    before: &Folded,
    after: &Folded,
    title: &str,
    subtitle: &str,
) -> Result<String> {
    let (b, a) = (folded_text(before), folded_text(after));
    let mut diff = Vec::new();
    let dopt = inferno::differential::Options {
        normalize: true,
        ..Default::default()
    };
    inferno::differential::from_readers(dopt, b.as_bytes(), a.as_bytes(), &mut diff)
        .context("folding the differential")?;
    let diff = String::from_utf8(diff).context("the differential is not UTF-8")?;
    let mut opt = options(title, subtitle, "samples");
    let mut out = Vec::new();
    inferno::flamegraph::from_lines(&mut opt, diff.lines().filter(|l| !l.is_empty()), &mut out)
        .context("drawing the differential flame graph")?;
    String::from_utf8(out).context("the flame graph is not UTF-8")
}

/// The SVG element alone, to put inline in a page without script: no XML prolog or
/// doctype, no `<script>` element (the file keeps it: click to zoom, search), no
/// `<style>` (it is not scoped to the SVG) and no `onload`; frames keep their
/// `<title>` tooltips.
pub fn inline_svg(svg: &str) -> String {
    let mut s = svg.find("<svg").map_or(svg, |i| &svg[i..]).to_string();
    // Its <style> would apply to the whole page (every chart's text): report.css
    // styles `.flamegraph` figures instead.
    for (open, close) in [("<script", "</script>"), ("<style", "</style>")] {
        while let Some(start) = s.find(open) {
            let end = s[start..]
                .find(close)
                .map_or(s.len(), |e| start + e + close.len());
            s.replace_range(start..end, "");
        }
    }
    for attr in [" onload=\"init(evt)\"", " onclick=\"zoom(this)\""] {
        s = s.replace(attr, "");
    }
    s
}

/// One function's share of a profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopFunction {
    pub function: String,
    /// Share of all samples where it was the running function (the leaf), percent.
    pub self_pct: f64,
    /// Share of all samples where it was anywhere on the stack, percent.
    pub total_pct: f64,
}

/// The `n` functions with the most self time, most first (ties by name).
pub fn top_functions(folded: &Folded, n: usize) -> Vec<TopFunction> {
    let all: u64 = folded.values().sum();
    if all == 0 {
        return Vec::new();
    }
    let mut selfs: HashMap<&str, u64> = HashMap::new();
    let mut totals: HashMap<&str, u64> = HashMap::new();
    for (stack, &count) in folded {
        let frames: Vec<&str> = stack.split(';').collect();
        if let Some(leaf) = frames.last() {
            *selfs.entry(leaf).or_default() += count;
        }
        let mut seen = HashSet::new();
        for f in frames {
            if seen.insert(f) {
                *totals.entry(f).or_default() += count;
            }
        }
    }
    let mut ranked: Vec<(&str, u64)> = selfs.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let pct = |v: u64| v as f64 * 100.0 / all as f64;
    (ranked.into_iter().take(n))
        .map(|(f, s)| TopFunction {
            function: f.to_string(),
            self_pct: pct(s),
            total_pct: pct(totals.get(f).copied().unwrap_or(s)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded() -> Folded {
        Folded::from([
            ("main;route;hash".to_string(), 60),
            ("main;route".to_string(), 10),
            ("main;db;write".to_string(), 30),
        ])
    }

    #[test]
    fn top_functions_rank_by_self_time_and_count_total_once_per_stack() {
        let top = top_functions(&folded(), 2);
        assert_eq!(top[0].function, "hash");
        assert!((top[0].self_pct - 60.0).abs() < 1e-9);
        assert_eq!(top[1].function, "write");
        let all = top_functions(&folded(), 10);
        let route = all.iter().find(|t| t.function == "route").unwrap();
        assert!((route.self_pct - 10.0).abs() < 1e-9);
        assert!((route.total_pct - 70.0).abs() < 1e-9);
        assert!(top_functions(&Folded::new(), 5).is_empty());
    }

    #[test]
    fn flame_graphs_are_svg_without_script_and_name_the_frames() {
        let svg = render(&folded(), "alice", "cpu", "samples").unwrap();
        let inline = inline_svg(&svg);
        assert!(inline.starts_with("<svg"), "{}", &inline[..80]);
        assert!(svg.contains("<script"), "the file keeps its script");
        assert!(
            !inline.contains("<script") && !inline.contains("onload="),
            "{inline}"
        );
        assert!(svg.contains("hash"), "frame names are in the graph");
        let diff = render_differential(
            &folded(),
            &Folded::from([("main;route;hash".to_string(), 5)]),
            "d",
            "x",
        )
        .unwrap();
        assert!(diff.contains("<svg"));
    }

    #[test]
    fn folded_text_round_trips() {
        let f = folded();
        assert_eq!(parse_folded(&folded_text(&f)), f);
        assert_eq!(clean_frame("a;b\nc"), "a:b:c");
    }
}
