//! Helpers of the end-to-end tests on the local Kubernetes cluster
//! (`scripts/kube-cluster.sh`): where its kubeconfig and kubectl are, whether it
//! answers, and whether a run's namespace is still there.

use super::{built_or_not_run_at, cache_dir, record_not_run};
use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

const KUBE_VERSION: &str = "v1.34.4";

/// One run on the cluster at a time: several pairs of LND nodes at once would swamp
/// two cores.
pub static CLUSTER: Mutex<()> = Mutex::new(());

pub fn kubeconfig() -> PathBuf {
    cache_dir().join("kube/cluster/admin.kubeconfig")
}

pub fn kubectl() -> PathBuf {
    cache_dir().join(format!("kube/{KUBE_VERSION}/bin/kubectl"))
}

/// kubectl with the cluster's kubeconfig.
pub fn kubectl_command() -> Command {
    let mut c = Command::new(kubectl());
    c.arg("--kubeconfig").arg(kubeconfig());
    c
}

/// True when the cluster answers. False, recorded as not run, when its binaries are
/// not built, or (outside CI) it is not up; under `CI=true` a built cluster that does
/// not answer fails the test (`.ci/run` brings it up).
pub fn cluster_or_not_run(test: &str) -> bool {
    let build = "scripts/build-kube.sh, then scripts/kube-cluster.sh up";
    if !built_or_not_run_at(test, &kubectl(), build) {
        return false;
    }
    let up = (kubectl_command().args(["get", "--raw", "/readyz"]))
        .output()
        .expect("run kubectl");
    if up.status.success() {
        return true;
    }
    let why = String::from_utf8_lossy(&up.stderr);
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("CI=true and the cluster's binaries are built, but it does not answer: {why}");
    }
    record_not_run(
        test,
        &format!("the local cluster is not up ({build}): {why}"),
    );
    false
}

/// Whether namespace `name` exists on the cluster.
pub fn namespace_exists(name: &str) -> bool {
    let out = kubectl_command()
        .args(["get", "namespace", name, "--ignore-not-found", "-o", "name"])
        .output()
        .expect("run kubectl");
    assert!(out.status.success(), "kubectl get namespace: {out:?}");
    !String::from_utf8_lossy(&out.stdout).trim().is_empty()
}

/// Runs the scenario text to its end on the cluster (exit 0); its report.json
/// (schema-checked, on kubernetes) and log. Nothing of the run may be left in its run
/// dir, nor its namespace.
#[cfg(feature = "kubernetes")]
pub fn run_on_cluster(text: &str) -> (serde_json::Value, String) {
    let run = super::scenario_run::Finished::run_with(text, |cmd| {
        cmd.env("KUBECONFIG", kubeconfig());
    });
    let log = &run.log;
    let run_id = (log.lines())
        .find_map(|l| l.strip_prefix("run ")?.split(':').next())
        .expect("a `run <id>:` line");
    let namespace = lnbench_tui::runtime::kube::objects::namespace_for(run_id);
    assert!(!namespace_exists(&namespace), "{namespace} left\n{log}");
    let report = run.report_on("kubernetes (");
    (report, run.log)
}
