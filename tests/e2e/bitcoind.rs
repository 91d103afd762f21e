//! End to end on Bitcoin Core: two real LND nodes on a real bitcoind regtest chain,
//! through the real binary: a keysend run on each runtime, SIGINT mid-load, and bitcoind
//! killed mid-load. bitcoind builds from a source tree (`BITCOIN_SRC=<tree>
//! scripts/build-nodes.sh`); where the build cache lacks it these tests say they did not
//! run (stderr and `target/tmp/not-run/`, counted by `.ci/run`), never pass silently.

use crate::common::docker::{engine, labelled};
use crate::common::running::Running;
use crate::common::*;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One run of the bitcoind scenario, `edit` applied to its text.
struct Run {
    running: Running,
    work: tempfile::TempDir,
}

impl Run {
    fn start(payments: u64, edit: impl FnOnce(String) -> String) -> Run {
        require_node_binaries();
        let work = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(work.path().join("runs")).unwrap();
        let text = std::fs::read_to_string(repo_file(
            "tests/fixtures/scenarios/valid/alice-pays-bob-bitcoind.yaml",
        ))
        .unwrap();
        let scenario = work.path().join("bitcoind.yaml");
        std::fs::write(&scenario, edit(text)).unwrap();
        let mut cmd = lnbench_command();
        cmd.arg(&scenario)
            .args(["--payments", &payments.to_string(), "--report"])
            .arg(work.path().join("report"))
            .arg("--run-dir")
            .arg(work.path().join("runs"));
        Run {
            running: Running::spawn(cmd),
            work,
        }
    }

    fn run_dir(&self) -> PathBuf {
        self.work.path().join("runs")
    }

    fn report(&self) -> (serde_json::Value, String) {
        let path = self.work.path().join("report").join("report.json");
        let text = std::fs::read_to_string(&path).expect("report.json");
        (
            serde_json::from_str(&text).expect("report.json is JSON"),
            text,
        )
    }
}

fn assert_no_process_left(run_dir: &Path, log: &str) {
    let left = processes_mentioning(run_dir);
    assert!(
        left.is_empty(),
        "processes of the run still alive: {left:?}\n{log}"
    );
}

/// What every successful run on Bitcoin Core reports.
fn assert_lnd_on_bitcoind(report: &serde_json::Value, payments: u64) {
    assert_matches_schema(report);
    assert_eq!(report["complete"], true);
    assert_eq!(report["results"]["ok"], payments, "{:#}", report["results"]);
    assert_eq!(report["results"]["failed"], 0, "{:#}", report["results"]);
    let chain = &report["chain"];
    assert_eq!(chain["implementation"], "bitcoind", "{chain:#}");
    let version = chain["version"].as_str().unwrap();
    assert!(
        version.contains("Bitcoin Core") && version.contains("source "),
        "the chain's version and source commit: {version}"
    );
}

#[test]
fn lnd_on_bitcoind_pays_by_keysend_locally() {
    if !built_or_not_run(
        "lnd_on_bitcoind_pays_by_keysend_locally",
        "bitcoind",
        BITCOIND_BUILD,
    ) {
        return;
    }
    let mut run = Run::start(300, |t| t);
    run.running.wait_for_load(1);
    let with_passwords = processes_with_passwords();
    assert!(
        with_passwords.is_empty(),
        "passwords on command lines: {with_passwords:?}"
    );
    let (status, log) = run.running.wait_exit(Duration::from_secs(600));
    assert_eq!(status.code(), Some(0), "exit status {status:?}\n{log}");
    for step in ["chain up", "nodes up", "wallets funded", "channels active"] {
        assert!(log.contains(step), "setup step {step:?} not shown:\n{log}");
    }
    let (report, text) = run.report();
    assert_lnd_on_bitcoind(&report, 300);
    let left = std::fs::read_dir(run.run_dir()).map_or(0, |d| d.count());
    assert_eq!(left, 0, "the run directory is removed after the run");
    // The chain's RPC password is not in the report.
    assert!(
        !text.contains("rpcpassword="),
        "the chain's password in report.json"
    );
    assert_no_process_left(&run.run_dir(), &log);
}

#[test]
fn lnd_on_bitcoind_pays_by_keysend_in_docker() {
    if !built_or_not_run(
        "lnd_on_bitcoind_pays_by_keysend_in_docker",
        "bitcoind",
        BITCOIND_BUILD,
    ) {
        return;
    }
    let Some(docker) = engine() else {
        return;
    };
    let image = lnbench_tui::chain::driver(lnbench_tui::chain::ChainKind::Bitcoind).local_image();
    assert!(
        crate::common::docker::block_on(docker.inspect_image(&image)).is_ok(),
        "image {image} is missing: run scripts/build-images.sh (scripts/setup.sh --dev does)"
    );
    let mut run = Run::start(300, |t| t.replace("runtime: local", "runtime: docker"));
    run.running.wait_for_load(1);
    // Container processes show in the host's /proc too.
    let with_passwords = processes_with_passwords();
    assert!(
        with_passwords.is_empty(),
        "passwords on command lines: {with_passwords:?}"
    );
    let (status, log) = run.running.wait_exit(Duration::from_secs(600));
    assert_eq!(status.code(), Some(0), "exit status {status:?}\n{log}");
    let (report, _) = run.report();
    assert_lnd_on_bitcoind(&report, 300);
    let runtime = report["runtime"].as_str().unwrap();
    assert!(runtime.contains(&image), "{runtime}");
    let run_id = run.running.run_id();
    let (containers, networks) = labelled(Some(&run_id));
    assert!(
        containers.is_empty() && networks.is_empty(),
        "left behind: {containers:?} {networks:?}\n{log}"
    );
}

#[test]
fn sigint_mid_load_on_bitcoind_ends_cleanly() {
    if !built_or_not_run(
        "sigint_mid_load_on_bitcoind_ends_cleanly",
        "bitcoind",
        BITCOIND_BUILD,
    ) {
        return;
    }
    let mut run = Run::start(1_000_000, |t| t);
    run.running.wait_for_load(2);
    kill(Pid::from_raw(run.running.child.id() as i32), Signal::SIGINT).expect("SIGINT");
    let (status, log) = run.running.wait_exit(Duration::from_secs(90));
    assert_eq!(status.code(), Some(130), "exit status {status:?}\n{log}");
    assert_no_process_left(&run.run_dir(), &log);
    let (report, _) = run.report();
    assert_eq!(report["complete"], false);
    assert!(report["results"]["ok"].as_u64().unwrap() > 0);
}

#[test]
fn bitcoind_killed_mid_load_fails_the_run_naming_the_chain() {
    if !built_or_not_run(
        "bitcoind_killed_mid_load_fails_the_run_naming_the_chain",
        "bitcoind",
        BITCOIND_BUILD,
    ) {
        return;
    }
    let mut run = Run::start(1_000_000, |t| t);
    run.running.wait_for_load(2);
    let chain = processes_mentioning(&run.run_dir())
        .into_iter()
        .find(|(_, cmd)| cmd.contains("bitcoind") && cmd.contains("-regtest"))
        .expect("the run's bitcoind is running");
    kill(Pid::from_raw(chain.0 as i32), Signal::SIGKILL).expect("kill bitcoind");
    let (status, log) = run.running.wait_exit(Duration::from_secs(120));
    assert_eq!(status.code(), Some(3), "exit status {status:?}\n{log}");
    assert!(log.contains("chain exited during the load"), "{log}");
    assert_no_process_left(&run.run_dir(), &log);
    let (report, _) = run.report();
    assert_eq!(report["complete"], false);
    let why = report["interrupted_by"].as_str().unwrap_or_default();
    assert!(why.contains("chain exited"), "{why}");
}
