//! `lnbench-tui compare A B [C...] [--out DIR]`: runs side by side. Each input is a
//! report directory or a report.json; the first is the baseline every other run is
//! compared with. Prints the markdown; with `--out`, writes DIR/compare.html
//! (self-contained, like report.html) and DIR/compare.md.

pub mod chart;
pub mod flames;
pub mod input;
pub mod machine;
pub mod repeats;
pub mod sweeps;
pub mod table;

use anyhow::{Context, Result};
use input::Input;
use minijinja::{AutoEscape, Environment};
use serde::Serialize;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use table::{Row, Verdict};

pub const HTML_FILE_NAME: &str = "compare.html";
pub const MARKDOWN_FILE_NAME: &str = "compare.md";

const TEMPLATE: &str = include_str!("../../assets/compare.html");
const CSS: &str = include_str!("../../assets/report.css");

/// Default noise threshold, percent: smaller changes are not flagged.
pub const DEFAULT_NOISE_PCT: f64 = 5.0;

/// What `compare` found; the command line turns it into an exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The comparison was written.
    Written,
    /// The inputs could not be compared (said on stderr).
    BadInput,
}

/// Runs the subcommand. Bad inputs (a missing file, not a report, another schema
/// version, a bad threshold) are reported on stderr and give [`Outcome::BadInput`];
/// failing to write the output is an error.
pub fn run(inputs: &[PathBuf], out: Option<&Path>, noise_pct: f64) -> Result<Outcome> {
    if inputs.len() < 2 {
        crate::lines::errln!(
            "Error: compare needs at least two runs, got {}: `lnbench-tui compare BASELINE OTHER... [--out DIR]`",
            inputs.len()
        );
        return Ok(Outcome::BadInput);
    }
    if !noise_pct.is_finite() || noise_pct < 0.0 {
        crate::lines::errln!(
            "Error: --noise-pct {noise_pct} is not a percentage; give 0 or more, e.g. 5"
        );
        return Ok(Outcome::BadInput);
    }
    // Sweeps (without repeats) are compared point by point.
    let sweeps: Vec<Vec<String>> = inputs
        .iter()
        .map_while(|i| sweeps::point_labels(i))
        .collect();
    if sweeps.len() == inputs.len() {
        return sweeps::run(inputs, &sweeps, out, noise_pct);
    }
    let mut runs = Vec::with_capacity(inputs.len());
    let mut repeated = Vec::with_capacity(inputs.len());
    for arg in inputs {
        let loaded = match repeats::sweep_target(arg) {
            Some((dir, group)) => {
                repeats::load_repeated(&dir, group.as_deref()).map(|(run, r)| (run, Some(r)))
            }
            None => input::load(arg).map(|run| (run, None)),
        };
        match loaded {
            Ok((run, r)) => {
                runs.push(run);
                repeated.push(r);
            }
            Err(e) => {
                crate::lines::errln!("Error: {}", crate::exit::error_chain(&e));
                return Ok(Outcome::BadInput);
            }
        }
    }
    // Inputs first (a bad one writes nothing), then --out, before any output.
    if let Some(out) = out {
        crate::files::check_writable(out, "--out")?;
    }
    let mut comparison = Comparison::of(&runs, noise_pct);
    if let Some(out) = out {
        comparison.flames = flames::differentials(&runs, &comparison.labels, out)?;
    }
    repeats::apply(&mut comparison.rows, &repeated, noise_pct);
    comparison.repeated = repeated.iter().filter(|r| r.is_some()).count();
    comparison.machines = (runs.iter().zip(&repeated))
        .map(|(run, r)| machine::of(run, r.as_ref()))
        .collect();
    let markdown = comparison.markdown();
    if let Some(out) = out {
        crate::report::write_file(out, MARKDOWN_FILE_NAME, &markdown)?;
        let html = comparison.html()?;
        crate::report::write_file(out, HTML_FILE_NAME, &html)?;
    }
    crate::lines::out_text(&markdown);
    Ok(Outcome::Written)
}

/// The runs, labelled, with their table.
pub struct Comparison<'a> {
    pub runs: &'a [Input],
    pub labels: Vec<String>,
    pub noise_pct: f64,
    pub rows: Vec<Row>,
    /// Differential flame graphs of nodes profiled in the baseline and a later run.
    pub flames: Vec<flames::Diff>,
    /// Inputs that are repeated runs (their TPS and latency rows judge noise by test).
    pub repeated: usize,
    /// Each run's machine: quiet or disturbed, and by how much; `None` where the host
    /// was not sampled.
    pub machines: Vec<Option<machine::Machine>>,
}

impl<'a> Comparison<'a> {
    pub fn of(runs: &'a [Input], noise_pct: f64) -> Comparison<'a> {
        let results: Vec<_> = runs.iter().map(|r| &r.report.results).collect();
        Comparison {
            runs,
            labels: labels(runs),
            noise_pct,
            rows: table::rows(&results, noise_pct),
            flames: Vec::new(),
            repeated: 0,
            machines: runs.iter().map(|r| machine::of(r, None)).collect(),
        }
    }

    /// The metrics' rows, and the machine's where any run was sampled.
    fn table(&self) -> Vec<Row> {
        let mut rows = self.rows.clone();
        rows.extend(machine::row(&self.machines));
        rows
    }

    /// Lines worth a reader's attention before trusting the table.
    fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        let kinds: Vec<&str> = self
            .runs
            .iter()
            .map(|r| r.report.workload.kind.as_str())
            .collect();
        if kinds.iter().any(|k| *k != kinds[0]) {
            warnings.push(format!(
                "The runs time different payment kinds ({}): their latencies measure different things.",
                kinds.join(", ")
            ));
        }
        for (run, label) in self.runs.iter().zip(&self.labels) {
            if !run.report.complete {
                warnings.push(format!(
                    "{label} is a partial run: it was cut short, so its figures cover only part of the load."
                ));
            }
        }
        warnings.extend(machine::warnings(&self.machines, &self.labels));
        warnings
    }

    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "**lnbench-tui compare**: {} runs; each Δ column is a run's change against {}, flagged beyond ±{}%.\n",
            self.runs.len(),
            cell(&self.labels[0]),
            self.noise_pct
        );
        if self.repeated > 1 {
            let _ = writeln!(
                out,
                "Repeated runs: TPS and the p50 / p90 / p99 rows show each run's median across its repeats, and their Δ is judged against the repeats' noise (Mann-Whitney U, significant at p < 0.05; ± is the standard error of the difference), and flagged only when it is also beyond ±{}%: two runs differ more than the repeats within one.\n",
                self.noise_pct
            );
        }
        out.push_str("| metric |");
        for label in &self.labels {
            let _ = write!(out, " {} |", cell(label));
        }
        for label in &self.labels[1..] {
            let _ = write!(out, " Δ {} |", cell(label));
        }
        out.push_str("\n|---|");
        out.push_str(&"---:|".repeat(self.labels.len() * 2 - 1));
        out.push('\n');
        for row in &self.table() {
            let _ = write!(out, "| {} |", row.metric);
            for v in &row.values {
                let _ = write!(out, " {v} |");
            }
            for c in &row.changes {
                let _ = write!(out, " {} |", c.text);
            }
            out.push('\n');
        }
        out.push('\n');
        for w in self.warnings() {
            let _ = writeln!(out, "Note: {}\n", cell(&w));
        }
        for (run, label) in self.runs.iter().zip(&self.labels) {
            let _ = writeln!(
                out,
                "- {}: {} ({})",
                cell(label),
                cell(&run.path.display().to_string()),
                cell(&run.report.workload.kind)
            );
        }
        for f in &self.flames {
            let _ = writeln!(
                out,
                "- differential flame graph: {} (`{}`)",
                cell(&f.title),
                f.file_name
            );
        }
        out
    }

    pub fn html(&self) -> Result<String> {
        let lines: Vec<chart::RunLine> = self
            .runs
            .iter()
            .zip(&self.labels)
            .map(|(run, label)| chart::RunLine {
                label,
                series: &run.report.results.series,
            })
            .collect();
        let charts = chart::render_all(&lines)?;
        let table = self.table();
        let view = View {
            css: CSS,
            title: format!("lnbench-tui compare: {}", self.labels.join(" vs ")),
            noise_pct: self.noise_pct,
            baseline: &self.labels[0],
            labels: &self.labels,
            changed_labels: &self.labels[1..],
            repeated: self.repeated > 1,
            rows: table
                .iter()
                .map(|r| RowView {
                    metric: r.metric,
                    values: &r.values,
                    changes: r
                        .changes
                        .iter()
                        .map(|c| {
                            let class = match c.verdict {
                                Some(Verdict::Better) => "pass",
                                Some(Verdict::Worse) => "fail",
                                _ => "",
                            };
                            (c.text.as_str(), class)
                        })
                        .collect(),
                })
                .collect(),
            warnings: self.warnings(),
            runs: self
                .runs
                .iter()
                .zip(&self.labels)
                .enumerate()
                .map(|(i, (run, label))| RunView {
                    label,
                    color: {
                        let c = chart::RUN_COLORS[i % chart::RUN_COLORS.len()];
                        format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
                    },
                    path: run.path.display().to_string(),
                    scenario: &run.report.scenario.name,
                    implementations: implementations(run),
                    kind: &run.report.workload.kind,
                    complete: run.report.complete,
                    machine: (self.machines.get(i).cloned().flatten())
                        .map_or_else(|| "not sampled".into(), |m| m.text()),
                    disturbed: (self.machines.get(i))
                        .is_some_and(|m| m.as_ref().is_some_and(|m| m.disturbed)),
                })
                .collect(),
            charts: charts
                .into_iter()
                .map(|c| ChartView {
                    id: c.id,
                    title: c.title,
                    caption: c.caption,
                    svg: minijinja::Value::from_safe_string(c.svg),
                })
                .collect(),
            tool: format!("{} {}", env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION")),
            flames: (self.flames.iter())
                .map(|f| FlameView {
                    id: &f.id,
                    title: &f.title,
                    caption: &f.caption,
                    file_name: &f.file_name,
                    svg: minijinja::Value::from_safe_string(crate::profile::flame::inline_svg(
                        &f.svg,
                    )),
                })
                .collect(),
        };
        let mut env = Environment::new();
        // Labels and paths come from the inputs; only the SVG plotters drew (which
        // escapes its text) is marked safe.
        env.set_auto_escape_callback(|_| AutoEscape::Html);
        env.add_template(HTML_FILE_NAME, TEMPLATE)
            .context("parsing the compare template")?;
        env.get_template(HTML_FILE_NAME)
            .and_then(|t| t.render(&view))
            .context("rendering compare.html")
    }
}

#[derive(Serialize)]
struct View<'a> {
    css: &'static str,
    title: String,
    noise_pct: f64,
    baseline: &'a str,
    labels: &'a [String],
    changed_labels: &'a [String],
    repeated: bool,
    rows: Vec<RowView<'a>>,
    warnings: Vec<String>,
    runs: Vec<RunView<'a>>,
    charts: Vec<ChartView>,
    tool: String,
    flames: Vec<FlameView<'a>>,
}

#[derive(Serialize)]
struct FlameView<'a> {
    id: &'a str,
    title: &'a str,
    caption: &'a str,
    file_name: &'a str,
    svg: minijinja::Value,
}

#[derive(Serialize)]
struct RowView<'a> {
    metric: &'a str,
    values: &'a [String],
    /// (text, CSS class): `pass` when better, `fail` when worse beyond the noise.
    changes: Vec<(&'a str, &'static str)>,
}

#[derive(Serialize)]
struct RunView<'a> {
    label: &'a str,
    color: String,
    path: String,
    scenario: &'a str,
    implementations: String,
    kind: &'a str,
    complete: bool,
    /// The machine's verdict and outside load, or `not sampled`.
    machine: String,
    disturbed: bool,
}

#[derive(Serialize)]
struct ChartView {
    id: &'static str,
    title: &'static str,
    caption: &'static str,
    svg: minijinja::Value,
}

/// The node implementations of a run, each once: `lnd 0.18.3-beta`.
fn implementations(run: &Input) -> String {
    let mut names: Vec<String> = Vec::new();
    for n in &run.report.nodes {
        let name = format!("{} {}", n.implementation, n.version);
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names.join(", ")
}

/// A label per run: `scenario (implementation version)`, or the directory name when
/// that does not tell the runs apart, numbered if even that does not.
pub fn labels(runs: &[Input]) -> Vec<String> {
    let by_content: Vec<String> = runs
        .iter()
        .map(|r| format!("{} ({})", r.report.scenario.name, implementations(r)))
        .collect();
    if all_distinct(&by_content) {
        return by_content;
    }
    let by_dir: Vec<String> = runs.iter().map(|r| r.dir_name.clone()).collect();
    if all_distinct(&by_dir) {
        return by_dir;
    }
    by_dir
        .iter()
        .enumerate()
        .map(|(i, d)| format!("#{} {d}", i + 1))
        .collect()
}

fn all_distinct(labels: &[String]) -> bool {
    labels
        .iter()
        .enumerate()
        .all(|(i, l)| !labels[..i].contains(l))
}

/// A markdown table cell's text with the characters that would break a row escaped.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::input::*;
    use super::*;

    fn run(scenario: &str, version: &str, dir: &str) -> Input {
        Input {
            path: PathBuf::from(dir).join("report.json"),
            dir_name: dir.into(),
            report: RunReport {
                complete: true,
                scenario: Scenario {
                    name: scenario.into(),
                },
                nodes: vec![Node {
                    implementation: "lnd".into(),
                    version: version.into(),
                }],
                workload: Workload {
                    kind: "keysend".into(),
                },
                profiling: None,
                results: Results {
                    ok: 100,
                    failed: 0,
                    warm_up_excluded: 0,
                    tps_avg: 10.0,
                    latency: Latency {
                        p50_us: 1000,
                        p90_us: 2000,
                        p99_us: 3000,
                        p999_us: 4000,
                        max_us: 5000,
                    },
                    series: Vec::new(),
                    tool_cpu_s: None,
                    machine: None,
                },
            },
        }
    }

    #[test]
    fn labels_use_scenario_and_version_then_dir_then_numbers() {
        let distinct = [run("s", "0.18", "a"), run("s", "0.19", "b")];
        assert_eq!(labels(&distinct), ["s (lnd 0.18)", "s (lnd 0.19)"]);
        let same = [run("s", "0.18", "a"), run("s", "0.18", "b")];
        assert_eq!(labels(&same), ["a", "b"]);
        let same_dir = [run("s", "0.18", "out"), run("s", "0.18", "out")];
        assert_eq!(labels(&same_dir), ["#1 out", "#2 out"]);
    }

    #[test]
    fn markdown_warns_about_different_kinds_and_partial_runs() {
        let mut runs = [run("s", "0.18", "a"), run("s", "0.19", "b")];
        runs[1].report.workload.kind = "invoice".into();
        runs[1].report.complete = false;
        let md = Comparison::of(&runs, 5.0).markdown();
        assert!(
            md.contains("different payment kinds (keysend, invoice)"),
            "{md}"
        );
        assert!(md.contains("s (lnd 0.19) is a partial run"), "{md}");
        let md = Comparison::of(&[run("s", "0.18", "a"), run("s", "0.19", "b")], 5.0).markdown();
        assert!(!md.contains("Note:"), "{md}");
    }
}
