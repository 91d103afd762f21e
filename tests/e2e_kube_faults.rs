//! Faults and links on a real Kubernetes cluster (`scripts/kube-cluster.sh`), through
//! the binary: bob's node process killed in its pod (the kubelet starts its container
//! again on the same volume), alice's frozen (SIGSTOP) and thawed, and a block mined,
//! while alice pays bob's invoices; then the peer link through the fault proxy's pod:
//! 50 ms each way, then a partition. The report's fault windows and ways back, the
//! channels at the end, and the run's namespace gone afterwards.
//!
//! Not run (and recorded so) when the cluster's binaries are not built, or the
//! cluster is not up outside CI, as in tests/e2e_kube.rs.

mod common;

use common::kube::{CLUSTER, cluster_or_not_run, kubeconfig, namespace_exists};
use common::scenario_run::{assert_nothing_left, fault, lnd_pair};
use common::*;
use serde_json::Value;
use std::process::Command;

/// Runs the scenario text to its end on the cluster; its report.json (schema-checked)
/// and log. Nothing of the run may be left in its run dir, nor its namespace.
fn run(text: &str) -> (Value, String) {
    let work = tempfile::tempdir().expect("temp dir");
    let (scenario, runs) = (work.path().join("scenario.yaml"), work.path().join("runs"));
    std::fs::write(&scenario, text).unwrap();
    std::fs::create_dir_all(&runs).unwrap();
    let out = Command::new(lnbench())
        .arg(&scenario)
        .arg("--report")
        .arg(work.path().join("report"))
        .arg("--run-dir")
        .arg(&runs)
        .env("KUBECONFIG", kubeconfig())
        .output()
        .expect("run lnbench-tui");
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_nothing_left(&runs, &log);
    let run_id = (log.lines())
        .find_map(|l| l.strip_prefix("run ")?.split(':').next())
        .expect("a `run <id>:` line");
    let namespace = lnbench_tui::runtime::kube::objects::namespace_for(run_id);
    assert!(!namespace_exists(&namespace), "{namespace} left\n{log}");
    assert_eq!(out.status.code(), Some(0), "{log}");
    let text = std::fs::read_to_string(work.path().join("report/report.json")).unwrap();
    let report: Value = serde_json::from_str(&text).expect("report.json is JSON");
    assert_matches_schema(&report);
    let runtime = report["runtime"].as_str().unwrap_or_default();
    assert!(runtime.starts_with("kubernetes ("), "{runtime}");
    (report, log)
}

fn scenario() -> String {
    // LND's mission control would refuse alice's direct route for about a minute after
    // a payment failed on it as bob died (docs/scenarios/crash-recovery.md).
    let pair = lnd_pair("e2e-kube-faults", "runtime: kubernetes\npull: never\n", 2000000, 2)
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
  - at: 40s
    mine: 1
"
}

#[test]
fn a_killed_and_a_paused_node_recover_in_their_pods() {
    let _turn = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    if !cluster_or_not_run("kube_kill_and_pause") {
        return;
    }
    let (report, _log) = run(&scenario());

    let k = fault(&report, "kill bob");
    eprintln!("kubernetes kill: {k:#}");
    assert!(k["error"].is_null(), "{k:#}");
    let back = &k["node_back"];
    let rpc = back["rpc_s"].as_f64().expect("rpc_s");
    let channels = back["channels_s"].as_f64().expect("channels_s");
    assert!(rpc > 0.0 && channels >= rpc, "{k:#}");
    // Invoices from bob's RPC again, through the forward made before the kill.
    assert!(k["after"]["ok"].as_u64().unwrap() > 0, "{k:#}");
    assert!(k["recovered_after_s"].as_f64().is_some(), "{k:#}");

    let p = fault(&report, "pause alice");
    eprintln!("kubernetes pause: {p:#}");
    assert!(p["error"].is_null(), "{p:#}");
    // A frozen payer finishes nothing while frozen (a payment may end as it freezes).
    assert!(p["during"]["ok"].as_u64().unwrap() <= 5, "{p:#}");
    assert!(p["after"]["ok"].as_u64().unwrap() > 0, "{p:#}");

    let m = fault(&report, "mine 1");
    assert!(m["error"].is_null(), "{m:#}");
    assert!(m["chain_height"].as_u64().is_some(), "{m:#}");

    let health = report["channel_health"].as_array().expect("channel_health");
    assert_eq!(health.len(), 2, "{health:?}");
    for h in health {
        assert_eq!(h["health"]["force_closed"], 0, "{h}");
        assert_eq!(h["health"]["active"], 2, "{h}");
    }
}

/// One keysend at a time; 10 s in, 50 ms each way on the link for 10 s (a keysend
/// crosses it about four times); 26 s in, a partition for 4 s, in which the payment in
/// flight waits.
#[test]
fn a_slow_link_and_a_partition_through_the_proxy_pod() {
    let _turn = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    if !cluster_or_not_run("kube_links") {
        return;
    }
    let scenario = lnd_pair(
        "e2e-kube-links",
        "runtime: kubernetes\npull: never\n",
        2000000,
        2,
    ) + "  amount_msat: 1000
  concurrency: 1
  stop:
    duration: 40s
  payment_timeout: 20s
faults:
  - at: 10s
    link: [alice, bob]
    latency: 50ms
    for: 10s
  - at: 26s
    link: [alice, bob]
    down: true
    for: 4s
";
    let (report, _log) = run(&scenario);
    let slow = fault(&report, "latency alice–bob");
    eprintln!("kubernetes latency: {slow:#}");
    assert!(slow["error"].is_null() && slow["links"] == 1, "{slow:#}");
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
    // The effect, not a speed: four crossings of 50 ms cannot add less than 150 ms.
    assert!(
        during - before >= 150.0,
        "p50 {before:.0} -> {during:.0} ms; the proxy added no 50 ms"
    );
    let cut = fault(&report, "partition alice–bob");
    eprintln!("kubernetes partition: {cut:#}");
    assert!(cut["error"].is_null() && cut["links"] == 1, "{cut:#}");
    assert!(cut["during"]["ok"].as_u64().unwrap() <= 1, "{cut:#}");
    assert!(cut["after"]["ok"].as_u64().unwrap() > 0, "{cut:#}");
    let services = report["services"].as_array().unwrap();
    assert!(
        services.iter().any(|s| s["name"] == "toxiproxy"),
        "{services:?}"
    );
}
