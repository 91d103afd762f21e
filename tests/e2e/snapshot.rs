//! Snapshots end to end, through the real binary on real LND nodes and a real btcd
//! chain: a two-node network saved after setup, a run restored from it that pays at
//! once (no funding, no channel opening), and the refusals of a tampered snapshot, of
//! one saved with another version and of one saved for another network, each located
//! and nothing left running. The same save and restore for Core Lightning, Eclair and
//! LDK nodes on a Bitcoin Core chain, some on PostgreSQL, locally and in Docker.

use crate::common::scenario_run::{lnbench_in, lnd_pair};
use crate::common::*;
use std::path::Path;
use std::process::{Command, Output};

/// Alice pays bob 40 keysends, both LND on btcd.
fn scenario() -> String {
    lnd_pair("e2e-snapshot", "runtime: local\n", 2000000, 2)
        + "  amount_msat: 1000
  concurrency: 4
  stop:
    payments: 40
"
}

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
    std::fs::write(w.join("scenario.yaml"), scenario()).unwrap();

    let manifest = saved(w, "scenario.yaml");
    restored_and_pays(w, "scenario.yaml", &manifest);
    refused_when_changed(w, &manifest);
    through_the_scenario_field(w);
}

/// Save: setup as a run does, then everything stopped and kept; the manifest.
fn saved(w: &Path, file: &str) -> serde_json::Value {
    let out = lnbench_in(
        w,
        &[
            "snapshot",
            "save",
            file,
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
fn restored_and_pays(w: &Path, file: &str, manifest: &serde_json::Value) -> serde_json::Value {
    restored_with(w, file, manifest, &[])
}

/// [`restored_and_pays`] with more arguments.
fn restored_with(
    w: &Path,
    file: &str,
    manifest: &serde_json::Value,
    more: &[&str],
) -> serde_json::Value {
    let setup_s = manifest["setup_s"].as_f64().expect("setup_s");
    let mut args = vec![
        file,
        "--snapshot",
        "./snap",
        "--report",
        "report",
        "--run-dir",
        "runs",
        "--no-store",
    ];
    args.extend_from_slice(more);
    let out = lnbench_in(w, &args);
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
    report
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
    std::fs::write(w.join("carol.yaml"), scenario().replace("bob", "carol")).unwrap();
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
    let line = scenario().lines().count() + 1;
    std::fs::write(
        w.join("field.yaml"),
        format!("{}snapshot: ./snap\n", scenario()),
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
    std::fs::write(
        w.join("gone.yaml"),
        format!("{}snapshot: ./gone\n", scenario()),
    )
    .unwrap();
    let out = lnbench_in(w, &["gone.yaml", "--run-dir", "runs", "--no-store"]);
    let log = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{log}");
    assert!(
        log.contains(&format!("gone.yaml:{line}:11: snapshot: ./gone")),
        "{line}: {log}"
    );
}

/// The same in Docker: each container's `/data` saved after setup, and copied into the
/// new containers of a restored run, which pays at once. A snapshot saved in Docker
/// keeps the images it ran, so the local runtime refuses it (another version).
#[test]
fn a_network_saved_in_docker_is_restored_in_docker_and_pays() {
    require_node_binaries();
    let Some(docker) = crate::common::docker::engine() else {
        return;
    };
    for image in ["lnbench/btcd:v0.24.2", "lnbench/lnd:v0.21.1-beta"] {
        assert!(
            crate::common::docker::block_on(docker.inspect_image(image)).is_ok(),
            "image {image} is missing: run scripts/build-images.sh (scripts/setup.sh --dev does)"
        );
    }
    let work = tempfile::tempdir().expect("temp dir");
    let w = work.path();
    std::fs::create_dir(w.join("runs")).unwrap();
    let in_docker = scenario()
        .replace("runtime: local\n", "runtime: docker\npull: never\n")
        .replace(
            "implementation: lnd\n",
            "implementation: lnd\n    version: v0.21.1-beta\n",
        );
    assert!(in_docker.contains("runtime: docker"), "{in_docker}");
    std::fs::write(w.join("docker.yaml"), &in_docker).unwrap();
    std::fs::write(w.join("scenario.yaml"), scenario()).unwrap();

    let manifest = saved(w, "docker.yaml");
    let versions = manifest["versions"].as_object().expect("versions");
    assert!(
        versions["alice"]
            .as_str()
            .unwrap()
            .starts_with("lnbench/lnd:v0.21.1-beta (sha256:"),
        "{versions:?}"
    );
    let report = restored_and_pays(w, "docker.yaml", &manifest);
    assert!(
        report["runtime"].as_str().unwrap().starts_with("docker ("),
        "{}",
        report["runtime"]
    );
    let (code, err) = refused(w, "scenario.yaml", "./snap");
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("manifest.json:") && err.contains("was saved with"),
        "{err}"
    );
    saved_again_from(w, "docker.yaml", &manifest);
    // Nothing of the saves or the restored run is left in the engine.
    nothing_left_in_the_engine("e2e-snapshot");
}

/// `snapshot save --from ./snap --to ./again`: the network restored, stopped and kept
/// again (each container's data in place of the restored copy), with the first save's
/// setup time and each node's channel database.
fn saved_again_from(w: &Path, file: &str, first: &serde_json::Value) {
    let args = [
        "snapshot",
        "save",
        file,
        "--from",
        "./snap",
        "--to",
        "./again",
        "--run-dir",
        "runs",
    ];
    let out = lnbench_in(w, &args);
    let log = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{log}");
    assert!(log.contains("restored in"), "{log}");
    let text = std::fs::read_to_string(w.join("again/manifest.json")).unwrap();
    let again: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(again["setup_s"], first["setup_s"], "{again:#}");
    let files = again["files"].as_object().expect("files");
    for node in ["alice/", "bob/"] {
        assert!(
            files
                .keys()
                .any(|k| k.starts_with(node) && k.ends_with("channel.db")),
            "{node}: {files:?}"
        );
    }
}

/// An LND pair saved in Docker on v0.20.1-beta and restored on v0.21.1-beta: refused
/// without `--upgrade` (exit 3, the hint named), restored with it; both nodes start
/// the newer image on the saved data, the report's `snapshot.migrations` names each
/// node's two versions and its time until ready, and the network pays.
#[test]
fn an_lnd_pair_saved_on_v0_20_is_upgraded_to_v0_21_in_docker() {
    require_node_binaries();
    let Some(docker) = crate::common::docker::engine() else {
        return;
    };
    let older = "lnbench/lnd:v0.20.1-beta";
    if crate::common::docker::block_on(docker.inspect_image(older)).is_err() {
        record_not_run(
            "an_lnd_pair_saved_on_v0_20_is_upgraded_to_v0_21_in_docker",
            &format!(
                "no image {older} (scripts/build-images.sh builds it for the matrix scenarios)"
            ),
        );
        return;
    }
    let work = tempfile::tempdir().expect("temp dir");
    let w = work.path();
    std::fs::create_dir(w.join("runs")).unwrap();
    let on = |version: &str| {
        scenario()
            .replace("runtime: local\n", "runtime: docker\npull: never\n")
            .replace("e2e-snapshot", "docker-snapshot-upgrade")
            .replace(
                "implementation: lnd\n",
                &format!("implementation: lnd\n    version: {version}\n"),
            )
    };
    std::fs::write(w.join("old.yaml"), on("v0.20.1-beta")).unwrap();
    std::fs::write(w.join("new.yaml"), on("v0.21.1-beta")).unwrap();
    let manifest = saved(w, "old.yaml");
    assert!(
        manifest["versions"]["bob"]
            .as_str()
            .unwrap()
            .starts_with(older),
        "{:#}",
        manifest["versions"]
    );

    let (code, err) = refused(w, "new.yaml", "./snap");
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("was saved with") && err.contains("--upgrade"),
        "{err}"
    );

    let report = restored_with(w, "new.yaml", &manifest, &["--upgrade"]);
    let migrations = report["snapshot"]["migrations"]
        .as_array()
        .expect("migrations");
    assert_eq!(migrations.len(), 2, "{migrations:#?}");
    for m in migrations {
        assert!(m["from"].as_str().unwrap().starts_with(older), "{m:#}");
        let to = m["to"].as_str().unwrap();
        assert!(to.starts_with("lnbench/lnd:v0.21.1-beta"), "{m:#}");
        assert!(m["ready_s"].as_f64().unwrap() > 0.0, "{m:#}");
        eprintln!("{m}");
    }
    for node in report["nodes"].as_array().unwrap() {
        let version = node["version"].as_str().unwrap_or_default();
        assert!(version.contains("0.21.1"), "{node:#}");
    }
    nothing_left_in_the_engine("docker-snapshot-upgrade");
}

/// Core Lightning, Eclair and LDK on Bitcoin Core: LDK's alice and Eclair's carol each
/// open a channel to Core Lightning's bob (carol on PostgreSQL; in Docker bob too).
/// Restored, each pays bob at once. LDK's
/// restored alice dials only the saving run's address of bob, so bob dials her.
const OTHERS: &str = "\
name: e2e-snapshot-others
runtime: local
chain:
  implementation: bitcoind
nodes:
  alice:
    implementation: ldk
  bob:
    implementation: cln
  carol:
    implementation: eclair
channels:
  - from: alice
    to: bob
    capacity_sat: 2000000
  - from: carol
    to: bob
    capacity_sat: 2000000
workload:
  kind: invoice
  senders: [alice, carol]
  receiver: bob
  amount_msat: 1000
  concurrency: 2
  stop:
    payments: 40
";

#[test]
fn cln_eclair_and_ldk_nodes_on_bitcoind_are_saved_restored_and_pay() {
    let test = "cln_eclair_and_ldk_nodes_on_bitcoind_are_saved_restored_and_pay";
    if !(built_on_bitcoind(test, "lightningd", CLN_BUILD)
        && built_or_not_run(test, "eclair-node", ECLAIR_BUILD)
        && built_or_not_run(test, "ldk-server", LDK_BUILD))
    {
        return;
    }
    let work = tempfile::tempdir().expect("temp dir");
    // Carol keeps her data on the run's PostgreSQL, over TCP as a role of her own: the
    // snapshot keeps her database as a dump, loaded back as her role.
    let carol_on_postgres = OTHERS.replace(
        "    implementation: eclair\n",
        "    implementation: eclair\n    database: postgres\n",
    );
    assert!(carol_on_postgres.contains("database: postgres"));
    // `--run-dir runs` is relative: Core Lightning finds bitcoind's datadir anyway.
    let versions = others_saved_restored_and_pay(work.path(), &carol_on_postgres);
    let manifest = std::fs::read_to_string(work.path().join("snap/manifest.json")).unwrap();
    assert!(
        manifest.contains("carol/snapshot-postgres.sql"),
        "{manifest}"
    );
    for (name, word) in [
        ("alice", "ldk-server"),
        ("carol", "eclair-node"),
        ("chain", "bitcoin core"),
    ] {
        let v = versions[name].as_str().unwrap().to_lowercase();
        assert!(v.contains(word), "{name}: {v}");
    }
    // Core Lightning's version is its tag, as `lightningd --version` gives it.
    assert!(
        versions["bob"].as_str().unwrap().starts_with('v'),
        "{versions:?}"
    );
}

/// The same network in Docker: the images the run names kept in the manifest, the
/// restored LDK node's channel back at once (bob, in his container, dials her by her
/// name on the run's network), nothing left in the engine.
#[test]
fn cln_eclair_and_ldk_nodes_saved_in_docker_are_restored_and_pay() {
    let Some(docker) = crate::common::docker::engine() else {
        return;
    };
    let chain = lnbench_tui::chain::driver(lnbench_tui::chain::ChainKind::Bitcoind).local_image();
    let mut images = vec![chain];
    use lnbench_tui::node::Implementation::{Cln, Eclair, Ldk};
    for implementation in [Cln, Eclair, Ldk] {
        let program = lnbench_tui::node::driver(implementation).program();
        images.push(program.images(None).local);
    }
    for image in &images {
        assert!(
            crate::common::docker::block_on(docker.inspect_image(image)).is_ok(),
            "image {image} is missing: run scripts/build-images.sh (scripts/setup.sh --dev does)"
        );
    }
    let work = tempfile::tempdir().expect("temp dir");
    // In Docker, bob and carol keep their data on the run's PostgreSQL container: the
    // snapshot keeps their databases as dumps.
    let in_docker = OTHERS
        .replace("runtime: local\n", "runtime: docker\npull: never\n")
        .replace("e2e-snapshot-others", "docker-snapshot-others")
        .replace(
            "    implementation: cln\n",
            "    implementation: cln\n    database: postgres\n",
        )
        .replace(
            "    implementation: eclair\n",
            &format!(
                "    implementation: eclair\n    database: postgres\n    args: [{}]\n",
                crate::common::TEST_JVM_OPTIONS.join(", ")
            ),
        );
    assert!(in_docker.contains("runtime: docker"), "{in_docker}");
    assert_eq!(in_docker.matches("database: postgres").count(), 2);
    let versions = others_saved_restored_and_pay(work.path(), &in_docker);
    let manifest = std::fs::read_to_string(work.path().join("snap/manifest.json")).unwrap();
    for dump in ["bob/snapshot-postgres.sql", "carol/snapshot-postgres.sql"] {
        assert!(manifest.contains(dump), "no {dump} in {manifest}");
    }
    for (name, image) in [("chain", 0), ("bob", 1), ("carol", 2), ("alice", 3)] {
        let v = versions[name].as_str().unwrap();
        assert!(
            v.starts_with(&format!("{} (sha256:", images[image])),
            "{name}: {v}"
        );
    }
    // Not "e2e-snapshot": the LND test in Docker, which may run at the same time,
    // looks for what it left under that name.
    nothing_left_in_the_engine("docker-snapshot-others");
}

/// `scenario` (the [`OTHERS`] network on some runtime) saved in `w`, then restored: both
/// senders pay bob, each as the tool and the node itself count it. The saved versions.
fn others_saved_restored_and_pay(
    w: &Path,
    scenario: &str,
) -> serde_json::Map<String, serde_json::Value> {
    std::fs::create_dir(w.join("runs")).unwrap();
    std::fs::write(w.join("others.yaml"), scenario).unwrap();
    let manifest = saved(w, "others.yaml");
    let versions = manifest["versions"].as_object().expect("versions").clone();
    let report = restored_and_pays(w, "others.yaml", &manifest);
    assert_reconciled(&report);
    // Both senders paid bob, each as the tool and the node itself count it.
    let senders = report["reconciliation"]["senders"]
        .as_array()
        .expect("senders");
    for name in ["alice", "carol"] {
        let row = (senders.iter().find(|r| r["node"] == name))
            .unwrap_or_else(|| panic!("no {name}: {senders:#?}"));
        assert!(row["tool_ok"].as_u64() > Some(0), "{row:#}");
        assert_eq!(row["node_succeeded"], row["tool_ok"], "{row:#}");
    }
    // The restored channels were active at once: LDK's alice did not wait for her
    // own dial (a minute apart), bob dialled her.
    let active = (report["setup"].as_array().unwrap().iter())
        .find(|s| s["step"] == "channels active")
        .and_then(|s| s["seconds"].as_f64())
        .expect("a channels active step");
    assert!(active < 30.0, "channels active after {active} s");
    versions
}

/// No container or network whose name contains `name` is left in the engine.
fn nothing_left_in_the_engine(name: &str) {
    let (containers, networks) = crate::common::docker::labelled(None);
    let ours = |n: &String| n.contains(name);
    assert!(
        !containers.iter().any(ours) && !networks.iter().any(ours),
        "left in the engine: {containers:?} {networks:?}"
    );
}
