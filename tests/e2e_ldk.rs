//! End to end with LDK: real ldk-server nodes (and LND beside them) on a real Bitcoin
//! Core regtest chain, through the real binary. ldk-server at the pinned commit has no
//! keysend, so LDK pays and is paid by BOLT 11 invoices: LDK pays LDK as processes and in
//! containers, LND and LDK pay each other, SIGINT mid-load and a killed LDK node leave
//! nothing running. The API messages are the tool's own definitions: these runs are
//! what checks them against the server. ldk-server and bitcoind build from source trees
//! (`LDK_SERVER_SRC=<tree> scripts/build-nodes.sh`, `BITCOIN_SRC=<tree> ...`); where the
//! build cache lacks them these tests say they did not run (stderr and
//! `target/tmp/not-run/`, counted by `.ci/run`), never pass silently.

mod common;

use common::docker::{block_on, labelled};
use common::scenario_run::{ScenarioRun as Run, assert_nothing_left, node};
use common::*;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// True when ldk-server and bitcoind are built; otherwise records that `test` did not run.
fn built(test: &str) -> bool {
    built_on_bitcoind(test, "ldk-server", LDK_BUILD)
}

fn fixture() -> String {
    std::fs::read_to_string(repo_file(
        "tests/fixtures/scenarios/valid/ldk-pays-ldk.yaml",
    ))
    .unwrap()
    .replace("runtime: auto", "runtime: local")
}

/// [`Run::succeeded`], the payments being invoices (this ldk-server has no keysend).
fn paid_by_invoice(run: &mut Run, payments: u64) -> (serde_json::Value, String) {
    let (report, log) = run.succeeded(payments);
    assert_eq!(report["workload"]["kind"], "invoice");
    (report, log)
}

#[test]
fn ldk_pays_ldk_by_invoice_locally() {
    if !built("ldk_pays_ldk_by_invoice_locally") {
        return;
    }
    let mut run = Run::start(&fixture(), 200);
    // While the nodes run: their API keys are in 0600 files, on no command line.
    run.running.wait_for("load progress", 1, |l| {
        l.contains(" ok ") && l.contains("tps")
    });
    let mut keys = Vec::new();
    for name in ["alice", "bob"] {
        let dir = run_dir_of(&run.run_dir()).join(name);
        let key_file = dir.join("api_key");
        use std::os::unix::fs::PermissionsExt;
        for file in [&key_file, &dir.join("ldk-server.toml")] {
            let mode = std::fs::metadata(file).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "{} is private", file.display());
        }
        keys.push(
            std::fs::read_to_string(&key_file)
                .unwrap()
                .trim()
                .to_string(),
        );
    }
    for (pid, cmd) in processes_mentioning(&run.run_dir()) {
        for key in &keys {
            assert!(
                !cmd.contains(key.as_str()),
                "API key on the command line of {pid}"
            );
        }
    }
    let (report, log) = paid_by_invoice(&mut run, 200);
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
        assert_eq!(n["implementation"], "ldk", "{n:#}");
        let version = n["version"].as_str().unwrap();
        assert!(
            version.starts_with("ldk-server v0.1.0 (source "),
            "{name}: {version}"
        );
        assert!(
            n["binary"].as_str().unwrap().ends_with("ldk-server"),
            "{n:#}"
        );
        assert_eq!(n["pubkey"].as_str().unwrap().len(), 66, "{n:#}");
    }
    // The sender polls, and the report says how late that can make a latency.
    let completion = &node(&report, "alice")["completion"];
    assert_eq!(completion["method"], "polling", "{completion:#}");
    assert!(
        completion["late_up_to_ms"].as_f64().unwrap() > 0.0,
        "{completion:#}"
    );
    let written = run.report_text();
    for key in &keys {
        assert!(!written.contains(key.as_str()), "an API key in the report");
    }
    assert!(!log.contains(keys[0].as_str()), "an API key in the output");
    assert_nothing_left(&run.run_dir(), &log);
}

/// The one run directory under `parent` (`--run-dir`).
fn run_dir_of(parent: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(parent)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs.into_iter().next().unwrap()
}

/// LND (alice) and LDK (bob) on one chain, channels from `payer`, paid by invoice.
fn mixed(payer: &str, payee: &str) -> String {
    format!(
        "name: {payer}-pays-{payee}
description: Can LND and LDK pay each other?
runtime: local
chain:
  implementation: bitcoind
nodes:
  alice:
    implementation: lnd
  bob:
    implementation: ldk
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
fn lnd_pays_ldk_and_ldk_pays_lnd() {
    if !built("lnd_pays_ldk_and_ldk_pays_lnd") {
        return;
    }
    for (payer, payee) in [("alice", "bob"), ("bob", "alice")] {
        let mut run = Run::start(&mixed(payer, payee), 200);
        let (report, log) = paid_by_invoice(&mut run, 200);
        assert_eq!(node(&report, "alice")["implementation"], "lnd");
        assert_eq!(node(&report, "bob")["implementation"], "ldk");
        assert_eq!(node(&report, payer)["role"], "sender");
        assert_nothing_left(&run.run_dir(), &log);
    }
}

#[test]
fn ldk_pays_ldk_by_invoice_in_docker() {
    if !built("ldk_pays_ldk_by_invoice_in_docker") {
        return;
    }
    let Some(docker) = common::docker::engine() else {
        return;
    };
    let chain = lnbench_tui::chain::driver(lnbench_tui::chain::ChainKind::Bitcoind).local_image();
    let ldk = lnbench_tui::node::driver(lnbench_tui::node::Implementation::Ldk)
        .images(None)
        .local;
    for image in [&chain, &ldk] {
        assert!(
            block_on(docker.inspect_image(image)).is_ok(),
            "image {image} is missing: run scripts/build-images.sh (scripts/setup.sh --dev does)"
        );
    }
    let text = fixture().replace("runtime: local", "runtime: docker");
    let mut run = Run::start(&text, 200);
    let (report, log) = paid_by_invoice(&mut run, 200);
    let runtime = report["runtime"].as_str().unwrap();
    assert!(
        runtime.contains(&ldk) && runtime.contains(&chain),
        "{runtime}"
    );
    assert_eq!(node(&report, "bob")["implementation"], "ldk");
    let run_id = run.running.run_id();
    let (containers, networks) = labelled(Some(&run_id));
    assert!(
        containers.is_empty() && networks.is_empty(),
        "left behind: {containers:?} {networks:?}\n{log}"
    );
}

#[test]
fn sigint_mid_load_leaves_no_ldk_node_running() {
    if !built("sigint_mid_load_leaves_no_ldk_node_running") {
        return;
    }
    let mut run = Run::start(&fixture(), 100_000);
    run.running.wait_for_load(2);
    kill(Pid::from_raw(run.running.child.id() as i32), Signal::SIGINT).expect("SIGINT");
    let (status, log) = run.running.wait_exit(Duration::from_secs(120));
    assert!(!status.success(), "{status:?}\n{log}");
    let report = run.report();
    assert_eq!(report["complete"], false);
    assert_eq!(report["interrupted_by"], "SIGINT");
    assert!(report["results"]["ok"].as_u64().unwrap() > 0);
    assert_nothing_left(&run.run_dir(), &log);
}

#[test]
fn an_ldk_node_killed_mid_load_ends_the_run_with_its_log() {
    if !built("an_ldk_node_killed_mid_load_ends_the_run_with_its_log") {
        return;
    }
    let mut run = Run::start(&fixture(), 100_000);
    run.running.wait_for_load(2);
    let bob = processes_mentioning(&run.run_dir())
        .into_iter()
        .find(|(_, cmd)| cmd.contains("bob/ldk-server.toml"))
        .expect("bob's ldk-server is running");
    kill(Pid::from_raw(bob.0 as i32), Signal::SIGKILL).expect("kill bob");
    let (status, log) = run.running.wait_exit(Duration::from_secs(120));
    assert_eq!(status.code(), Some(3), "exit status {status:?}\n{log}");
    assert!(log.contains("bob exited during the load"), "{log}");
    // The tail of bob's own log follows. Which lines it holds depends on what bob was
    // doing when killed (a received payment, or gossip and chain sync after it), so
    // only that it is there is checked.
    let tail = log
        .split("last lines of its log")
        .nth(1)
        .unwrap_or_default();
    let lines = tail.lines().filter(|l| !l.trim().is_empty()).count();
    assert!(lines >= 3, "no log tail of bob's:\n{log}");
    let report = run.report();
    assert_eq!(report["complete"], false);
    assert!(
        report["interrupted_by"]
            .as_str()
            .unwrap()
            .contains("bob exited"),
        "{}",
        report["interrupted_by"]
    );
    assert_nothing_left(&run.run_dir(), &log);
}

/// Needs no node: validation refuses the workload before anything starts.
#[test]
fn a_keysend_scenario_with_an_ldk_node_fails_validation_with_the_reason() {
    let file = repo_file("tests/fixtures/scenarios/invalid/keysend-with-ldk.yaml");
    let out = Command::new(lnbench())
        .arg("validate")
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("keysend-with-ldk.yaml:16:9"), "{err}");
    assert!(err.contains("receiver bob is ldk"), "{err}");
    assert!(err.contains("has no keysend"), "{err}");
    // A run of it starts nothing either.
    let work = tempfile::tempdir().unwrap();
    let out = Command::new(lnbench())
        .arg(&file)
        .arg("--run-dir")
        .arg(work.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 0);
}
