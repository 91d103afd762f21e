//! The fault kinds beyond kill and pause, the same on every runtime: the scenarios and
//! what their reports must show (tests/e2e/faults_kinds.rs, tests/e2e/kube_faults.rs).
//! Each assertion shows the fault had its effect (payment latency, throughput, the
//! node's way back, the chain's height).

use super::scenario_run::lnd_pair;
use serde_json::Value;

/// Alice pays bob 5 keysends a second for 55 s. 6 s in, the link gets 100 ms ± 50 ms
/// each way for 6 s; once 100 payments are done, 1 KB/s each way for 6 s; 34 s in, its
/// connections are cut once; 40 s in, bob is stopped and started again.
pub fn scenario(name: &str, top: &str) -> String {
    lnd_pair(name, top, 2000000, 4)
        + "  amount_msat: 1000
  rate:
    hold: { rate: 5, duration: 55s }
  stop:
    duration: 55s
  payment_timeout: 20s
faults:
  - at: 6s
    link: [alice, bob]
    latency: 100ms
    jitter: 50ms
    for: 6s
  - after_payments: 100
    link: [alice, bob]
    bandwidth: 1
    for: 6s
  - at: 34s
    link: [alice, bob]
    reset: true
  - at: 40s
    restart: bob
"
}

fn fault<'a>(report: &'a Value, label: &str) -> &'a Value {
    let f = super::scenario_run::fault(report, label);
    eprintln!("{label}: {f:#}");
    assert!(f["error"].is_null(), "{f:#}");
    f
}

fn span(f: &Value) -> (f64, f64) {
    let began = f["began_s"].as_f64().expect("began");
    let ended = f["ended_s"].as_f64().expect("ended");
    (began, ended)
}

/// The median of the per-second p50 of successful payments between `from` and `to`
/// (seconds on the run's clock), in ms.
fn p50_ms(report: &Value, from: f64, to: f64) -> f64 {
    let series = report["results"]["series"].as_array().unwrap();
    let mut v: Vec<f64> = (series.iter())
        .filter(|p| p["ok"].as_u64() > Some(0))
        .filter(|p| (from..to).contains(&p["at_s"].as_f64().unwrap()))
        .map(|p| p["p50_us"].as_f64().unwrap() / 1000.0)
        .collect();
    assert!(
        !v.is_empty(),
        "no payment succeeded from {from} s to {to} s"
    );
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// What [`scenario`]'s report must show: each fault had its effect. (That alice dialled
/// bob again through the proxy after the reset is the caller's to check: it reads the
/// proxy's log.)
pub fn check(report: &Value) {
    // 100 ms ± 50 ms on each of the four crossings of a keysend: about 400 ms more
    // (the spread itself is not checked).
    let jitter = fault(report, "latency alice–bob");
    assert_eq!(jitter["links"], 1, "{jitter:#}");
    let (began, ended) = span(jitter);
    let (before, during) = (
        p50_ms(report, 2.0, began),
        p50_ms(report, began + 1.0, ended),
    );
    eprintln!("jitter: p50 {before:.0} ms before, {during:.0} ms during");
    assert!(during >= before + 150.0, "{before:.0} -> {during:.0} ms");

    // Begun once 100 payments were done, not before.
    let bandwidth = fault(report, "bandwidth alice–bob");
    assert_eq!(bandwidth["links"], 1, "{bandwidth:#}");
    let (began, ended) = span(bandwidth);
    assert!((5.5..=7.5).contains(&(ended - began)), "{bandwidth:#}");
    let series = report["results"]["series"].as_array().unwrap();
    let done: u64 = (series.iter())
        .filter(|p| p["at_s"].as_f64().unwrap() <= began + 1.0)
        .map(|p| p["ok"].as_u64().unwrap() + p["failed"].as_u64().unwrap())
        .sum();
    assert!(
        done >= 100,
        "{done} payments done when it began at {began} s"
    );
    // An onion alone is 1366 bytes: at 1 KB/s each way the link carries under one
    // payment a second, where 5 a second were offered.
    let tps = |w: &str| bandwidth[w]["tps"].as_f64().unwrap();
    eprintln!(
        "bandwidth: TPS {:.1} before, {:.1} during",
        tps("before"),
        tps("during")
    );
    assert!(tps("during") * 3.0 < tps("before"), "{bandwidth:#}");

    // Cut once (it begins and ends at once); alice dials bob again through the proxy.
    let reset = fault(report, "reset alice–bob");
    assert_eq!(reset["links"], 1, "{reset:#}");
    let (began, ended) = span(reset);
    assert!(ended - began < 1.0, "{reset:#}");

    // A clean stop, then bob's way back.
    let restart = fault(report, "restart bob");
    let back = &restart["node_back"];
    let stop = back["stop_s"].as_f64().expect("stop_s");
    let (rpc, channels) = (
        back["rpc_s"].as_f64().unwrap(),
        back["channels_s"].as_f64().unwrap(),
    );
    assert!(stop > 0.0 && rpc > 0.0 && channels >= rpc, "{restart:#}");
    assert!(restart["ended_s"].as_f64().is_some(), "{restart:#}");
}

/// A block every 2 s during the load, stopped 8 s in, a burst of 3 blocks while it is
/// stopped, resumed 16 s in and stopped again 26 s in: the chain's height at each
/// shows that nothing was mined while stopped but the burst, and that mining resumed.
pub fn mining_scenario(name: &str, top: &str) -> String {
    let scenario = scenario(name, top).replace("duration: 55s", "duration: 30s");
    scenario[..scenario.find("faults:").unwrap()].to_string()
        + "mining: { every: 2s }
faults:
  - { at: 8s, mining: stop }
  - { at: 12s, mine: 3 }
  - { at: 16s, mining: resume }
  - { at: 26s, mining: stop }
"
}

/// What [`mining_scenario`]'s report must show.
pub fn check_mining(report: &Value) {
    let height = |label: &str, nth: usize| {
        let f = (report["faults"].as_array().unwrap().iter())
            .filter(|f| f["label"] == label)
            .nth(nth)
            .unwrap_or_else(|| panic!("{label} #{nth} in {:#}", report["faults"]));
        eprintln!("{label}: {f:#}");
        assert!(f["error"].is_null(), "{f:#}");
        f["chain_height"].as_u64().expect("chain_height")
    };
    let stopped = height("mining stop", 0);
    assert_eq!(
        height("mine 3", 0),
        stopped + 3,
        "only the burst while stopped"
    );
    assert_eq!(height("mining resume", 0), stopped + 3);
    let again = height("mining stop", 1);
    assert!(
        again > stopped + 3,
        "mining resumed: {again} after {}",
        stopped + 3
    );
    assert!(report["results"]["ok"].as_u64().unwrap() > 0);
}
