//! payments.csv from a real engine run on fake nodes: a row per counted payment,
//! its outcomes and reasons adding up to the run's counts.

mod common;

use std::collections::BTreeMap;

/// payments.csv: a row per counted payment of a real engine run on fake nodes (some
/// failing), its outcomes and reasons adding up to the report's counts.
#[tokio::test]
async fn payments_csv_has_a_row_per_counted_payment() {
    use lnbench_tui::metrics::{PaymentLog, Recorder, payments};
    use lnbench_tui::node::{FailureReason, fake};
    let run_dir = tempfile::tempdir().unwrap();
    let (recorder, _snapshots) = Recorder::new();
    let streamed = run_dir.path().join(payments::FILE_NAME);
    recorder.log_payments_to(PaymentLog::create(&streamed).unwrap());
    let sender = fake::FakeNode::new(fake::FakeConfig {
        failures: vec![(FailureReason::NoRoute, 0.2)],
        rpc_error_rate: 0.1,
        seed: 7,
        ..fake::FakeConfig::instant("alice")
    });
    let load = lnbench_tui::scenario::Load::Closed { concurrency: 4 };
    let stop = lnbench_tui::scenario::StopCondition {
        payments: Some(3000),
        duration: None,
        liquidity_failures: None,
    };
    let (_commands, rx) = tokio::sync::mpsc::unbounded_channel();
    let cancel = tokio_util::sync::CancellationToken::new();
    let plan = common::fake_plan(sender, load, stop);
    let outcome = lnbench_tui::engine::run(plan, recorder, rx, cancel)
        .await
        .unwrap();
    let results = outcome.summary;
    let log = results.payment_log.as_ref().expect("the run names its log");
    let dir = tempfile::tempdir().unwrap();
    let path = lnbench_tui::report::payments_csv::copy(log, dir.path())
        .unwrap()
        .unwrap();
    let csv = std::fs::read_to_string(path).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some(payments::HEADER));
    let mut reasons: BTreeMap<&str, u64> = BTreeMap::new();
    let (mut ok, mut rows) = (0, 0);
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 14, "{line}");
        // The fake takes the tool's keysend preimage: every row knows its hash.
        assert_eq!(f[12].len(), 64, "{line}");
        assert_eq!(f[13], "", "no row is indeterminate: {line}");
        assert_eq!(
            f[5..10],
            ["alice", "bob", "keysend", "1000", f[9]],
            "{line}"
        );
        let (start, end): (f64, f64) = (f[1].parse().unwrap(), f[2].parse().unwrap());
        assert!(start <= end, "{line}");
        match f[4] {
            "ok" => ok += 1,
            _ => *reasons.entry(f[11]).or_default() += 1,
        }
        assert_eq!(f[3].is_empty(), f[4] == "failed", "{line}");
        rows += 1;
    }
    assert_eq!(rows, results.ok + results.failed);
    assert_eq!(ok, results.ok);
    assert!(results.failed > 0 && results.ok > 0, "{results:?}");
    let counted: BTreeMap<&str, u64> = results
        .failures_by_reason
        .clone()
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .collect();
    assert_eq!(reasons, counted);
}
