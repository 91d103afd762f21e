//! End to end on a real Docker engine, through the binary: alice pays bob with both
//! LND nodes on PostgreSQL, which the docker runtime starts as a container of the run
//! (one database per node). The local images only (`pull: never`): no test reaches a
//! registry. Afterwards nothing labelled with the run is left.
//!
//! Skips (with a message) only when no engine answers and CI is not set; under
//! `CI=true` a missing engine fails the test, and so does a missing image.

mod common;

use common::docker::{block_on, engine, labelled};
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

const SCENARIO: &str = "tests/fixtures/docker/alice-pays-bob-postgres.yaml";

/// The PostgreSQL image the runtime would use, when an engine answers (it must exist
/// then, like the node images). No engine: skip outside CI, fail in CI.
fn engine_ready() -> Option<String> {
    let docker = engine()?;
    let pg = block_on(lnbench_tui::runtime::docker::postgres::image(&docker));
    Some(pg.unwrap_or_else(|e| panic!("{e}")))
}

/// The one run directory (`lnbench-<run id>`) under `parent`.
fn run_dir(parent: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(parent)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("lnbench-")
        })
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].clone()
}

#[test]
fn alice_pays_bob_with_both_nodes_on_a_postgres_container() {
    let Some(pg_image) = engine_ready() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let runs = work.path().join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    let report_dir = work.path().join("report");
    let out = Command::new(lnbench())
        .arg(repo_file(SCENARIO))
        .args(["--payments", "100", "--no-tui", "--keep", "--report"])
        .arg(&report_dir)
        .arg("--run-dir")
        .arg(&runs)
        .output()
        .expect("run lnbench-tui");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let run_id = stderr
        .lines()
        .find_map(|l| l.strip_prefix("run ")?.split(':').next())
        .unwrap_or_else(|| panic!("no `run <id>:` line:\n{stderr}"))
        .to_string();
    let (containers, networks) = labelled(Some(&run_id));
    assert!(
        containers.is_empty() && networks.is_empty(),
        "left behind by run {run_id}: containers {containers:?}, networks {networks:?}\n{stderr}"
    );

    let text = std::fs::read_to_string(report_dir.join("report.json")).unwrap();
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_matches_schema(&report);
    assert_eq!(report["complete"], true);
    assert_eq!(report["results"]["ok"], 100, "{:#}", report["results"]);
    assert_eq!(report["results"]["failed"], 0, "{:#}", report["results"]);
    let runtime = report["runtime"].as_str().unwrap();
    assert!(
        runtime.starts_with("docker (") && runtime.contains(&pg_image),
        "{runtime}"
    );

    // The server ran in the run (its log saved like a node's), and each LND used it.
    let dir = run_dir(&runs);
    let pg_log = std::fs::read_to_string(dir.join("postgres.log")).unwrap();
    assert!(
        pg_log.contains("database system is ready to accept connections"),
        "{pg_log}"
    );
    for node in ["alice", "bob"] {
        let log = std::fs::read_to_string(dir.join(format!("{node}.log"))).unwrap();
        assert!(
            log.to_lowercase().contains("postgres"),
            "{node}'s log never mentions postgres:\n{log}"
        );
    }
}
