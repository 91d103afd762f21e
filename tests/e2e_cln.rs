//! End to end with Core Lightning: real CLN nodes (and LND beside them) on a real Bitcoin
//! Core regtest chain, through the real binary: CLN pays CLN by keysend as processes and
//! in containers, and LND and CLN pay each other. CLN and bitcoind build from source
//! trees (`CLN_SRC=<tree> scripts/build-nodes.sh`, `BITCOIN_SRC=<tree> ...`); where the
//! build cache lacks them these tests say they did not run (stderr and
//! `target/tmp/not-run/`, counted by `.ci/run`), never pass silently.

mod common;

use common::docker::{block_on, labelled};
use common::running::Running;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const CLN_BUILD: &str = "CLN_SRC=<Core Lightning source tree> scripts/build-nodes.sh";
const BITCOIND_BUILD: &str = "BITCOIN_SRC=<Bitcoin Core source tree> scripts/build-nodes.sh";

/// True when CLN and bitcoind are built; otherwise records that `test` did not run.
fn built(test: &str) -> bool {
    built_or_not_run(test, "lightningd", CLN_BUILD)
        && built_or_not_run(test, "bitcoind", BITCOIND_BUILD)
}

/// One run of a scenario text through the binary, headless.
struct Run {
    running: Running,
    work: tempfile::TempDir,
}

impl Run {
    fn start(text: &str, payments: u64) -> Run {
        let work = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(work.path().join("runs")).unwrap();
        let scenario = work.path().join("scenario.yaml");
        std::fs::write(&scenario, text).unwrap();
        let mut cmd = Command::new(lnbench());
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

    fn report(&self) -> serde_json::Value {
        let path = self.work.path().join("report").join("report.json");
        let text = std::fs::read_to_string(&path).expect("report.json");
        serde_json::from_str(&text).expect("report.json is JSON")
    }

    /// Waits for a successful exit and returns the report, checked for `payments`
    /// successes and no failure.
    fn succeeded(&mut self, payments: u64) -> (serde_json::Value, String) {
        let (status, log) = self.running.wait_exit(Duration::from_secs(900));
        assert_eq!(status.code(), Some(0), "exit status {status:?}\n{log}");
        let report = self.report();
        assert_matches_schema(&report);
        assert_eq!(report["complete"], true);
        assert_eq!(report["results"]["ok"], payments, "{:#}", report["results"]);
        assert_eq!(report["results"]["failed"], 0, "{:#}", report["results"]);
        assert_eq!(report["chain"]["implementation"], "bitcoind");
        eprintln!(
            "{}: {} payments, {:.1} TPS, p50 {} us, p99 {} us",
            report["scenario"]["name"],
            report["results"]["ok"],
            report["results"]["tps_avg"].as_f64().unwrap_or_default(),
            report["results"]["latency"]["p50_us"],
            report["results"]["latency"]["p99_us"],
        );
        (report, log)
    }
}

fn fixture() -> String {
    std::fs::read_to_string(repo_file(
        "tests/fixtures/scenarios/valid/cln-pays-cln.yaml",
    ))
    .unwrap()
}

fn assert_nothing_left(run_dir: &Path, log: &str) {
    let left = processes_mentioning(run_dir);
    assert!(
        left.is_empty(),
        "processes of the run still alive: {left:?}\n{log}"
    );
    let entries = std::fs::read_dir(run_dir).map_or(0, |d| d.count());
    assert_eq!(entries, 0, "the run directory is removed after the run");
}

/// The report's node of that name.
fn node<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == name)
        .unwrap_or_else(|| panic!("node {name} in {:#}", report["nodes"]))
}

#[test]
fn cln_pays_cln_by_keysend_locally() {
    if !built("cln_pays_cln_by_keysend_locally") {
        return;
    }
    let mut run = Run::start(&fixture(), 200);
    let (report, log) = run.succeeded(200);
    for step in [
        "chain up",
        "nodes up",
        "wallets funded",
        "channels active",
        "routes ready",
    ] {
        assert!(log.contains(step), "setup step {step:?} not shown:\n{log}");
    }
    for name in ["alice", "bob"] {
        let n = node(&report, name);
        assert_eq!(n["implementation"], "cln", "{n:#}");
        let version = n["version"].as_str().unwrap();
        assert!(version.starts_with("v26.06"), "{name}: {version}");
        assert!(
            n["binary"].as_str().unwrap().ends_with("lightningd"),
            "{n:#}"
        );
    }
    assert_nothing_left(&run.run_dir(), &log);
}

/// LND (alice) and CLN (bob) on one chain, channels from `payer`, paid by invoice:
/// the payee makes the invoices, and setup's probes are keysends the same way.
fn mixed(payer: &str, payee: &str) -> String {
    format!(
        "name: {payer}-pays-{payee}
description: Can LND and Core Lightning pay each other?
runtime: local
chain:
  implementation: bitcoind
nodes:
  alice:
    implementation: lnd
  bob:
    implementation: cln
channels:
  - from: {payer}
    to: {payee}
    capacity_sat: 5000000
    count: 5
workload:
  kind: invoice
  senders: [{payer}]
  receiver: {payee}
  amount_msat: 1000
  concurrency: 5
  stop:
    payments: 2000
  payment_timeout: 60s
"
    )
}

#[test]
fn lnd_pays_cln_and_cln_pays_lnd() {
    if !built("lnd_pays_cln_and_cln_pays_lnd") {
        return;
    }
    for (payer, payee) in [("alice", "bob"), ("bob", "alice")] {
        let mut run = Run::start(&mixed(payer, payee), 200);
        let (report, log) = run.succeeded(200);
        assert_eq!(node(&report, "alice")["implementation"], "lnd");
        assert_eq!(node(&report, "bob")["implementation"], "cln");
        assert_eq!(node(&report, payer)["role"], "sender");
        assert_eq!(report["workload"]["kind"], "invoice");
        assert_nothing_left(&run.run_dir(), &log);
    }
}

#[test]
fn cln_pays_cln_by_keysend_in_docker() {
    if !built("cln_pays_cln_by_keysend_in_docker") {
        return;
    }
    let Some(docker) = common::docker::engine() else {
        return;
    };
    let chain = lnbench_tui::chain::driver(lnbench_tui::chain::ChainKind::Bitcoind).local_image();
    let cln = lnbench_tui::node::driver(lnbench_tui::node::Implementation::Cln)
        .images(None)
        .local;
    for image in [&chain, &cln] {
        assert!(
            block_on(docker.inspect_image(image)).is_ok(),
            "image {image} is missing: run scripts/build-images.sh (scripts/setup.sh --dev does)"
        );
    }
    let text = fixture().replace("runtime: local", "runtime: docker");
    let mut run = Run::start(&text, 200);
    let (report, log) = run.succeeded(200);
    let runtime = report["runtime"].as_str().unwrap();
    assert!(
        runtime.contains(&cln) && runtime.contains(&chain),
        "{runtime}"
    );
    assert_eq!(node(&report, "bob")["implementation"], "cln");
    let run_id = run.running.run_id();
    let (containers, networks) = labelled(Some(&run_id));
    assert!(
        containers.is_empty() && networks.is_empty(),
        "left behind: {containers:?} {networks:?}\n{log}"
    );
}
