//! Draining a channel end to end with Core Lightning, Eclair and LDK senders, as
//! `tests/e2e_drain.rs` does with LND: a pair of one implementation on a real Bitcoin
//! Core regtest chain, one small channel, invoices of 10 000 sat one at a time until
//! the sender's side is spent, the load stopping at its third liquidity failure, and
//! the receiver's settled payments matching the tool's. Invoices, not keysend: every
//! implementation pays them (ldk-server has no keysend). Where the build cache lacks
//! an implementation or bitcoind, its test says it did not run (stderr and
//! `target/tmp/not-run/`, counted by `.ci/run`), never passes silently.

mod common;

use common::scenario_run::Finished;
use common::*;

const BITCOIND_BUILD: &str = "BITCOIN_SRC=<Bitcoin Core source tree> scripts/build-nodes.sh";

/// A pair of `implementation` at `version` draining one 200 000 sat channel.
fn scenario(implementation: &str, version: &str) -> String {
    format!(
        "\
name: e2e-drain-{implementation}
runtime: local
chain:
  implementation: bitcoind
nodes:
  alice:
    implementation: {implementation}
    version: {version}
  bob:
    implementation: {implementation}
    version: {version}
channels:
  - from: alice
    to: bob
    capacity_sat: 200000
workload:
  kind: invoice
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

/// Runs the drain when `binary` and bitcoind are built; checks what e2e_drain checks.
fn drains(test: &str, implementation: &str, version: &str, binary: &str, build: &str) {
    if !(built_or_not_run(test, binary, build)
        && built_or_not_run(test, "bitcoind", BITCOIND_BUILD))
    {
        return;
    }
    let run = Finished::run(&scenario(implementation, version));
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
    let ok_after: u64 = (results["series"].as_array().unwrap().iter())
        .filter(|p| p["at_s"].as_f64().unwrap() > first + 1.0)
        .map(|p| p["ok"].as_u64().unwrap())
        .sum();
    assert_eq!(
        ok_after, 0,
        "no success once drained (first failure at {first} s)"
    );
}

#[test]
fn core_lightning_drains_a_channel_and_stops_on_liquidity_failures() {
    drains(
        "core_lightning_drains_a_channel_and_stops_on_liquidity_failures",
        "cln",
        "v26.06.6",
        "lightningd",
        "CLN_SRC=<Core Lightning source tree> scripts/build-nodes.sh",
    );
}

#[test]
fn eclair_drains_a_channel_and_stops_on_liquidity_failures() {
    drains(
        "eclair_drains_a_channel_and_stops_on_liquidity_failures",
        "eclair",
        "v0.13.0",
        "eclair-node",
        "ECLAIR_SRC=<Eclair source tree> scripts/build-nodes.sh, with a JDK >= 21",
    );
}

#[test]
fn ldk_drains_a_channel_and_stops_on_liquidity_failures() {
    drains(
        "ldk_drains_a_channel_and_stops_on_liquidity_failures",
        "ldk",
        "v0.1.0",
        "ldk-server",
        "LDK_SERVER_SRC=<ldk-server source tree> scripts/build-nodes.sh",
    );
}
