//! Faults on a Core Lightning, Eclair or LDK receiver, the same on every runtime: the
//! scenario and what its report must show (tests/e2e/faults_impls.rs,
//! tests/e2e/kube_faults.rs).

use super::scenario_run::{fault, killed_node_back};
use serde_json::Value;

/// Alice pays bob (both `implementation`) at 10 payments a second for `load_s`; bob
/// is paused 8 s in for 3 s, then killed 30 s in and started again 3 s later. The
/// pause comes first: it is over at once, while a killed node's way back takes its
/// own time (a JVM's start, LDK's payer dialing again once a minute), so `load_s`
/// needs to outlast one slow way back, not two (the report's windows end at the next
/// fault). The kill's baseline (the 10 s before it) starts 9 s after the pause's
/// end: the payments held during the pause end in a burst above the held rate, and
/// a baseline with the burst in it is one the way back never reaches (seen with the
/// kill at 20 s: Eclair at 14.6 TPS before it at a rate of 10; at 25 s, 12.4).
pub fn scenario(implementation: &str, kind: &str, load_s: u32, top: &str) -> String {
    format!(
        "name: e2e-faults-{implementation}
{top}chain:
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
    pause: bob
    for: 3s
  - at: 30s
    kill: bob
    restart_after: 3s
"
    )
}

/// What [`scenario`]'s report must say about both faults and the channels at the end.
pub fn check(implementation: &str, report: &Value) {
    let k = killed_node_back(report, "kill bob", &format!("{implementation} kill"));
    assert!(
        k["recovered_after_s"].as_f64().is_some(),
        "TPS came back after the kill: {k:#}"
    );
    assert!(k["after"]["ok"].as_u64().unwrap() > 0, "{k:#}");
    // Recovery is measured against the scheduled 10 a second at most: the payments
    // the pause held may end in a burst above it in the kill's baseline (LDK: 17.4).
    let baseline = k["baseline_tps"].as_f64().expect("the kill's baseline");
    let before = k["before"]["tps"].as_f64().unwrap();
    assert!(
        baseline <= before.min(10.0) + 1e-9 && baseline > 0.0,
        "baseline {baseline} against before {before} at a rate of 10: {k:#}"
    );

    let p = fault(report, "pause bob");
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
