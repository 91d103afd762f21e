//! Faults on Core Lightning, Eclair and LDK nodes, end to end through the real binary
//! on a real Bitcoin Core regtest chain: the receiver is killed and started again,
//! then paused and resumed, while the sender pays it at a held rate. Each run's
//! report gives the killed node's way back (RPC answering, channels active again),
//! the time until TPS was back after each fault, and every node's channels at the end
//! (read from each implementation, as from LND). Where the build cache lacks a node
//! binary the test says it did not run (stderr and `target/tmp/not-run/`), never
//! passes silently.

mod common;

use common::scenario_run::{Finished, fault};
use common::*;
use serde_json::Value;

/// Alice pays bob (both `implementation`) at 10 payments a second for `load_s`; bob
/// is killed 8 s in and started again 3 s later, then paused `pause_at_s` in for 3 s
/// (once he is back from the kill: the report's windows end at the next fault).
fn scenario(implementation: &str, kind: &str, load_s: u32, pause_at_s: u32) -> String {
    format!(
        "name: e2e-faults-{implementation}
runtime: local
chain:
  implementation: bitcoind
nodes:
  alice:
    implementation: {implementation}
  bob:
    implementation: {implementation}
channels:
  - from: alice
    to: bob
    capacity_sat: 2000000
    count: 2
workload:
  kind: {kind}
  senders: [alice]
  receiver: bob
  amount_msat: 1000
  rate:
    hold: {{ rate: 10, duration: {load_s}s }}
  stop:
    duration: {load_s}s
  payment_timeout: 20s
faults:
  - at: 8s
    kill: bob
    restart_after: 3s
  - at: {pause_at_s}s
    pause: bob
    for: 3s
"
    )
}

/// Runs the scenario and checks what the report says about both faults and the
/// channels at the end.
fn killed_and_paused_receiver_recovers(
    implementation: &str,
    kind: &str,
    load_s: u32,
    pause_at_s: u32,
) {
    let run = Finished::run(&scenario(implementation, kind, load_s, pause_at_s));
    let log = &run.log;
    assert_eq!(run.status.code(), Some(0), "{log}");
    let text = std::fs::read_to_string(run.report_dir().join("report.json")).expect("report");
    let report: Value = serde_json::from_str(&text).unwrap();
    assert_matches_schema(&report);

    let k = fault(&report, "kill bob");
    eprintln!("{implementation} kill: {k:#}");
    assert!(k["error"].is_null(), "{k:#}");
    let back = &k["node_back"];
    let rpc = back["rpc_s"].as_f64().expect("rpc_s");
    let channels = back["channels_s"].as_f64().expect("channels_s");
    assert!(rpc > 0.0 && channels >= rpc, "{k:#}");
    assert!(
        k["recovered_after_s"].as_f64().is_some(),
        "TPS came back after the kill: {k:#}"
    );
    assert!(k["after"]["ok"].as_u64().unwrap() > 0, "{k:#}");

    let p = fault(&report, "pause bob");
    eprintln!("{implementation} pause: {p:#}");
    assert!(p["error"].is_null(), "{p:#}");
    let (began, ended) = (
        p["began_s"].as_f64().unwrap(),
        p["ended_s"].as_f64().unwrap(),
    );
    assert!((2.5..=5.0).contains(&(ended - began)), "{p:#}");
    assert!(
        p["recovered_after_s"].as_f64().is_some(),
        "TPS came back after the pause: {p:#}"
    );

    // Both nodes' channels at the end, read from the implementation itself.
    let health = report["channel_health"].as_array().expect("channel_health");
    assert_eq!(health.len(), 2, "{health:?}");
    for h in health {
        eprintln!("{implementation} channels at the end: {h}");
        assert!(h["error"].is_null(), "{h}");
        // Every channel is open and active, or counted as force-closed.
        let c = &h["health"];
        let (open, closed) = (c["channels"].as_u64(), c["force_closed"].as_u64());
        assert_eq!(open.zip(closed).map(|(o, f)| o + f), Some(2), "{h}");
        assert_eq!(c["active"], c["channels"], "{h}");
    }
}

#[test]
fn a_killed_and_a_paused_cln_node_recover() {
    if built_on_bitcoind(
        "a_killed_and_a_paused_cln_node_recover",
        "lightningd",
        CLN_BUILD,
    ) {
        killed_and_paused_receiver_recovers("cln", "keysend", 50, 30);
    }
}

#[test]
fn a_killed_and_a_paused_eclair_node_recover() {
    if built_on_bitcoind(
        "a_killed_and_a_paused_eclair_node_recover",
        "eclair-node",
        ECLAIR_BUILD,
    ) {
        // A JVM node takes a while to serve its API again on a busy machine.
        killed_and_paused_receiver_recovers("eclair", "keysend", 140, 105);
    }
}

#[test]
fn a_killed_and_a_paused_ldk_node_recover() {
    if built_on_bitcoind(
        "a_killed_and_a_paused_ldk_node_recover",
        "ldk-server",
        LDK_BUILD,
    ) {
        // ldk-server at the pinned commit has no keysend: the receiver makes invoices.
        // It has no API to dial a peer either: its channels are back once the payer's
        // node dials it again, which ldk-node does once a minute.
        killed_and_paused_receiver_recovers("ldk", "invoice", 140, 105);
    }
}
