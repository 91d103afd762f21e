//! Draining a channel end to end, through the real binary on real nodes: a one-way
//! flow over one small channel until the sender's side is empty, the load stopping
//! on its liquidity failures, the time of the first failure in the report, and the
//! receiver's settled payments matching the tool's. LND on btcd by keysend; Core
//! Lightning, Eclair and LDK on Bitcoin Core by invoice (every implementation pays
//! invoices; ldk-server has no keysend). Where the build cache lacks one of those or
//! bitcoind, its test says it did not run (stderr and `target/tmp/not-run/`, counted
//! by `.ci/run`), never passes silently.

use crate::common::scenario_run::Finished;
use crate::common::*;

/// A pair of `implementation` on `chain` draining one 200 000 sat channel, of which
/// the sender can send somewhat less (reserve and commitment fee), in 10 000 sat
/// payments of `kind` one at a time: at most 19 succeed, then every payment fails for
/// lack of liquidity; the load stops at the third such failure.
fn scenario(chain: &str, implementation: &str, kind: &str) -> String {
    format!(
        "\
name: e2e-drain-{implementation}
runtime: local
chain:
  implementation: {chain}
nodes:
  alice:
    implementation: {implementation}
  bob:
    implementation: {implementation}
channels:
  - from: alice
    to: bob
    capacity_sat: 200000
workload:
  kind: {kind}
  senders: [alice]
  receiver: bob
  amount_msat: 10000000
  concurrency: 1
  stop:
    duration: 90s
    liquidity_failures: 3
  payment_timeout: 30s
"
    )
}

#[test]
fn a_one_way_flow_drains_the_channel_and_stops_on_liquidity_failures() {
    require_node_binaries();
    drains("btcd", "lnd", "keysend");
}

#[test]
fn core_lightning_drains_a_channel_and_stops_on_liquidity_failures() {
    let test = "core_lightning_drains_a_channel_and_stops_on_liquidity_failures";
    if built_on_bitcoind(test, "lightningd", CLN_BUILD) {
        drains("bitcoind", "cln", "invoice");
    }
}

#[test]
fn eclair_drains_a_channel_and_stops_on_liquidity_failures() {
    let test = "eclair_drains_a_channel_and_stops_on_liquidity_failures";
    if built_on_bitcoind(test, "eclair-node", ECLAIR_BUILD) {
        drains("bitcoind", "eclair", "invoice");
    }
}

#[test]
fn ldk_drains_a_channel_and_stops_on_liquidity_failures() {
    let test = "ldk_drains_a_channel_and_stops_on_liquidity_failures";
    if built_on_bitcoind(test, "ldk-server", LDK_BUILD) {
        drains("bitcoind", "ldk", "invoice");
    }
}

/// Runs the drain and checks it: 10 to 19 paid, the stop on the third liquidity
/// failure, the failures named, no success after the first, and the ledgers.
fn drains(chain: &str, implementation: &str, kind: &str) {
    let run = Finished::run(&scenario(chain, implementation, kind));
    assert_eq!(run.status.code(), Some(0), "{}", run.log);
    let report = run.report_json();
    assert_matches_schema(&report);
    assert_reconciled(&report);
    let results = &report["results"];
    let drain = &results["drain"];
    let by_reason = &results["failures_by_reason"];
    eprintln!("{implementation}: drain {drain:#}\nfailures: {by_reason:#}");
    let ok = results["ok"].as_u64().unwrap();
    assert!(
        (10..=19).contains(&ok),
        "the channel carries 10 to 19 payments: {results:#}"
    );
    assert_eq!(drain["stop_after"], 3, "{drain:#}");
    let liquidity = drain["liquidity_failures"].as_u64().unwrap();
    assert_eq!(liquidity, 3, "one payment in flight at a time: {drain:#}");
    let named: u64 = ["no_route", "insufficient_balance"]
        .iter()
        .map(|r| by_reason[r].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(
        named, liquidity,
        "{implementation} names them: {by_reason:#}"
    );
    assert_eq!(results["failed"].as_u64(), Some(liquidity), "{results:#}");
    let first = (drain["first_liquidity_failure_s"].as_f64()).expect("a first failure");
    // The series shows successes before the first failure and failures from then on.
    let series = results["series"].as_array().unwrap();
    // The first failure is on the series' clock: the second it ended in counts it,
    // or the next one when the worker merged its result after that second's tick.
    let holding = (series.iter())
        .position(|p| p["at_s"].as_f64().unwrap() >= first)
        .unwrap_or_else(|| panic!("no second ends after {first} s: {series:?}"));
    assert!(
        (series[holding..].iter().take(2)).any(|p| p["failed"].as_u64() > Some(0)),
        "the second holding the first failure ({first} s) counts it: {series:?}"
    );
    let ok_after: u64 = (series.iter())
        .filter(|p| p["at_s"].as_f64().unwrap() > first + 1.0)
        .map(|p| p["ok"].as_u64().unwrap())
        .sum();
    assert_eq!(
        ok_after, 0,
        "no success once drained (first failure at {first} s): {series:?}"
    );
}
