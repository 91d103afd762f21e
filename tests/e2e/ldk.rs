//! End to end with LDK: real ldk-server nodes (and LND beside them) on a real Bitcoin
//! Core regtest chain, through the real binary. ldk-server at the pinned commit has no
//! keysend, so LDK pays and is paid by BOLT 11 invoices: LDK pays LDK as processes and in
//! containers, LND and LDK pay each other, SIGINT mid-load and a killed LDK node leave
//! nothing running. The API messages are the tool's own definitions: these runs are
//! what checks them against the server. ldk-server and bitcoind build from source trees
//! (`LDK_SERVER_SRC=<tree> scripts/build-nodes.sh`, `BITCOIN_SRC=<tree> ...`); where the
//! build cache lacks them these tests say they did not run (stderr and
//! `target/tmp/not-run/`, counted by `.ci/run`), never pass silently.

use crate::common::impls::*;
use crate::common::scenario_run::{ScenarioRun as Run, assert_nothing_left, node};
use crate::common::*;
use std::path::{Path, PathBuf};

#[test]
fn ldk_pays_ldk_by_invoice_locally() {
    if !LDK.built("ldk_pays_ldk_by_invoice_locally") {
        return;
    }
    let mut run = Run::start(&yaml(&LDK.fixture()), 200);
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
    let (report, log) = LDK.paid(&mut run, 200, "invoice");
    LDK.assert_pair_ran(&report, &log);
    for name in ["alice", "bob"] {
        let n = node(&report, name);
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

#[test]
fn lnd_pays_ldk_and_ldk_pays_lnd() {
    let runs = [("alice", "bob", "invoice"), ("bob", "alice", "invoice")];
    lnd_and_it_pay_each_other(&LDK, "lnd_pays_ldk_and_ldk_pays_lnd", &runs);
}

#[test]
fn ldk_pays_ldk_by_invoice_in_docker() {
    pays_itself_in_docker(&LDK, "ldk_pays_ldk_by_invoice_in_docker", |_| {});
}

#[test]
fn sigint_mid_load_leaves_no_ldk_node_running() {
    sigint_mid_load_leaves_nothing(&LDK, "sigint_mid_load_leaves_no_ldk_node_running", None);
}

#[test]
fn an_ldk_node_killed_mid_load_ends_the_run_with_its_log() {
    let test = "an_ldk_node_killed_mid_load_ends_the_run_with_its_log";
    a_node_killed_mid_load_ends_the_run_with_its_log(&LDK, test);
}

/// Needs no node: validation refuses the workload before anything starts.
#[test]
fn a_keysend_scenario_with_an_ldk_node_fails_validation_with_the_reason() {
    let file = repo_file("tests/fixtures/scenarios/invalid/keysend-with-ldk.yaml");
    let out = lnbench_command()
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
    let out = lnbench_command()
        .arg(&file)
        .arg("--run-dir")
        .arg(work.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 0);
}
