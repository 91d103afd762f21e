//! Reconciliation on the fake runtime: the fake nodes keep ledgers of their own, a
//! payment abandoned by the tool runs on at the node, and a node can be told to lose
//! payments it received.

use super::*;
use crate::node::fake::FEE_MSAT;

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[tokio::test]
async fn the_nodes_ledgers_agree_with_the_tools_counts() {
    let dirs = Dirs::new();
    let runtimes = fakes(|_| Ok(quick()));
    let s = scenario("thresholds:\n  max_mismatches: 0\n");
    let exit = execute_with(s, &dirs.opts, &runtimes, Signals::manual())
        .await
        .unwrap();
    assert_eq!(exit, Exit::Ok);
    let report = dirs.report("");
    let r = &report["reconciliation"];
    assert_eq!(u(&r["mismatches"]), 0, "{r}");
    assert_eq!(u(&r["indeterminate"]), 0, "{r}");
    let (sender, receiver) = (&r["senders"][0], &r["receivers"][0]);
    assert_eq!(
        (sender["node"].as_str(), receiver["node"].as_str()),
        (Some("alice"), Some("bob"))
    );
    assert_eq!(u(&sender["tool_ok"]), 40);
    assert_eq!(u(&sender["node_succeeded"]), 40);
    assert_eq!(u(&receiver["node_received"]), 40);
    assert_eq!(u(&receiver["received_msat"]), 40 * 1000);
    assert_eq!(u(&r["fees_paid_msat"]), 40 * FEE_MSAT);
    assert_eq!(u(&report["results"]["mismatches"]), 0);
    let threshold = &report["thresholds"][0];
    assert_eq!(
        (threshold["name"].as_str(), threshold["passed"].as_bool()),
        (Some("max_mismatches"), Some(true))
    );
}

/// A run under `max_mismatches: 0` on the fake network that `script` changes: its
/// exit and its report.
async fn under_max_mismatches(
    dirs: &Dirs,
    script: impl Fn() -> FakeScript + Send + Sync + 'static,
) -> (Exit, serde_json::Value) {
    let runtimes = fakes(move |_| Ok(script()));
    let s = scenario("thresholds:\n  max_mismatches: 0\n");
    let exit = execute_with(s, &dirs.opts, &runtimes, Signals::manual())
        .await
        .unwrap();
    (exit, dirs.report(""))
}

#[tokio::test]
async fn a_payment_the_receiver_lost_is_a_mismatch_and_fails_max_mismatches() {
    let dirs = Dirs::new();
    let (exit, report) = under_max_mismatches(&dirs, || FakeScript {
        unrecorded_receipts: Some(("bob".into(), 3)),
        ..quick()
    })
    .await;
    assert_eq!(exit, Exit::ThresholdFailed);
    let r = &report["reconciliation"];
    assert_eq!(u(&r["mismatches"]), 3, "{r}");
    assert_eq!(u(&r["receivers"][0]["node_received"]), 37);
    assert_eq!(
        u(&r["senders"][0]["mismatches"]),
        0,
        "the sender's ledger agrees"
    );
    let threshold = &report["thresholds"][0];
    assert_eq!(threshold["name"], "max_mismatches");
    assert_eq!(
        (threshold["actual"].as_f64(), threshold["passed"].as_bool()),
        (Some(3.0), Some(false))
    );
    let summary =
        std::fs::read_to_string(dirs.opts.report_dir.as_ref().unwrap().join("summary.md")).unwrap();
    assert!(summary.contains("MISMATCH receiver bob"), "{summary}");
}

/// A node whose ledger was not read leaves the run unreconciled: the report's results
/// have no mismatch count (never 0) and `max_mismatches: 0` fails rather than pass on
/// what nobody looked at.
#[tokio::test]
async fn a_ledger_not_read_is_not_reconciled_and_fails_max_mismatches() {
    let dirs = Dirs::new();
    let (exit, report) = under_max_mismatches(&dirs, || FakeScript {
        unreadable_ledger: Some("bob".into()),
        ..quick()
    })
    .await;
    assert_eq!(exit, Exit::ThresholdFailed);
    let r = &report["reconciliation"];
    assert!(
        r["unread"][0]
            .as_str()
            .is_some_and(|u| u.starts_with("bob: ")),
        "{r}"
    );
    assert_eq!(r["receivers"][0]["node_received"], serde_json::Value::Null);
    assert!(
        report["results"].get("mismatches").is_none(),
        "{}",
        report["results"]
    );
    let threshold = &report["thresholds"][0];
    assert_eq!(threshold["name"], "max_mismatches");
    assert_eq!(
        (threshold["actual"].as_f64(), threshold["passed"].as_bool()),
        (None, Some(false))
    );
}

#[tokio::test]
async fn payments_in_flight_at_a_signal_are_indeterminate_then_resolved_not_failed() {
    let dirs = Dirs::new();
    let (exit, _) = interrupted_at(Phase::Load(Duration::from_millis(100)), &dirs).await;
    assert_eq!(exit, Exit::Interrupted);
    let report = dirs.report("");
    let results = &report["results"];
    // Two workers: the two payments in flight at the signal.
    assert_eq!(u(&results["indeterminate"]), 2, "{results}");
    assert_eq!(u(&results["failed"]), 0, "{results}");
    let r = &report["reconciliation"];
    assert_eq!(u(&r["indeterminate"]), 2, "{r}");
    assert_eq!(
        (
            u(&r["resolved_ok"]),
            u(&r["resolved_failed"]),
            u(&r["unresolved"])
        ),
        (2, 0, 0),
        "{r}"
    );
    assert_eq!(u(&r["mismatches"]), 0, "{r}");
    // The tool knew their invoices' hashes: each was asked about and resolved alone.
    assert_eq!(u(&r["resolved_by_hash"]), 2, "{r}");
    let csv = std::fs::read_to_string(dirs.opts.report_dir.as_ref().unwrap().join("payments.csv"))
        .unwrap();
    let resolutions: Vec<&str> = (csv.lines())
        .filter(|l| l.contains(",indeterminate,"))
        .map(|l| l.rsplit_once(',').unwrap().1)
        .collect();
    assert_eq!(resolutions, ["ok", "ok"], "{csv}");
    // Late successes are counted by the reconciliation, not measured.
    let ok = u(&results["ok"]);
    assert_eq!(u(&results["latency"]["count"]), ok);
    assert_eq!(u(&r["receivers"][0]["node_received"]), ok + 2);
}
