//! End to end on a real Docker engine, through the binary: alice pays bob with both
//! nodes (LND, then Core Lightning) on PostgreSQL, which the docker runtime starts as a
//! container of the run (one database per node), and which lets each node in only with
//! the run's password (scram-sha-256, as the server's log shows). The local images
//! only (`pull: never`): no test reaches a registry. Afterwards nothing labelled with
//! the run is left.
//!
//! Skips (with a message) only when no engine answers and CI is not set; under
//! `CI=true` a missing engine fails the test, and so does a missing image.

use crate::common::docker::{block_on, engine, engine_ready, labelled};
use crate::common::*;
use bollard::query_parameters::ListContainersOptionsBuilder;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

const SCENARIO: &str = "tests/fixtures/docker/alice-pays-bob-postgres.yaml";
const CLN_SCENARIO: &str = "tests/fixtures/scenarios/valid/cln-pays-cln.yaml";

/// The PostgreSQL image the runtime would use, when an engine answers (it must exist
/// then, like the node images). No engine: skip outside CI, fail in CI.
fn postgres_image() -> Option<String> {
    let docker = engine_ready(&[])?;
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

/// What `docker inspect` shows of the command line and environment of the containers
/// of nodes `nodes` of the run of scenario `name`, read while the run goes on (until
/// each was seen, or `child` exits).
fn node_commands(name: &str, nodes: &[&str], child: &mut Child) -> Vec<String> {
    let docker = engine().unwrap();
    let mut seen: HashMap<String, String> = HashMap::new();
    while seen.len() < nodes.len() && child.try_wait().unwrap().is_none() {
        let label = format!("lnbench.scenario={name}");
        let filters = HashMap::from([("label", vec![label.as_str()])]);
        let options = ListContainersOptionsBuilder::default()
            .filters(&filters)
            .build();
        let listed = block_on(docker.list_containers(Some(options))).unwrap_or_default();
        for c in listed {
            let labels = c.labels.unwrap_or_default();
            let node = labels.get("lnbench.node").cloned().unwrap_or_default();
            if !nodes.contains(&node.as_str()) || seen.contains_key(&node) {
                continue;
            }
            let id = c.id.unwrap_or_default();
            if let Ok(inspected) = block_on(docker.inspect_container(&id, None)) {
                let config = inspected.config.unwrap_or_default();
                let shown = format!("{:?} {:?} {:?}", config.cmd, config.env, inspected.args);
                seen.insert(node, shown);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert_eq!(
        seen.len(),
        nodes.len(),
        "not every node's container was seen: {seen:?}"
    );
    seen.into_values().collect()
}

/// Runs the scenario `name` at `scenario` with 100 payments, keeping its run directory:
/// the report and the run directory. Nothing of the run is left in the engine, and no
/// node's container has its database's DSN on its command line or in its environment.
fn run_kept(name: &str, scenario: &Path, work: &Path) -> (serde_json::Value, PathBuf) {
    let runs = work.join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    let report_dir = work.join("report");
    let stderr_path = work.join("stderr");
    let mut child = lnbench_command()
        .arg(scenario)
        .args(["--payments", "100", "--no-tui", "--keep", "--report"])
        .arg(&report_dir)
        .arg("--run-dir")
        .arg(&runs)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .expect("run lnbench-tui");
    let commands = node_commands(name, &["alice", "bob"], &mut child);
    let status = child.wait().unwrap();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    for shown in &commands {
        assert!(
            !shown.contains("postgres://") && !shown.contains("lnbench:"),
            "a DSN on a node's command line: {shown}"
        );
    }
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
    (report, run_dir(&runs))
}

/// The server's log (kept in the run directory) shows each node's database opened by
/// a client that gave the run's password (scram-sha-256): no TCP client gets in
/// without it.
fn assert_nodes_authenticated(dir: &Path, nodes: &[&str]) {
    let pg_log = std::fs::read_to_string(dir.join("postgres.log")).unwrap();
    assert!(
        pg_log.contains("database system is ready to accept connections"),
        "{pg_log}"
    );
    for node in nodes {
        let authorized = format!("connection authorized: user=lnbench database={node}");
        assert!(pg_log.contains(&authorized), "no `{authorized}`:\n{pg_log}");
    }
    assert!(
        pg_log.contains("method=scram-sha-256") && !pg_log.contains("method=trust"),
        "{pg_log}"
    );
}

#[test]
fn alice_pays_bob_with_both_nodes_on_a_postgres_container() {
    let Some(pg_image) = postgres_image() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let name = "docker-alice-pays-bob-postgres";
    let (report, dir) = run_kept(name, &repo_file(SCENARIO), work.path());
    let runtime = report["runtime"].as_str().unwrap();
    assert!(
        runtime.starts_with("docker (") && runtime.contains(&pg_image),
        "{runtime}"
    );
    assert_nodes_authenticated(&dir, &["alice", "bob"]);
    for node in ["alice", "bob"] {
        let log = std::fs::read_to_string(dir.join(format!("{node}.log"))).unwrap();
        assert!(
            log.to_lowercase().contains("postgres"),
            "{node}'s log never mentions postgres:\n{log}"
        );
    }
}

/// Core Lightning (`database: postgres`) gets the DSN with the password in its config
/// file (`wallet=`), and opens its database with it.
#[test]
fn cln_pays_cln_on_a_postgres_container() {
    if !built_or_not_run(
        "cln_pays_cln_on_a_postgres_container",
        "lightningd",
        CLN_BUILD,
    ) {
        return;
    }
    let Some(pg_image) = postgres_image() else {
        return;
    };
    let text = std::fs::read_to_string(repo_file(CLN_SCENARIO)).unwrap();
    let text = text
        .replace("runtime: local", "runtime: docker\npull: never")
        .replace(
            "    version: v26.06.6\n",
            "    version: v26.06.6\n    database: postgres\n",
        );
    assert_eq!(text.matches("database: postgres").count(), 2, "{text}");
    // A name of its own: its containers are found by it, and cln:: runs `cln-pays-cln`
    // in Docker too, beside this test.
    let text = text.replacen(
        "name: cln-pays-cln\n",
        "name: cln-pays-cln-on-postgres\n",
        1,
    );
    assert!(text.contains("name: cln-pays-cln-on-postgres\n"), "{text}");
    let work = tempfile::tempdir().unwrap();
    let scenario = work.path().join("cln-on-postgres.yaml");
    std::fs::write(&scenario, text).unwrap();
    let (report, dir) = run_kept("cln-pays-cln-on-postgres", &scenario, work.path());
    let runtime = report["runtime"].as_str().unwrap();
    assert!(runtime.contains(&pg_image), "{runtime}");
    assert_nodes_authenticated(&dir, &["alice", "bob"]);
}
