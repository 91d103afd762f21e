//! Differential flame graphs: for each run after the baseline, each node whose CPU was
//! profiled in both runs (same instance name) gets a graph of that run's stacks,
//! coloured by the change of each frame's share against the baseline.

use super::input::Input;
use crate::profile::flame;
use anyhow::{Context, Result};
use std::path::Path;

/// One differential graph, written into the output directory.
pub struct Diff {
    pub id: String,
    pub title: String,
    pub caption: String,
    pub file_name: String,
    /// The SVG as written (with its script); the page inlines it without.
    pub svg: String,
}

/// The folded CPU stacks of `node` in `run`, if it was profiled.
fn folded(run: &Input, node: &str) -> Option<flame::Folded> {
    let p = (run.report.profiling.as_ref()?.profiles.iter())
        .find(|p| p.node == node && p.kind == "cpu")?;
    let file = p.files.iter().find(|f| f.ends_with(".folded"))?;
    // A plain file name in the report's own directory; anything else is not ours.
    if file.contains('/') || file.contains("..") {
        return None;
    }
    let dir = run.path.parent().unwrap_or(Path::new("."));
    let text = super::input::read(&dir.join(file)).ok()?;
    let f = flame::parse_folded(&text);
    (!f.is_empty()).then_some(f)
}

/// Draws and writes (into `out`) the differential graphs of `runs` against the first.
pub fn differentials(runs: &[Input], labels: &[String], out: &Path) -> Result<Vec<Diff>> {
    let Some(base) = runs.first() else {
        return Ok(Vec::new());
    };
    let Some(base_profiles) = &base.report.profiling else {
        return Ok(Vec::new());
    };
    let mut diffs = Vec::new();
    for (i, (run, label)) in runs.iter().zip(labels).enumerate().skip(1) {
        for p in base_profiles.profiles.iter().filter(|p| p.kind == "cpu") {
            let (Some(before), Some(after)) = (folded(base, &p.node), folded(run, &p.node)) else {
                continue;
            };
            let title = format!("{}: {} against {}", p.node, label, labels[0]);
            let svg = flame::render_differential(
                &before,
                &after,
                &title,
                "red: a larger share of CPU than in the baseline, blue: a smaller one",
            )?;
            let file_name = format!("flamegraph-diff-{}-{}.svg", p.node, i + 1);
            crate::report::write_file(out, &file_name, &svg)
                .with_context(|| format!("writing {file_name}"))?;
            diffs.push(Diff {
                id: file_name.trim_end_matches(".svg").to_string(),
                caption: format!(
                    "The shape is {label}'s CPU profile of {}; each frame is coloured by how \
                     its share of the samples changed against {} (shares, so runs of \
                     different lengths compare).",
                    p.node, labels[0]
                ),
                title,
                file_name,
                svg,
            });
        }
    }
    Ok(diffs)
}
