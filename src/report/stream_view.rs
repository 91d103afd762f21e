//! The stream section of report.html (`kind: stream`): ticks by outcome, and each
//! recipient's share and splits.

use super::Report;
use serde::Serialize;

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
