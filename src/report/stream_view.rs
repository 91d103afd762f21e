//! The stream section of report.html and summary.md (`kind: stream`): ticks by
//! outcome, and each recipient's share and splits.

use super::format::cell;
use super::section::{self, Section};
use crate::metrics::Summary;
use crate::metrics::stream::StreamSummary;
use serde::Serialize;
use std::fmt::Write;

const COLUMNS: &str = "| recipient | share of a tick | splits ok | failed | indeterminate | records received |\n\
                       |---|---|---|---|---|---|\n";

const HTML: &str = r#"<p>{{ ticks }}</p>
<p class="muted">A tick pays each recipient its share by keysend with the podcast record (TLV 7629169); it is ok only when every split succeeded. Records received: the keysends with the record that the recipient's node reports settled during the load, warm-up included (-: its client cannot read them).</p>
<table>
<tr><th>recipient</th><th>share of a tick</th><th>splits ok</th><th>failed</th><th>indeterminate</th><th>records received</th></tr>
{% for row in recipients %}<tr>{% for c in row %}<td>{{ c }}</td>{% endfor %}</tr>
{% endfor %}</table>
"#;

/// The section's figures, formatted.
#[derive(Serialize)]
struct StreamView {
    /// One line on the ticks and the splits.
    ticks: String,
    /// Recipient, share, ok, failed (with reasons), indeterminate, records received.
    recipients: Vec<[String; 6]>,
}

/// The section, or None for a run that is not a stream.
pub(super) fn section(results: &Summary) -> Option<Box<dyn Section>> {
    let s = results.stream.as_ref()?;
    Some(Box::new(view(s)))
}

fn view(s: &StreamSummary) -> StreamView {
    let ticks = format!(
        "{} ticks: {} ok (every split paid), {} partial, {} failed, {} indeterminate; {} of {} splits paid.",
        s.ticks,
        s.ticks_ok,
        s.ticks_partial,
        s.ticks_failed,
        s.ticks_indeterminate,
        s.splits_ok,
        s.splits
    );
    let recipients = (s.recipients.iter())
        .map(|r| {
            let reasons: Vec<String> = (r.failures_by_reason.iter())
                .map(|(reason, n)| format!("{reason} {n}"))
                .collect();
            let failed = match reasons.is_empty() {
                true => r.failed.to_string(),
                false => format!("{} ({})", r.failed, reasons.join(", ")),
            };
            [
                r.recipient.clone(),
                format!("{} msat", r.amount_msat),
                r.ok.to_string(),
                failed,
                r.indeterminate.to_string(),
                r.records_received.map_or("-".into(), |n| n.to_string()),
            ]
        })
        .collect();
    StreamView { ticks, recipients }
}

impl Section for StreamView {
    fn id(&self) -> &'static str {
        "stream"
    }

    fn title(&self) -> &'static str {
        "Stream"
    }

    fn html(&self) -> anyhow::Result<String> {
        section::html(self.id(), HTML, self)
    }

    /// The ticks line and the recipients' table.
    fn markdown(&self) -> String {
        let mut out = format!("\nStream: {}\n\n{COLUMNS}", cell(&self.ticks));
        for r in &self.recipients {
            let cells: Vec<String> = r.iter().map(|c| cell(c)).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        out
    }
}
