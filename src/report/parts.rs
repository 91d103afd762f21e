//! The report's sections for multi-part payments (`results.parts`) and draining
//! channels (`results.drain`), formatted for the HTML report and `summary.md`.

use super::Report;
use super::format::latency_us;
use super::markdown::cell;
use crate::metrics::parts::{DrainSummary, PartsSummary};
use std::fmt::Write;

/// One row per number of parts: parts, payments, attempts, p50, p99.
pub fn rows(parts: &PartsSummary) -> Vec<[String; 5]> {
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
pub fn lines(parts: &PartsSummary) -> Vec<String> {
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

/// The drain's one line: when the channels first ran dry, and the stop.
pub fn drain_line(drain: &DrainSummary) -> String {
    let first = match drain.first_liquidity_failure_s {
        Some(s) => format!("the first liquidity failure came {s:.1} s into the load"),
        None => "no payment failed for lack of liquidity".to_string(),
    };
    format!(
        "{first}; {} liquidity failures (no_route, insufficient_balance) of the {} that stop \
         the load. The success rate over time is in the TPS chart and the series.",
        drain.liquidity_failures, drain.stop_after
    )
}

/// `summary.md`'s parts table and drain line, each when the run has them.
pub fn markdown(report: &Report) -> String {
    let mut out = String::new();
    if let Some(parts) = &report.results.parts {
        out.push_str("\n| parts | payments | attempts | p50 | p99 |\n|---|---|---|---|---|\n");
        for r in rows(parts) {
            let _ = writeln!(out, "| {} |", r.join(" | "));
        }
        for line in lines(parts) {
            let _ = writeln!(out, "\n{}", cell(&line));
        }
    }
    if let Some(drain) = &report.results.drain {
        let _ = writeln!(out, "\nDrain: {}", cell(&drain_line(drain)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Percentiles;
    use crate::metrics::parts::PartsRow;

    #[test]
    fn parts_and_drain_read_as_sentences_and_rows() {
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
        let d = drain_line(&DrainSummary {
            stop_after: 3,
            liquidity_failures: 3,
            first_liquidity_failure_s: Some(12.34),
        });
        assert!(
            d.starts_with("the first liquidity failure came 12.3 s"),
            "{d}"
        );
    }
}
