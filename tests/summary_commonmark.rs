//! summary.md is meant to be pasted into an issue or a pull request: rendered by a
//! CommonMark renderer with GitHub's tables, each of its tables is a table, none a
//! code block (a table indented after a blank line renders as text in a box).

mod common;

#[path = "report_files/fixture.rs"]
mod fixture;

use lnbench_tui::metrics::{
    Percentiles, PhaseSummary, ResourceLog, ResourceReading, RouteCount, Stage,
};
use lnbench_tui::node::PaymentLedger;
use lnbench_tui::report::{self, reconciliation};
use pulldown_cmark::{Options, Parser, html};
use std::collections::BTreeMap;

/// The fixed run with every table summary.md can have for one point without a special
/// workload: the headline, the phases, the thresholds, the reconciliation against the
/// nodes' ledgers and the nodes' resources.
fn report_with_tables() -> report::Report {
    let mut report = fixture::fixed_report();
    let phase = |phase, ok| PhaseSummary {
        phase,
        active_s: 20.0,
        ok,
        failed: 2,
        tps_avg: ok as f64 / 20.0,
        latency: Percentiles {
            count: ok,
            p50_us: 22_000,
            p99_us: 100_000,
            max_us: 160_000,
            ..Percentiles::default()
        },
    };
    report.results.phases = vec![phase(Stage::Ramp, 1_500), phase(Stage::Hold, 1_680)];
    let routes = [RouteCount {
        sender: "alice".into(),
        receiver: "bob".into(),
        ok: 3_180,
        failed: 4,
        indeterminate: 2,
    }];
    let read = |ledger| reconciliation::LedgerRead::Read(ledger);
    let ledgers = BTreeMap::from([
        (
            "alice".to_string(),
            read(PaymentLedger {
                sent_succeeded: 3_181,
                sent_failed: 5,
                fees_paid_msat: 6_362,
                ..PaymentLedger::default()
            }),
        ),
        (
            "bob".to_string(),
            read(PaymentLedger {
                received: 3_181,
                ..PaymentLedger::default()
            }),
        ),
    ]);
    report.reconciliation = Some(reconciliation::reconcile(
        &routes,
        &ledgers,
        &BTreeMap::new(),
    ));
    // Resources as a runtime reads them: a reading of each node and the chain a second.
    let mut log = ResourceLog::new();
    for t in 0..=10u64 {
        let reading = |name: &str, mib: u64| ResourceReading {
            name: name.into(),
            cpu_pct: Some(50.0),
            mem_bytes: Some(mib * 1024 * 1024),
            data_dir_bytes: Some(mib * 1024 * 1024 + t * 4096),
            ..ResourceReading::default()
        };
        log.record_at(
            t as f64,
            vec![
                reading("alice", 120),
                reading("bob", 80),
                reading("chain", 30),
            ],
        );
    }
    for node in &mut report.nodes {
        node.resources = log.report(&node.name, report.results.ok);
    }
    report.chain.resources = log.report("chain", report.results.ok);
    report
}

/// summary.md as a run writes it, and as HTML from pulldown-cmark with tables on.
fn written_and_rendered(report: &report::Report) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    report::write_all(report, dir.path()).unwrap();
    let md = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    let mut rendered = String::new();
    html::push_html(&mut rendered, Parser::new_ext(&md, Options::ENABLE_TABLES));
    (md, rendered)
}

#[test]
fn every_table_of_summary_md_renders_as_a_table() {
    let (md, rendered) = written_and_rendered(&report_with_tables());
    // Each section's table is there, by a column of its header row.
    for header in [
        "metric",
        "phase",
        "threshold",
        "tool ok / failed / indeterminate",
        "CPU avg",
    ] {
        assert!(
            rendered.contains(&format!("<th>{header}</th>")),
            "no table headed {header:?}:\n{md}\n{rendered}"
        );
    }
    // As many tables as summary.md has delimiter rows, wherever they stand.
    let delimiter_rows = (md.lines())
        .filter(|l| l.trim_start().starts_with("|---"))
        .count();
    assert_eq!(delimiter_rows, 5, "{md}");
    assert_eq!(
        rendered.matches("<table>").count(),
        delimiter_rows,
        "{md}\n{rendered}"
    );
    // summary.md has no code blocks: one would be a table (or a line) indented by
    // mistake, shown as text.
    assert!(!rendered.contains("<pre>"), "{md}\n{rendered}");
}
