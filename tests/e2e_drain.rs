//! Draining a channel end to end, through the real binary on real LND nodes and a
//! real btcd chain: a one-way flow over one small channel until alice's side is
//! empty, the load stopping on its liquidity failures, the time of the first failure
//! in the report, and the receiver's settled payments matching the tool's.

mod common;

use common::scenario_run::Finished;
use common::*;

/// 200 000 sat, of which alice can send somewhat less (reserve and commitment fee),
/// in 10 000 sat keysends: at most 19 succeed, then every payment fails for lack of
/// liquidity; the load stops at the third such failure.
#[test]
fn a_one_way_flow_drains_the_channel_and_stops_on_liquidity_failures() {
    require_node_binaries();
    let scenario = "\
name: e2e-drain
runtime: local
chain:
  implementation: btcd
nodes:
  alice:
    implementation: lnd
  bob:
    implementation: lnd
channels:
  - from: alice
    to: bob
    capacity_sat: 200000
workload:
  kind: keysend
  senders: [alice]
  receiver: bob
  amount_msat: 10000000
  concurrency: 1
  stop:
    duration: 60s
    liquidity_failures: 3
  payment_timeout: 30s
";
    let run = Finished::run(scenario);
    assert_eq!(run.status.code(), Some(0), "{}", run.log);
    let text = std::fs::read_to_string(run.report_dir().join("report.json")).expect("report");
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_matches_schema(&report);
    assert_reconciled(&report);
    let results = &report["results"];
    let drain = &results["drain"];
    eprintln!(
        "drain: {drain:#}\nfailures: {:#}",
        results["failures_by_reason"]
    );
    let ok = results["ok"].as_u64().unwrap();
    assert!(
        (10..=19).contains(&ok),
        "the channel carries 10 to 19 payments: {results:#}"
    );
    assert_eq!(drain["stop_after"], 3, "{drain:#}");
    let liquidity = drain["liquidity_failures"].as_u64().unwrap();
    assert_eq!(liquidity, 3, "one payment in flight at a time: {drain:#}");
    let by_reason = &results["failures_by_reason"];
    let named = ["no_route", "insufficient_balance"]
        .iter()
        .map(|r| by_reason[r].as_u64().unwrap_or(0))
        .sum::<u64>();
    assert_eq!(
        named, liquidity,
        "failures by reason name them: {by_reason:#}"
    );
    assert_eq!(results["failed"].as_u64(), Some(liquidity), "{results:#}");
    let first = drain["first_liquidity_failure_s"]
        .as_f64()
        .expect("a first failure");
    // The series shows successes before the first failure and failures from then on.
    let series = results["series"].as_array().unwrap();
    let failed_at: Vec<f64> = (series.iter())
        .filter(|p| p["failed"].as_u64() > Some(0))
        .map(|p| p["at_s"].as_f64().unwrap())
        .collect();
    assert!(!failed_at.is_empty(), "{series:?}");
    let ok_after: u64 = (series.iter())
        .filter(|p| p["at_s"].as_f64().unwrap() > first + 1.0)
        .map(|p| p["ok"].as_u64().unwrap())
        .sum();
    assert_eq!(
        ok_after, 0,
        "no success once drained (first failure at {first} s): {series:?}"
    );
}
