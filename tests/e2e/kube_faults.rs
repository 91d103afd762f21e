//! Faults and links on a real Kubernetes cluster (`scripts/kube-cluster.sh`), through
//! the binary: bob's node process killed in its pod (the kubelet starts its container
//! again on the same volume), alice's frozen (SIGSTOP) and thawed, while alice pays
//! bob's invoices; then, on the same network, the peer link through the fault proxy's
//! pod: 50 ms each way, then a partition; then background mining stopped, a burst and
//! resumed; and bitcoind stopped cleanly, then killed, in its
//! pod (tests/common/chain_faults.rs); and the other fault kinds as
//! tests/e2e/faults_kinds.rs runs them locally: jitter, a bandwidth cap begun by
//! `after_payments:`, a reset and bob's clean restart (tests/common/fault_kinds.rs);
//! and a Core Lightning receiver
//! killed and paused (tests/common/impl_faults.rs). The report's fault windows and
//! ways back, the channels at the end, and the run's namespace gone afterwards.
//!
//! Not run (and recorded so) when the cluster's binaries are not built, or the
//! cluster is not up outside CI, as in tests/e2e/kube.rs.

use crate::common::kube::{CLUSTER, cluster_or_not_run, run_on_cluster as run};
use crate::common::runtime_faults::*;
use crate::common::scenario_run::fault;
use crate::common::*;

const TOP: &str = "runtime: kubernetes\npull: never\n";

/// One network for the node faults, the link faults and background mining
/// ([`one_network_scenario`]): bob's node process killed in his pod and alice's frozen;
/// 50 ms each way and a partition through the proxy's pod; mining stopped, a burst
/// while stopped, resumed and stopped again through the forwarded chain RPC.
#[test]
fn node_and_link_faults_and_mining_have_their_effect_in_pods() {
    let _turn = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    if !cluster_or_not_run("kube_node_link_mining") {
        return;
    }
    let (report, _log) = run(&one_network_scenario("e2e-kube-faults", TOP));
    let (_kill, p) = check_kill_and_pause(&report, "kubernetes");
    assert!(p["after"]["ok"].as_u64().unwrap() > 0, "{p:#}");
    let (_rise, cut) = check_links(&report, "kubernetes");
    assert!(cut["error"].is_null() && cut["links"] == 1, "{cut:#}");
    crate::common::fault_kinds::check_mining(&report);
}

/// `restart: chain` and `kill: chain` in the chain's pod, as tests/e2e/faults_chain.rs
/// does locally and in Docker. The kill is the pod's second restart, so the kubelet's
/// back-off (10 s) keeps bitcoind down longer than `restart_after:`.
#[test]
fn the_chain_restarted_and_killed_mid_load_comes_back_in_its_pod() {
    let _turn = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let test = "the_chain_restarted_and_killed_mid_load_comes_back_in_its_pod";
    if !built_or_not_run(test, "bitcoind", BITCOIND_BUILD) || !cluster_or_not_run("kube_chain") {
        return;
    }
    let text = crate::common::chain_faults::scenario("e2e-kube-chain-faults", TOP);
    let (report, _log) = run(&text);
    crate::common::chain_faults::check(&report);
    let restart = fault(&report, "restart chain");
    let stop = restart["chain_back"]["stop_s"].as_f64().unwrap();
    // bitcoind stops cleanly in well under the 90 s deadline; the time is read in the pod.
    assert!(stop > 0.0 && stop < 60.0, "{restart:#}");
}

/// tests/e2e/faults_kinds.rs's first scenario on the cluster: jitter, a bandwidth cap
/// after 100 payments, a reset (alice's dialling again through the proxy pod is not
/// checked here: its log is gone with the namespace) and a restart of bob in his pod.
#[test]
fn jitter_bandwidth_reset_and_restart_have_their_effect_in_pods() {
    let _turn = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    if !cluster_or_not_run("kube_fault_kinds") {
        return;
    }
    let (report, _log) = run(&crate::common::fault_kinds::scenario("e2e-kube-kinds", TOP));
    crate::common::fault_kinds::check(&report);
}

/// tests/e2e/faults_impls.rs's Core Lightning case on the cluster: bob killed in his
/// pod and started again, then paused; his way back read from Core Lightning.
#[test]
fn a_killed_and_a_paused_cln_node_recover_in_their_pods() {
    let _turn = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let test = "a_killed_and_a_paused_cln_node_recover_in_their_pods";
    if !built_on_bitcoind(test, "lightningd", CLN_BUILD) || !cluster_or_not_run("kube_cln") {
        return;
    }
    let text = crate::common::impl_faults::scenario("cln", "keysend", 65, TOP);
    let (report, _log) = run(&text);
    crate::common::impl_faults::check("cln", &report);
}
