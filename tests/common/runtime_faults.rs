//! The node and link faults tests/e2e/docker_faults.rs and tests/e2e/kube_faults.rs
//! run alike on their runtimes: the scenarios and the checks they share; each test
//! adds what its runtime shows besides. [`one_network_scenario`] puts the node faults,
//! the link faults and background mining on one network, for a runtime whose every
//! network costs much to bring up (a cluster's namespace, pods and volumes).

use super::scenario_run::{fault, killed_node_back, lnd_pair};
use serde_json::Value;

/// Alice pays bob's invoices at 5 a second for 50 s; bob is killed 10 s in and
/// started again 4 s later, alice paused 32 s in for 3 s; then `more_faults` (lines
/// of the `faults:` list). `top`: the runtime lines.
pub fn kill_and_pause_scenario(name: &str, top: &str, more_faults: &str) -> String {
    // LND's mission control would refuse alice's direct route for about a minute after
    // a payment failed on it as bob died (docs/scenarios/crash-recovery.md).
    let pair = lnd_pair(name, top, 2000000, 2)
        .replace("kind: keysend", "kind: invoice")
        .replace(
            "  alice:\n    implementation: lnd\n",
            "  alice:\n    implementation: lnd\n    args: [\"--routerrpc.apriori.penaltyhalflife=10s\"]\n",
        );
    assert!(pair.contains("penaltyhalflife"), "{pair}");
    pair + "  amount_msat: 1000
  rate:
    hold: { rate: 5, duration: 50s }
  stop:
    duration: 50s
  payment_timeout: 20s
faults:
  - at: 10s
    kill: bob
    restart_after: 4s
  - at: 32s
    pause: alice
    for: 3s
" + more_faults
}

/// [`kill_and_pause_scenario`], the link faults and
/// tests/common/fault_kinds.rs's mining faults on one network, one after another on one
/// 90 s load (alice pays bob's invoices at 5 a second): bob killed 10 s in, alice
/// paused 32 s in; 50 ms each way on the link 40 s in for 10 s, a partition 56 s in for
/// 4 s; a block every 2 s throughout, stopped 66 s in, a burst of 3 at 70 s, resumed at
/// 74 s, stopped again at 84 s. Checked by [`check_kill_and_pause`], [`check_links`]
/// and `fault_kinds::check_mining`.
pub fn one_network_scenario(name: &str, top: &str) -> String {
    let faults = "  - at: 40s
    link: [alice, bob]
    latency: 50ms
    for: 10s
  - at: 56s
    link: [alice, bob]
    down: true
    for: 4s
  - { at: 66s, mining: stop }
  - { at: 70s, mine: 3 }
  - { at: 74s, mining: resume }
  - { at: 84s, mining: stop }
";
    let text = kill_and_pause_scenario(name, top, faults)
        .replace("duration: 50s", "duration: 90s")
        .replace("faults:\n", "mining: { every: 2s }\nfaults:\n");
    assert!(
        text.contains("duration: 90s") && text.contains("every: 2s"),
        "{text}"
    );
    text
}

/// The checks of [`kill_and_pause_scenario`]'s report on `runtime`: bob back, his
/// invoices made again (through the client or forward made before the kill) and the
/// throughput back; alice's pause without error, with no more than 5 payments ended
/// while she was frozen; both channels active at the end. Returns the kill's and the
/// pause's records.
pub fn check_kill_and_pause<'a>(report: &'a Value, runtime: &str) -> (&'a Value, &'a Value) {
    let k = killed_node_back(report, "kill bob", &format!("{runtime} kill"));
    assert!(k["after"]["ok"].as_u64().unwrap() > 0, "{k:#}");
    assert!(
        k["recovered_after_s"].as_f64().is_some(),
        "TPS came back after the kill: {k:#}"
    );

    let p = fault(report, "pause alice");
    eprintln!("{runtime} pause: {p:#}");
    assert!(p["error"].is_null(), "{p:#}");
    // A frozen payer finishes nothing while frozen (a payment may end as it freezes).
    assert!(p["during"]["ok"].as_u64().unwrap() <= 5, "{p:#}");

    let health = report["channel_health"].as_array().expect("channel_health");
    assert_eq!(health.len(), 2, "{health:?}");
    for h in health {
        assert_eq!(h["health"]["force_closed"], 0, "{h}");
        assert_eq!(h["health"]["active"], 2, "{h}");
    }
    (k, p)
}

/// The checks of the link faults in [`one_network_scenario`]'s report on `runtime`:
/// the latency on the one link raised the payments' p50 by 150 ms at least (four
/// crossings of 50 ms cannot add less); the payments in flight waited out the partition
/// and the load went on after; the proxy listed as a service. Returns the p50's rise in ms and
/// the partition's record.
pub fn check_links<'a>(report: &'a Value, runtime: &str) -> (f64, &'a Value) {
    let slow = fault(report, "latency alice–bob");
    eprintln!("{runtime} latency: {slow:#}");
    assert!(slow["error"].is_null() && slow["links"] == 1, "{slow:#}");
    // Per-second p50 of successful payments, in ms, between two load times.
    let series = report["results"]["series"].as_array().unwrap();
    let p50 = |from: f64, to: f64| {
        let mut v: Vec<f64> = (series.iter())
            .filter(|p| p["ok"].as_u64() > Some(0))
            .filter(|p| (from..to).contains(&p["at_s"].as_f64().unwrap()))
            .map(|p| p["p50_us"].as_f64().unwrap() / 1000.0)
            .collect();
        assert!(!v.is_empty(), "payments between {from} and {to} s");
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let began = slow["began_s"].as_f64().unwrap();
    let (before, during) = (p50(3.0, began), p50(began + 2.0, began + 10.0));
    eprintln!("p50 {before:.0} ms before, {during:.0} ms with 50 ms each way");
    assert!(
        during - before >= 150.0,
        "p50 {before:.0} -> {during:.0} ms; the proxy added no 50 ms"
    );
    let cut = fault(report, "partition alice–bob");
    eprintln!("{runtime} partition: {cut:#}");
    // What was already on its way back as the link was cut may still end well: about
    // one payment in flight at 5 a second.
    assert!(cut["during"]["ok"].as_u64().unwrap() <= 2, "{cut:#}");
    assert!(cut["after"]["ok"].as_u64().unwrap() > 0, "{cut:#}");
    let services = report["services"].as_array().unwrap();
    assert!(
        services.iter().any(|s| s["name"] == "toxiproxy"),
        "{services:?}"
    );
    (during - before, cut)
}
