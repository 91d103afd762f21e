//! `compare A B` on sweep directories without repeats (what the quick start writes):
//! their points are matched by label and each matched pair is compared on its own,
//! into `OUT/<label>/`, with an index in `OUT/compare.md` and `OUT/compare.html`
//! (without `--out`, each point's table is printed and nothing written).

use super::{Outcome, repeats};
use anyhow::Result;
use serde::Deserialize;
use std::path::{Component, Path, PathBuf};

#[derive(Deserialize)]
struct SweepPoints {
    #[serde(default)]
    points: Vec<Point>,
    #[serde(default)]
    spread: Vec<serde_json::Value>,
}

#[derive(Deserialize)]
struct Point {
    label: String,
}

/// The labels of the points with a report, when `arg` is a sweep directory whose
/// points were not repeated; `None` for anything else (a repeated sweep is compared
/// by its repeats, a run by its report).
pub fn point_labels(arg: &Path) -> Option<Vec<String>> {
    let (dir, None) = repeats::sweep_target(arg)? else {
        return None;
    };
    let path = dir.join(crate::report::sweep::JSON_FILE);
    let text = super::input::read(&path).ok()?;
    let sweep: SweepPoints = serde_json::from_str(&text).ok()?;
    if !sweep.spread.is_empty() {
        return None;
    }
    // A label names a folder of the sweep: one plain path component, nothing else.
    let plain = |l: &str| {
        matches!(
            Path::new(l).components().collect::<Vec<_>>()[..],
            [Component::Normal(_)]
        )
    };
    Some(
        (sweep.points.into_iter().map(|p| p.label))
            .filter(|l| plain(l) && dir.join(l).join(crate::report::json::FILE_NAME).is_file())
            .collect(),
    )
}

/// Compares the sweeps in `dirs` point by point (`labels[i]` are those of `dirs[i]`);
/// points that are not in every sweep are listed, not compared.
pub fn run(
    dirs: &[PathBuf],
    labels: &[Vec<String>],
    out: Option<&Path>,
    noise_pct: f64,
) -> Result<Outcome> {
    let in_all = |l: &String| labels.iter().all(|ls| ls.contains(l));
    let common: Vec<&String> = labels[0].iter().filter(|l| in_all(l)).collect();
    if common.is_empty() {
        let held: Vec<String> = (dirs.iter().zip(labels))
            .map(|(d, l)| {
                format!(
                    "{} has {}",
                    d.display(),
                    if l.is_empty() {
                        "no point with a report".into()
                    } else {
                        l.join(", ")
                    }
                )
            })
            .collect();
        crate::lines::errln!(
            "Error: these sweeps have no point in common ({}); compare sweeps over the same \
             values, or give one point's folder of each (DIR/<label>)",
            held.join("; ")
        );
        return Ok(Outcome::BadInput);
    }
    if let Some(out) = out {
        crate::files::check_writable(out, "--out")?;
    }
    let mut index = String::from("# Sweeps compared point by point\n\n");
    for label in &common {
        let points: Vec<PathBuf> = dirs.iter().map(|d| d.join(label)).collect();
        crate::lines::outln!("## {label}\n");
        let point_out = out.map(|o| o.join(label));
        if super::run(&points, point_out.as_deref(), noise_pct)? == Outcome::BadInput {
            return Ok(Outcome::BadInput);
        }
        crate::lines::outln!("");
        index.push_str(&format!("- [{label}]({label}/compare.md)\n"));
    }
    let mut unmatched: Vec<&String> = labels.iter().flatten().filter(|l| !in_all(l)).collect();
    unmatched.sort();
    unmatched.dedup();
    if !unmatched.is_empty() {
        let list = unmatched
            .iter()
            .map(|l| l.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        index.push_str(&format!("\nNot in every sweep, so not compared: {list}\n"));
        crate::lines::outln!("not in every sweep, so not compared: {list}");
    }
    if let Some(out) = out {
        crate::report::write_file(out, super::MARKDOWN_FILE_NAME, &index)?;
        let html = index_html(dirs, &common, &unmatched)?;
        crate::report::write_file(out, super::HTML_FILE_NAME, &html)?;
    }
    Ok(Outcome::Written)
}

/// `OUT/compare.html` of sweeps: the sweeps compared, a link to each point's
/// comparison, and the points not in every sweep.
fn index_html(dirs: &[PathBuf], common: &[&String], unmatched: &[&String]) -> Result<String> {
    const PAGE: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>lnbench-tui: sweeps compared point by point</title>
<style>
{{ css|safe }}
</style>
</head>
<body>
<h1>Sweeps compared point by point</h1>
<p>Baseline first: {% for d in dirs %}<code>{{ d }}</code>{% if not loop.last %}, {% endif %}{% endfor %}.</p>
<ul id="points">
{% for label in common %}<li><a href="{{ label|urlencode }}/compare.html">{{ label }}</a></li>
{% endfor %}</ul>
{% if unmatched %}<p id="unmatched">Not in every sweep, so not compared: {{ unmatched|join(", ") }}</p>{% endif %}
</body>
</html>
"#;
    let mut env = minijinja::Environment::new();
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
    env.add_template("index", PAGE)?;
    let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    Ok(env.get_template("index")?.render(minijinja::context! {
        css => super::CSS,
        dirs => dirs,
        common => common,
        unmatched => unmatched,
    })?)
}
