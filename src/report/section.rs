//! The shape every workload kind's report section has: report.html shows it under its
//! own heading, summary.md as its own lines. The kinds' sections present in a run, in
//! page order, are `workload_sections.rs`'s list; report.json holds each kind's
//! figures where the model puts them (`results.<kind>`), so a section renders only the
//! page and the summary.

use anyhow::{Context, Result};
use minijinja::{AutoEscape, Environment};
use serde::Serialize;

/// One workload kind's section of a run's report.
pub(super) trait Section {
    /// The id of its `<section>` in report.html (`parts`, `attack`, ...).
    fn id(&self) -> &'static str;
    /// Its heading in report.html.
    fn title(&self) -> &'static str;
    /// What report.html shows under the heading: an HTML fragment, its text escaped.
    fn html(&self) -> Result<String>;
    /// What summary.md shows of it: lines and tables, each after a blank line.
    fn markdown(&self) -> String;
}

/// Renders a section's own template with `figures`, every value escaped as HTML (by
/// minijinja, as the page itself is), so a section never escapes by hand.
pub(super) fn html(id: &str, template: &str, figures: impl Serialize) -> Result<String> {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    // A fragment ends where its last line does, as it would inline in the page.
    env.set_keep_trailing_newline(true);
    env.render_str(template, figures)
        .with_context(|| format!("rendering report.html's {id} section"))
}
