//! End to end on real LND nodes: a short soak (`--payments 200`) with both nodes
//! restarted after the load, on the local runtime and (when an engine answers) on
//! Docker. Checks the restart figures in the report, the schema, and that nothing of
//! the run is left: no process naming its run directory, no container or network
//! labelled with its run id.
//!
//! The Docker test skips (with a message) only when no engine answers and CI is not
//! set, as tests/e2e/docker.rs does.

use crate::common::docker::{engine, labelled};
use crate::common::*;
use std::path::Path;

/// Two networks at once on two cores would time the restarts of a loaded machine.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `scenario` with 200 payments; returns the report and the run id.
fn run(scenario: &str, work: &Path) -> (serde_json::Value, String) {
    let report_dir = work.join("report");
    let out = lnbench_command()
        .arg(repo_file(scenario))
        .args(["--payments", "200", "--report"])
        .arg(&report_dir)
        .arg("--run-dir")
        .arg(work)
        .output()
        .expect("run lnbench-tui");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr:\n{stderr}");
    for node in ["alice", "bob"] {
        assert!(
            stderr.contains(&format!("restarting {node}")),
            "the restart of {node} is not shown:\n{stderr}"
        );
    }
    let run_id = stderr
        .lines()
        .find_map(|l| l.strip_prefix("run ")?.split(':').next())
        .expect("a `run <id>:` line")
        .to_string();
    let text = std::fs::read_to_string(report_dir.join("report.json")).expect("report.json");
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_matches_schema(&report);
    let html = std::fs::read_to_string(report_dir.join("report.html")).unwrap();
    assert!(html.contains("<h2>Restart</h2>"), "no restart table");
    let md = std::fs::read_to_string(report_dir.join("summary.md")).unwrap();
    assert!(md.contains("| restarted node |"), "{md}");
    assert!(md.contains("Tool RSS first / last / peak"), "{md}");
    (report, run_id)
}

fn check_restarts(report: &serde_json::Value) {
    assert_eq!(report["complete"], true);
    assert_eq!(report["results"]["ok"], 200);
    for node in report["nodes"].as_array().unwrap() {
        let r = &node["restart"];
        let secs = |f: &str| r[f].as_f64().unwrap_or_else(|| panic!("{f} in {r:#}"));
        let (stop, rpc, channels) = (secs("stop_s"), secs("rpc_s"), secs("channels_s"));
        assert!(stop > 0.0 && rpc > 0.0, "{}: {r:#}", node["name"]);
        assert!(
            rpc <= channels,
            "{}: RPC after channels: {r:#}",
            node["name"]
        );
        assert_eq!(r["active_channels"], 10, "{}: {r:#}", node["name"]);
    }
    let tool = &report["tool_resources"];
    assert!(
        tool["mem_bytes_peak"].as_u64().unwrap() > 1024 * 1024,
        "{tool:#}"
    );
}

#[test]
fn soak_restarts_both_local_nodes_after_the_load() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    require_node_binaries();
    let work = tempfile::tempdir().expect("temp dir");
    let (report, _) = run("scenarios/soak.yaml", work.path());
    check_restarts(&report);
    for node in report["nodes"].as_array().unwrap() {
        let r = &node["restart"];
        assert!(r["data_dir_bytes"].as_u64().unwrap() > 0, "{r:#}");
    }
    let left = processes_mentioning(work.path());
    assert!(
        left.is_empty(),
        "processes of the run still alive: {left:?}"
    );
}

#[test]
fn soak_restarts_both_docker_nodes_after_the_load() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if engine().is_none() {
        return;
    }
    let work = tempfile::tempdir().expect("temp dir");
    let (report, run_id) = run("tests/fixtures/docker/soak.yaml", work.path());
    assert!(report["runtime"].as_str().unwrap().starts_with("docker"));
    check_restarts(&report);
    let (containers, networks) = labelled(Some(&run_id));
    assert!(
        containers.is_empty() && networks.is_empty(),
        "run {run_id} left {containers:?} {networks:?}"
    );
}
