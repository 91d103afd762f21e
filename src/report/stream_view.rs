//! The stream section of report.html and summary.md (`kind: stream`): ticks by
//! outcome, and each recipient's share and splits.

use super::Report;
use super::format::cell;
use serde::Serialize;
use std::fmt::Write;

const COLUMNS: &str = "| recipient | share of a tick | splits ok | failed | indeterminate | records received |\n\
                       |---|---|---|---|---|---|\n";

#[derive(Serialize)]
pub(super) struct StreamView {
    /// One line on the ticks and the splits.
    ticks: String,
    /// Recipient, share, ok, failed (with reasons), indeterminate, records received.
    recipients: Vec<[String; 6]>,
}

/// The section's figures, or None for a run that is not a stream.
pub(super) fn view(report: &Report) -> Option<StreamView> {
    let s = report.results.stream.as_ref()?;
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
    Some(StreamView { ticks, recipients })
}

/// `summary.md`'s stream section: the ticks line and the recipients' table.
pub(super) fn markdown(report: &Report) -> String {
    let Some(view) = view(report) else {
        return String::new();
    };
    let mut out = format!("\nStream: {}\n\n{COLUMNS}", cell(&view.ticks));
    for r in &view.recipients {
        let cells: Vec<String> = r.iter().map(|c| cell(c)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out
}
