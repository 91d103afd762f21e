//! Faults and links on a real Kubernetes cluster (`scripts/kube-cluster.sh`), through
//! the binary: bob's node process killed in its pod (the kubelet starts its container
//! again on the same volume), alice's frozen (SIGSTOP) and thawed, and a block mined,
//! while alice pays bob's invoices; then the peer link through the fault proxy's pod:
//! 50 ms each way, then a partition; and bitcoind stopped cleanly, then killed, in its
//! pod (tests/common/chain_faults.rs); and the other fault kinds as
//! tests/e2e_faults_kinds.rs runs them locally: jitter, a bandwidth cap begun by
//! `after_payments:`, a reset, bob's clean restart, and background mining stopped,
//! burst and resumed (tests/common/fault_kinds.rs); and a Core Lightning receiver
//! killed and paused (tests/common/impl_faults.rs). The report's fault windows and
//! ways back, the channels at the end, and the run's namespace gone afterwards.
//!
//! Not run (and recorded so) when the cluster's binaries are not built, or the
//! cluster is not up outside CI, as in tests/e2e_kube.rs.

mod common;

use common::kube::{CLUSTER, cluster_or_not_run, kubeconfig, namespace_exists};
use common::scenario_run::{assert_nothing_left, fault, killed_node_back, lnd_pair};
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

    let k = killed_node_back(&report, "kill bob", "kubernetes kill");
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

/// `restart: chain` and `kill: chain` in the chain's pod, as tests/e2e_faults_chain.rs
/// does locally and in Docker. The kill is the pod's second restart, so the kubelet's
/// back-off (10 s) keeps bitcoind down longer than `restart_after:`.
#[test]
fn the_chain_restarted_and_killed_mid_load_comes_back_in_its_pod() {
    let _turn = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let test = "the_chain_restarted_and_killed_mid_load_comes_back_in_its_pod";
    if !built_or_not_run(test, "bitcoind", BITCOIND_BUILD) || !cluster_or_not_run("kube_chain") {
        return;
    }
    let text = common::chain_faults::scenario(
        "e2e-kube-chain-faults",
        "runtime: kubernetes\npull: never\n",
    );
    let (report, _log) = run(&text);
    common::chain_faults::check(&report);
    let restart = fault(&report, "restart chain");
    let stop = restart["chain_back"]["stop_s"].as_f64().unwrap();
    // bitcoind stops cleanly in well under the 90 s deadline; the time is read in the pod.
    assert!(stop > 0.0 && stop < 60.0, "{restart:#}");
}

/// tests/e2e_faults_kinds.rs's first scenario on the cluster: jitter, a bandwidth cap
/// after 100 payments, a reset (alice's dialling again through the proxy pod is not
/// checked here: its log is gone with the namespace) and a restart of bob in his pod.
#[test]
fn jitter_bandwidth_reset_and_restart_have_their_effect_in_pods() {
    let _turn = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    if !cluster_or_not_run("kube_fault_kinds") {
        return;
    }
    let top = "runtime: kubernetes\npull: never\n";
    let (report, _log) = run(&common::fault_kinds::scenario("e2e-kube-kinds", top));
    common::fault_kinds::check(&report);
}

/// Background mining stopped, a burst while stopped, resumed and stopped again, on
/// the cluster (through the forwarded chain RPC).
#[test]
fn background_mining_stops_resumes_and_a_burst_mines_in_pods() {
    let _turn = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    if !cluster_or_not_run("kube_mining") {
        return;
    }
    let top = "runtime: kubernetes\npull: never\n";
    let (report, _log) = run(&common::fault_kinds::mining_scenario(
        "e2e-kube-mining",
        top,
    ));
    common::fault_kinds::check_mining(&report);
}

/// tests/e2e_faults_impls.rs's Core Lightning case on the cluster: bob killed in his
/// pod and started again, then paused; his way back read from Core Lightning.
#[test]
fn a_killed_and_a_paused_cln_node_recover_in_their_pods() {
    let _turn = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let test = "a_killed_and_a_paused_cln_node_recover_in_their_pods";
    if !built_on_bitcoind(test, "lightningd", CLN_BUILD) || !cluster_or_not_run("kube_cln") {
        return;
    }
    let top = "runtime: kubernetes\npull: never\n";
    let text = common::impl_faults::scenario("cln", "keysend", 50, 30, top);
    let (report, _log) = run(&text);
    common::impl_faults::check("cln", &report);
}
