//! Snapshots end to end, through the real binary on real LND nodes and a real btcd
//! chain: a two-node network saved after setup, a run restored from it that pays at
//! once (no funding, no channel opening), and the refusals of a tampered snapshot, of
//! one saved with another version and of one saved for another network, each located
//! and nothing left running.

mod common;

use common::scenario_run::lnbench_in;
use common::*;
use std::path::Path;
use std::process::{Command, Output};

const SCENARIO: &str = "\
name: e2e-snapshot
runtime: local
chain:
  implementation: btcd
nodes:
  alice:
    implementation: lnd
  bob:
    implementation: lnd
channels:
  - from: alice
    to: bob
    capacity_sat: 2000000
    count: 2
workload:
  kind: keysend
  senders: [alice]
  receiver: bob
  amount_msat: 1000
  concurrency: 4
  stop:
    payments: 40
";

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn copy_dir(from: &Path, to: &Path) {
    let status = Command::new("cp").arg("-a").arg(from).arg(to).status();
    assert!(status.expect("cp").success());
}

/// A run of `scenario` from the snapshot `snap` that must be refused: its exit code,
/// and its error output.
fn refused(work: &Path, scenario: &str, snap: &str) -> (Option<i32>, String) {
    let out = lnbench_in(
        work,
        &[
            scenario,
            "--snapshot",
            snap,
            "--run-dir",
            "runs",
            "--no-store",
        ],
    );
    (out.status.code(), stderr(&out))
}

#[test]
fn a_saved_network_is_restored_and_pays_and_a_changed_one_is_refused() {
    require_node_binaries();
    let work = tempfile::tempdir().expect("temp dir");
    let w = work.path();
    std::fs::create_dir(w.join("runs")).unwrap();
    std::fs::write(w.join("scenario.yaml"), SCENARIO).unwrap();

    let manifest = saved(w);
    restored_and_pays(w, &manifest);
    refused_when_changed(w, &manifest);
    through_the_scenario_field(w);
}

/// Save: setup as a run does, then everything stopped and kept; the manifest.
fn saved(w: &Path) -> serde_json::Value {
    let out = lnbench_in(
        w,
        &[
            "snapshot",
            "save",
            "scenario.yaml",
            "--to",
            "./snap",
            "--run-dir",
            "runs",
        ],
    );
    let log = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{log}");
    assert!(log.contains("snapshot saved: ./snap"), "{log}");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(w.join("snap/manifest.json")).unwrap())
            .unwrap();
    let files = manifest["files"].as_object().expect("files");
    for prefix in ["chain/", "alice/", "bob/"] {
        assert!(
            files.keys().any(|k| k.starts_with(prefix)),
            "{prefix}: {files:?}"
        );
    }
    assert!(files.contains_key("chain/snapshot-blocks.hex"), "{files:?}");
    // The RPC passwords of the saving run are not kept.
    assert!(!files.keys().any(|k| k.ends_with(".conf")), "{files:?}");

    manifest
}

/// Restore: no funding and no channel opening, and the restored channels pay.
fn restored_and_pays(w: &Path, manifest: &serde_json::Value) {
    let setup_s = manifest["setup_s"].as_f64().expect("setup_s");
    let out = lnbench_in(
        w,
        &[
            "scenario.yaml",
            "--snapshot",
            "./snap",
            "--report",
            "report",
            "--run-dir",
            "runs",
            "--no-store",
        ],
    );
    let log = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{log}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(w.join("report/report.json")).unwrap())
            .unwrap();
    assert_matches_schema(&report);
    assert!(
        report["results"]["ok"].as_u64().unwrap() > 0,
        "{:#}",
        report["results"]
    );
    assert_eq!(report["results"]["failed"], 0, "{:#}", report["results"]);
    assert_eq!(
        report["snapshot"]["name"], "snap",
        "{:#}",
        report["snapshot"]
    );
    assert_eq!(report["snapshot"]["saved_at"], manifest["saved_at"]);
    let steps: Vec<&str> = (report["setup"].as_array().unwrap().iter())
        .map(|s| s["step"].as_str().unwrap())
        .collect();
    assert!(steps.contains(&"snapshot restored"), "{steps:?}");
    assert!(!steps.contains(&"wallets funded"), "{steps:?}");
    let restored_s: f64 = (report["setup"].as_array().unwrap().iter())
        .map(|s| s["seconds"].as_f64().unwrap())
        .sum();
    eprintln!(
        "setup {setup_s:.1} s when saved; restored setup {restored_s:.1} s (files {:.2} s)",
        report["snapshot"]["restore_s"].as_f64().unwrap()
    );
    // Each restored node's own start-up, within the restored setup.
    for node in report["nodes"].as_array().unwrap() {
        let ready = node["ready_s"].as_f64().unwrap_or(-1.0);
        assert!(ready > 0.0 && ready < restored_s, "{node:#}");
        eprintln!("{} ready after {ready:.2} s", node["name"]);
    }
}

/// A changed file, another version, another node, no snapshot: each refused, located.
fn refused_when_changed(w: &Path, manifest: &serde_json::Value) {
    // A changed file: refused, named, exit 2.
    copy_dir(&w.join("snap"), &w.join("tampered"));
    let cert = w.join("tampered/data/alice/tls.cert");
    let mut bytes = std::fs::read(&cert).unwrap();
    bytes.push(b'\n');
    std::fs::write(&cert, bytes).unwrap();
    let (code, log) = refused(w, "scenario.yaml", "./tampered");
    assert_eq!(code, Some(2), "{log}");
    assert!(
        log.contains("tampered/data/alice/tls.cert: the snapshot was changed after it was saved"),
        "{log}"
    );

    // Another version of a node's binary: refused at the manifest's line, exit 3.
    copy_dir(&w.join("snap"), &w.join("older"));
    let path = w.join("older/manifest.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let bob = manifest["versions"]["bob"].as_str().unwrap();
    let line = 1 + text
        .lines()
        .position(|l| l.trim_start().starts_with("\"bob\":"))
        .unwrap();
    let older = text.replace(
        &format!("\"bob\": {}", serde_json::to_string(bob).unwrap()),
        "\"bob\": \"lnd 0.0.1-beta\"",
    );
    assert_ne!(older, text);
    std::fs::write(&path, older).unwrap();
    let (code, log) = refused(w, "scenario.yaml", "./older");
    assert_eq!(code, Some(3), "{log}");
    assert!(
        log.contains(&format!("older/manifest.json:{line}:")),
        "{line}: {log}"
    );
    assert!(
        log.contains("node bob was saved with \"lnd 0.0.1-beta\""),
        "{log}"
    );

    // Another node: refused with the part that differs, exit 2.
    std::fs::write(w.join("carol.yaml"), SCENARIO.replace("bob", "carol")).unwrap();
    let (code, log) = refused(w, "carol.yaml", "./snap");
    assert_eq!(code, Some(2), "{log}");
    assert!(log.contains("saved for another network"), "{log}");
    assert!(log.contains("node carol lnd"), "{log}");

    // No snapshot there at all.
    let (code, log) = refused(w, "scenario.yaml", "./nowhere");
    assert_eq!(code, Some(2), "{log}");
    assert!(log.contains("./nowhere: no snapshot there"), "{log}");
}

/// The scenario's `snapshot:` field: restored as with the flag; refused at the field.
fn through_the_scenario_field(w: &Path) {
    let line = SCENARIO.lines().count() + 1;
    std::fs::write(
        w.join("field.yaml"),
        format!("{SCENARIO}snapshot: ./snap\n"),
    )
    .unwrap();
    let args = [
        "field.yaml",
        "--report",
        "field-report",
        "--run-dir",
        "runs",
        "--no-store",
    ];
    let out = lnbench_in(w, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(w.join("field-report/report.json")).unwrap())
            .unwrap();
    assert!(
        report["results"]["ok"].as_u64().unwrap() > 0,
        "{:#}",
        report["results"]
    );
    assert_eq!(report["snapshot"]["name"], "snap");
    std::fs::write(w.join("gone.yaml"), format!("{SCENARIO}snapshot: ./gone\n")).unwrap();
    let out = lnbench_in(w, &["gone.yaml", "--run-dir", "runs", "--no-store"]);
    let log = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{log}");
    assert!(
        log.contains(&format!("gone.yaml:{line}:11: snapshot: ./gone")),
        "{line}: {log}"
    );
}
