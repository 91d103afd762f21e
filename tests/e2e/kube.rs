//! End to end on a real Kubernetes cluster, through the binary: the single-node
//! cluster `scripts/kube-cluster.sh` brings up on this machine (the Kubernetes
//! components built from their Go modules, the node images imported, nothing pulled).
//! alice-pays-bob with `runtime: kubernetes` by keysend, with resources from the
//! kubelet and the namespace gone afterwards; both nodes restarted after the load (in
//! their pods, on the same data); SIGINT in the middle of the load; and a SIGKILLed
//! tool whose namespace `down` deletes.
//!
//! When the cluster's binaries are not built (a fresh machine: `scripts/build-kube.sh`
//! takes about 25 minutes) each test records itself as not run. When they are built,
//! the cluster must answer: `.ci/run` brings it up, so under `CI=true` a cluster that
//! does not answer fails the tests.

use crate::common::kube::{CLUSTER, cluster_or_not_run, kubeconfig, namespace_exists};
use crate::common::running::ScenarioRun;
use crate::common::*;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::time::Duration;

const SCENARIO: &str = "tests/fixtures/kube/alice-pays-bob.yaml";
/// The same network with `after_load: restart: all`.
const RESTART: &str = "tests/fixtures/kube/restart.yaml";

fn namespace_of(run_id: &str) -> String {
    lnbench_tui::runtime::kube::objects::namespace_for(run_id)
}

/// A run of `scenario` on the cluster.
fn start_of(scenario: &str, payments: u64) -> ScenarioRun {
    ScenarioRun::start(scenario, payments, &[("KUBECONFIG", kubeconfig().into())])
}

/// A run of far more payments than can finish, once its load is under way.
fn under_load() -> ScenarioRun {
    let mut run = start_of(SCENARIO, 1_000_000);
    run.running.wait_for_load(2);
    run
}

#[test]
fn alice_pays_bob_on_kubernetes_records_resources_restarts_both_and_leaves_no_namespace() {
    let _turn = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    if !cluster_or_not_run("alice_pays_bob_on_kubernetes") {
        return;
    }
    let mut run = start_of(RESTART, 200);
    let (status, log) = run.running.wait_exit(Duration::from_secs(900));
    let run_id = run.running.run_id();
    assert_eq!(status.code(), Some(0), "exit status {status:?}\n{log}");
    assert!(
        !namespace_exists(&namespace_of(&run_id)),
        "namespace {} left behind\n{log}",
        namespace_of(&run_id)
    );

    // CPU and memory of each node come from the kubelet.
    let report = crate::basic_run::check_report(&run.work.path().join("report"), "kubernetes", 200);
    // Both nodes restarted in their pods after the load: the data volume outlived
    // the container.
    crate::restarts::check_shown(&log, &run.work.path().join("report"));
    crate::restarts::check_restarts(&report, 4);
}

#[test]
fn sigint_in_the_middle_of_the_load_on_kubernetes_deletes_the_namespace() {
    let _turn = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    if !cluster_or_not_run("sigint_on_kubernetes") {
        return;
    }
    let mut run = under_load();
    let namespace = namespace_of(&run.running.run_id());
    assert!(
        namespace_exists(&namespace),
        "no namespace {namespace} during the load"
    );
    kill(Pid::from_raw(run.running.child.id() as i32), Signal::SIGINT).unwrap();
    let (status, log) = run.running.wait_exit(Duration::from_secs(180));
    assert_eq!(status.code(), Some(130), "exit status {status:?}\n{log}");
    assert!(log.contains("interrupted by SIGINT"), "{log}");
    assert!(
        !namespace_exists(&namespace),
        "namespace {namespace} left behind\n{log}"
    );
}

#[test]
fn down_deletes_the_namespace_a_killed_run_left_on_kubernetes() {
    let _turn = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    if !cluster_or_not_run("down_on_kubernetes") {
        return;
    }
    let mut run = under_load();
    let run_id = run.running.run_id();
    let namespace = namespace_of(&run_id);
    kill(
        Pid::from_raw(run.running.child.id() as i32),
        Signal::SIGKILL,
    )
    .unwrap();
    let (_, log) = run.running.wait_exit(Duration::from_secs(30));
    // SIGKILL runs no teardown: the namespace stays.
    assert!(namespace_exists(&namespace), "{log}");

    let out = lnbench_command()
        .args(["down", "--run", &run_id])
        .env("KUBECONFIG", kubeconfig())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "down failed: {out:?}");
    assert!(
        stdout.contains(&format!("removed namespace {namespace} (run {run_id})")),
        "down did not list the namespace:\n{stdout}"
    );
    assert!(!namespace_exists(&namespace), "{stdout}");
}
