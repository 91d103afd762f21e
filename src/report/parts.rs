//! The section for multi-part payments (`workload: max_parts:`, `results.parts`) in
//! report.html and summary.md: succeeded payments by the number of parts, and the
//! shares split and retried.

use super::format::cell;
use super::format::latency_us;
use super::section::{self, Section};
use crate::metrics::Summary;
use crate::metrics::parts::PartsSummary;
use serde::Serialize;
use std::fmt::Write;

const HTML: &str = r#"<p class="muted">Succeeded payments by the number of parts they settled in, as the sender's node listed their HTLCs; attempts count failed tries too.</p>
<table>
<tr><th>parts</th><th>payments</th><th>HTLC attempts</th><th>p50</th><th>p99</th></tr>
{% for row in rows %}<tr>{% for c in row %}<td>{{ c }}</td>{% endfor %}</tr>
{% endfor %}</table>
{% for line in lines %}<p>{{ line }}</p>
{% endfor %}"#;

/// The section's figures, formatted.
#[derive(Serialize)]
struct PartsView {
    rows: Vec<[String; 5]>,
    lines: Vec<String>,
}

/// The section, or None for a run whose payments were not split.
pub(super) fn section(results: &Summary) -> Option<Box<dyn Section>> {
    let parts = results.parts.as_ref()?;
    Some(Box::new(PartsView {
        rows: rows(parts),
        lines: lines(parts),
    }))
}

impl Section for PartsView {
    fn id(&self) -> &'static str {
        "parts"
    }

    fn title(&self) -> &'static str {
        "Parts per payment"
    }

    fn html(&self) -> anyhow::Result<String> {
        section::html(self.id(), HTML, self)
    }

    /// The table, then its lines.
    fn markdown(&self) -> String {
        let mut out =
            String::from("\n| parts | payments | attempts | p50 | p99 |\n|---|---|---|---|---|\n");
        for r in &self.rows {
            let _ = writeln!(out, "| {} |", r.join(" | "));
        }
        for line in &self.lines {
            let _ = writeln!(out, "\n{}", cell(line));
        }
        out
    }
}

/// One row per number of parts: parts, payments, attempts, p50, p99.
fn rows(parts: &PartsSummary) -> Vec<[String; 5]> {
    (parts.by_parts.iter())
        .map(|r| {
            [
                r.parts.to_string(),
                r.payments.to_string(),
                r.attempts.to_string(),
                latency_us(r.latency.p50_us),
                latency_us(r.latency.p99_us),
            ]
        })
        .collect()
}

/// The lines under the table: the limit and the shares.
fn lines(parts: &PartsSummary) -> Vec<String> {
    let mut lines = vec![format!(
        "Part limit {}; {} of {} succeeded payments were split in more than one part; {} \
         ({:.1} %) had a part fail and tried again.",
        parts.max_parts,
        parts.multi_part,
        parts.payments,
        parts.retried,
        parts.retried_share * 100.0
    )];
    if parts.unknown > 0 {
        lines.push(format!(
            "{} succeeded payments are not counted here: the node listed no HTLCs for them.",
            parts.unknown
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Percentiles;
    use crate::metrics::parts::PartsRow;

    #[test]
    fn parts_read_as_sentences_and_rows() {
        let latency = Percentiles {
            p50_us: 12_000,
            p99_us: 80_000,
            ..Percentiles::default()
        };
        let parts = PartsSummary {
            max_parts: 8,
            payments: 4,
            unknown: 1,
            more_than_one_attempt: 3,
            more_than_one_attempt_share: 0.75,
            retried: 1,
            retried_share: 0.25,
            multi_part: 2,
            by_parts: vec![PartsRow {
                parts: 2,
                payments: 2,
                attempts: 5,
                latency,
            }],
        };
        let r = rows(&parts);
        assert_eq!(r[0][..3], ["2", "2", "5"]);
        assert_eq!(r[0][3], latency_us(12_000));
        let l = lines(&parts);
        assert!(
            l[0].contains("Part limit 8; 2 of 4") && l[0].contains("1 (25.0 %) had a part fail"),
            "{l:?}"
        );
        assert!(l[1].starts_with("1 succeeded payments"), "{l:?}");
    }
}
