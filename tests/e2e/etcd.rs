//! End to end through the binary: alice pays bob 200 keysends with both LND nodes on
//! etcd, which the runtime starts for the run: as local processes (one server, and a
//! three-member cluster) and as containers of the run. The report is valid, lists the
//! etcd members under `services` with their resources (and in the resource table), and
//! no etcd process or container is left afterwards.
//!
//! The docker case skips (with a message) only when no engine answers and CI is not
//! set; a missing lnbench/etcd image fails it.

use crate::common::docker::{block_on, engine, labelled};
use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::sync::Mutex;

const SCENARIO: &str = "tests/fixtures/etcd/alice-pays-bob-etcd.yaml";
const PAYMENTS: u64 = 200;

/// One network at a time: the machine is small.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Runs the fixture with `from` replaced by `to`; the report and the run's stderr.
fn run(work: &Path, from: &str, to: &str) -> (Value, String) {
    let text = std::fs::read_to_string(repo_file(SCENARIO)).unwrap();
    assert!(text.contains(from), "the fixture has no {from:?}");
    let scenario = work.join("etcd.yaml");
    std::fs::write(&scenario, text.replacen(from, to, 1)).unwrap();
    let runs = work.join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    let report_dir = work.join("report");
    let out = lnbench_command()
        .arg(&scenario)
        .args(["--no-tui", "--report"])
        .arg(&report_dir)
        .arg("--run-dir")
        .arg(&runs)
        .output()
        .expect("run lnbench-tui");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{}\nstderr:\n{stderr}",
        String::from_utf8_lossy(&out.stdout)
    );
    let left = processes_mentioning(&runs);
    assert!(
        left.is_empty(),
        "processes of the run still alive: {left:?}"
    );
    let text = std::fs::read_to_string(report_dir.join("report.json")).unwrap();
    let report: Value = serde_json::from_str(&text).unwrap();
    assert_matches_schema(&report);
    let summary = std::fs::read_to_string(report_dir.join("summary.md")).unwrap();
    (report, format!("{stderr}\n{summary}"))
}

/// Every payment succeeded, and the etcd members (`names`) are listed with resources
/// read over the load, in the report and in summary.md's resource table.
fn assert_paid_on_etcd(report: &Value, text: &str, names: &[&str]) {
    assert_eq!(report["complete"], true);
    assert_eq!(report["results"]["ok"], PAYMENTS, "{:#}", report["results"]);
    assert_eq!(report["results"]["failed"], 0, "{:#}", report["results"]);
    let services = report["services"].as_array().expect("services listed");
    let listed: Vec<&str> = services
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, names, "{services:#?}");
    for s in services {
        assert_eq!(s["implementation"], "etcd");
        assert!(s["version"].as_str().unwrap().starts_with('3'), "{s:#}");
        let r = &s["resources"];
        assert!(r["mem_bytes_peak"].as_u64().unwrap() > 0, "{s:#}");
        assert!(r["cpu_pct_avg"].as_f64().is_some(), "{s:#}");
        assert!(r["data_dir_bytes_end"].as_u64().unwrap() > 0, "{s:#}");
        assert!(
            text.contains(&format!("| {} |", s["name"].as_str().unwrap())),
            "{text}"
        );
    }
}

#[test]
fn lnd_pair_on_a_local_etcd_pays_and_leaves_nothing() {
    require_node_binaries();
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let work = tempfile::tempdir().unwrap();
    let (report, text) = run(work.path(), "runtime: local", "runtime: local");
    assert_eq!(report["runtime"], "local");
    assert_paid_on_etcd(&report, &text, &["etcd"]);
}

#[test]
fn lnd_pair_on_a_local_three_member_etcd_cluster_pays_and_leaves_nothing() {
    require_node_binaries();
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let work = tempfile::tempdir().unwrap();
    let (report, text) = run(
        work.path(),
        "pull: never",
        "pull: never\netcd: { members: 3 }",
    );
    assert_paid_on_etcd(&report, &text, &["etcd-1", "etcd-2", "etcd-3"]);
}

#[test]
fn lnd_pair_on_an_etcd_container_pays_and_leaves_nothing() {
    let Some(docker) = engine() else {
        return;
    };
    let image = block_on(lnbench_tui::runtime::docker::etcd::image(&docker))
        .unwrap_or_else(|e| panic!("{e}"));
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let work = tempfile::tempdir().unwrap();
    let (report, text) = run(work.path(), "runtime: local", "runtime: docker");
    assert!(report["runtime"].as_str().unwrap().starts_with("docker ("));
    assert_paid_on_etcd(&report, &text, &["etcd"]);
    assert_eq!(
        Some(report["services"][0]["version"].as_str().unwrap()),
        image.rsplit(':').next()
    );
    let run_id = text
        .lines()
        .find_map(|l| l.strip_prefix("run ")?.split(':').next())
        .unwrap_or_else(|| panic!("no `run <id>:` line:\n{text}"));
    let (containers, networks) = labelled(Some(run_id));
    assert!(
        containers.is_empty() && networks.is_empty(),
        "left behind by run {run_id}: containers {containers:?}, networks {networks:?}"
    );
}
