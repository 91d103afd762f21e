//! The report's sections for multi-part payments (`results.parts`) and draining
//! channels (`results.drain`), formatted for the HTML report and `summary.md`.

use super::Report;
use super::format::cell;
use super::format::latency_us;
use crate::metrics::parts::{DrainSummary, PartsSummary};
use crate::metrics::rebalance::RebalanceSummary;
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
        Some(s) => format!("the first liquidity failure came at {s:.1} s on the charts' clock"),
        None => "no payment failed for lack of liquidity".to_string(),
    };
    format!(
        "{first}; {} liquidity failures (no_route, insufficient_balance) of the {} that stop \
         the load. The success rate over time is in the TPS chart and the series.",
        drain.liquidity_failures, drain.stop_after
    )
}

/// The rebalancing's lines: what it moved and what it cost.
pub fn rebalance_lines(r: &RebalanceSummary) -> Vec<String> {
    let when = match r.below_sat {
        Some(below) => format!(
            ", while its balance toward {} was below {below} sat",
            r.last_hop
        ),
        None => String::new(),
    };
    let failed: u64 = r.failed_by_reason.values().sum();
    let reasons: Vec<String> = (r.failed_by_reason.iter())
        .map(|(why, n)| format!("{why} {n}"))
        .collect();
    let failed = match failed {
        0 => "none failed".to_string(),
        n => format!("{n} failed ({})", reasons.join(", ")),
    };
    let cost = match r.fee_ppm {
        Some(ppm) => format!(
            "moving {} sat for {} msat in fees ({ppm:.1} ppm)",
            r.moved_msat / 1_000,
            r.fees_paid_msat
        ),
        None => "moving nothing".to_string(),
    };
    let mut lines = vec![format!(
        "{node} paid itself {sent} times around {node} -> {first} -> ... -> {last} -> {node}, \
         {amount} sat each, due every {every} s{when}: {ok} succeeded, {cost}; {failed}; \
         {errors} calls unanswered.",
        node = r.node,
        sent = r.sent,
        first = r.first_hop,
        last = r.last_hop,
        amount = r.amount_msat / 1_000,
        every = r.every_s,
        ok = r.succeeded,
        errors = r.errors,
    )];
    if r.skipped > 0 {
        lines.push(format!(
            "{} of {} ticks paid nothing: the balance toward {} was not below the threshold \
             (or could not be read).",
            r.skipped, r.ticks, r.last_hop
        ));
    }
    lines.push(format!(
        "These payments are not in the load's figures, and the reconciliation takes them out of \
         {}'s ledger; each is listed in report.json (results.rebalance.tries).",
        r.node
    ));
    lines
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
    if let Some(r) = &report.results.rebalance {
        for line in rebalance_lines(r) {
            let _ = writeln!(out, "\nRebalancing: {}", cell(&line));
        }
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
            d.starts_with("the first liquidity failure came at 12.3 s on the charts' clock"),
            "{d}"
        );
    }
    #[test]
    fn the_rebalancing_reads_as_what_it_moved_and_cost() {
        use crate::metrics::rebalance::RebalanceStats;
        use crate::metrics::rebalance::TryResult::{Failed, Succeeded};
        use std::time::Duration;
        let s = Duration::from_secs;
        let stats = RebalanceStats::new(
            ("alice", "carol", "bob"),
            500_000_000,
            s(10),
            Some(1_000_000),
            500_000,
        );
        stats.tick(true);
        for (at, result) in [
            (10, Succeeded { fee_msat: 3_000 }),
            (20, Failed("no_route")),
        ] {
            stats.tick(false);
            stats.record(s(at), s(1), Some(900_000), result);
        }
        let l = rebalance_lines(&stats.summary());
        assert!(l[0].starts_with("alice paid itself 2 times around alice -> carol -> ... -> bob -> alice, 500000 sat each, due every 10 s, while its balance toward bob was below 1000000 sat: 1 succeeded, moving 500000 sat for 3000 msat in fees (6.0 ppm); 1 failed (no_route 1); 0 calls unanswered."), "{l:?}");
        assert!(l[1].starts_with("1 of 3 ticks paid nothing"), "{l:?}");
        assert!(l[2].contains("takes them out of alice's ledger"), "{l:?}");
    }
}
