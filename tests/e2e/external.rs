//! `runtime: external` end to end: the test brings an LND pair up itself (the local
//! runtime, in this process), then runs the binary against it twice, as external
//! nodes given in the scenario (one credential path through an environment variable)
//! and through a sim-ln node file. The binary must pay, say external, and leave the
//! nodes running: it starts and stops nothing.

use crate::common::scenario_run::lnd_pair;

use crate::common::*;
use lnbench_tui::node::{Credentials, NodeEndpoint};
use lnbench_tui::run::{Network, RunFacts, bring_up};
use lnbench_tui::runtime::Runtime;
use lnbench_tui::runtime::local::LocalRuntime;
use lnbench_tui::setup::StepLog;
use std::path::Path;

/// The external runs' channels (as the pair was set up) and load: 150 keysends from
/// alice to bob.
const PAIR_LOAD: &str = "\
channels:
  - from: alice
    to: bob
    capacity_sat: 5000000
    count: 2
workload:
  kind: keysend
  senders: [alice]
  receiver: bob
  concurrency: 4
  stop:
    payments: 150
";

fn pair_yaml() -> String {
    lnd_pair("external-pair-setup", "runtime: local\n", 5000000, 2)
        + "  concurrency: 4
  stop:
    payments: 10
"
}

/// The network of scenario `text` (named `file`) brought up by the local runtime, in
/// this process, under `dir`: the async runtime it runs on, the local runtime and the
/// network.
fn bring_up_in(
    dir: &Path,
    file: &str,
    text: &str,
) -> (tokio::runtime::Runtime, LocalRuntime, Network) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    lnbench_tui::tls::install_crypto_provider();
    let scenario = lnbench_tui::scenario::parse(
        &dir.with_file_name(file),
        text,
        lnbench_tui::runtime::capabilities,
    )
    .unwrap_or_else(|e| panic!("{file}: {e}"));
    std::fs::create_dir_all(dir).unwrap();
    let mut local = LocalRuntime::new(dir.join("run"), false);
    let mut facts = RunFacts::on(&local);
    let network = rt
        .block_on(bring_up(
            &scenario,
            &mut local,
            &mut StepLog::default(),
            &mut facts,
        ))
        .unwrap_or_else(|e| panic!("the nodes of {file} come up: {e:#}"));
    (rt, local, network)
}

fn lnd_files(ep: &NodeEndpoint) -> (String, String) {
    let Credentials::Lnd(c) = &ep.credentials else {
        panic!("not LND credentials: {:?}", ep.credentials)
    };
    (
        c.tls_cert.display().to_string(),
        c.macaroon.display().to_string(),
    )
}

/// Runs the binary on `scenario` for 150 payments; returns the report.
fn run_external(work: &Path, scenario: &str, env: &[(&str, &str)]) -> serde_json::Value {
    let file = work.join("scenario.yaml");
    std::fs::write(&file, scenario).unwrap();
    let report = work.join("report");
    let runs = work.join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    let out = lnbench_command()
        .arg(&file)
        .args(["--payments", "150", "--report"])
        .arg(&report)
        .arg("--run-dir")
        .arg(&runs)
        .envs(env.iter().copied())
        .output()
        .expect("run lnbench-tui");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr:\n{stderr}");
    for step in ["nodes reachable", "channels checked", "routes ready"] {
        assert!(stderr.contains(step), "no step {step:?}:\n{stderr}");
    }
    for step in ["chain up", "wallets funded", "peers connected"] {
        assert!(
            !stderr.contains(step),
            "an external run did {step:?}:\n{stderr}"
        );
    }
    let text = std::fs::read_to_string(report.join("report.json")).expect("report.json");
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_matches_schema(&report);
    assert!(
        std::fs::read_dir(&runs).unwrap().next().is_none(),
        "run directory left"
    );
    report
}

fn check_report(report: &serde_json::Value, receiver: &str) {
    assert_eq!(report["runtime"], "external", "{:#}", report["runtime"]);
    assert_eq!(report["complete"], true);
    assert_eq!(report["results"]["ok"], 150, "{:#}", report["results"]);
    assert_eq!(report["results"]["failed"], 0);
    assert_eq!(report["chain"]["implementation"], "external");
    assert_eq!(report["chain"]["version"], "regtest");
    let nodes = report["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2);
    assert!(nodes.iter().any(|n| n["name"] == receiver));
    for n in nodes {
        // The tool did not start them: no start-up time.
        assert!(n.get("ready_s").is_none(), "{n:#}");
        // Resources are not measured: no sample, no figure.
        let r = &n["resources"];
        assert!(r["samples"].as_array().unwrap().is_empty(), "{r:#}");
        assert!(r["cpu_pct_avg"].is_null(), "{r:#}");
        assert!(
            n["binary"]
                .as_str()
                .unwrap()
                .starts_with("external at 127.0.0.1:")
        );
    }
}

#[test]
fn external_runs_drive_nodes_they_did_not_start() {
    require_node_binaries();
    let work = tempfile::tempdir().expect("temp dir");
    let pair_dir = work.path().join("pair");
    let (rt, mut local, network) = bring_up_in(&pair_dir, "pair.yaml", &pair_yaml());
    let endpoints = local.endpoints();
    let (alice, bob) = (&endpoints[0], &endpoints[1]);
    let bob_pubkey = network.node("bob").unwrap().info.pubkey.clone();
    let pids = local.pids().to_vec();

    // 1. Nodes in the scenario; alice's macaroon path through an environment variable.
    let (alice_cert, alice_mac) = lnd_files(alice);
    let (bob_cert, bob_mac) = lnd_files(bob);
    let yaml = format!(
        "name: external-pair
runtime: external
nodes:
  alice:
    implementation: lnd
    rpc: {}
    tls_cert: {alice_cert}
    macaroon: $LNBENCH_TEST_ALICE_MACAROON
  bob:
    implementation: lnd
    rpc: {}
    tls_cert: {bob_cert}
    macaroon: {bob_mac}
{PAIR_LOAD}",
        alice.rpc_addr, bob.rpc_addr
    );
    let one = work.path().join("one");
    std::fs::create_dir_all(&one).unwrap();
    let report = run_external(
        &one,
        &yaml,
        &[("LNBENCH_TEST_ALICE_MACAROON", alice_mac.as_str())],
    );
    check_report(&report, "bob");

    // 2. The same pair through sim-ln's node file; bob by his pubkey, as sim-ln allows.
    let sim = serde_json::json!({
        "nodes": [
            {"id": "alice", "address": format!("https://{}", alice.rpc_addr),
             "macaroon": alice_mac, "cert": alice_cert},
            {"id": bob_pubkey, "address": bob.rpc_addr, "macaroon": bob_mac, "cert": bob_cert},
        ],
        "activity": []
    });
    let two = work.path().join("two");
    std::fs::create_dir_all(&two).unwrap();
    std::fs::write(two.join("sim.json"), sim.to_string()).unwrap();
    let yaml = format!(
        "name: external-sim-ln
runtime: external
external:
  nodes_file: sim.json
workload:
  kind: keysend
  senders: [alice]
  receiver: {bob_pubkey}
  concurrency: 4
  stop:
    payments: 150
"
    );
    let report = run_external(&two, &yaml, &[]);
    check_report(&report, &bob_pubkey);

    // Both runs left the nodes as they were: running, answering, none exited.
    assert_eq!(local.exited(), None, "a node of the pair exited");
    for pid in &pids {
        assert!(
            Path::new(&format!("/proc/{pid}")).exists(),
            "process {pid} is gone"
        );
    }
    for name in ["alice", "bob"] {
        let info = rt
            .block_on(network.node(name).unwrap().node.get_info())
            .expect("the node still answers");
        assert!(info.num_active_channels >= 2, "{name}: {info:?}");
    }
    rt.block_on(local.down()).expect("the pair stops");
    let left = processes_mentioning(&pair_dir);
    assert!(
        left.is_empty(),
        "processes of the pair still alive: {left:?}"
    );
}

/// LND (alice) and Core Lightning (bob) on Bitcoin Core, set up by the test: the
/// external runs' channels, and 10 payments to check the routes.
fn mixed_yaml() -> String {
    "name: external-mixed-setup
runtime: local
chain:
  implementation: bitcoind
nodes:
  alice:
    implementation: lnd
  bob:
    implementation: cln
"
    .to_string()
        + &PAIR_LOAD.replace("payments: 150", "payments: 10")
}

/// LND pays Core Lightning, both given in a sim-ln file (its CLN form: ca_cert,
/// client_cert, client_key), on a Bitcoin Core chain the test started.
#[test]
fn external_core_lightning_through_a_sim_ln_file() {
    let test = "external_core_lightning_through_a_sim_ln_file";
    if !built_on_bitcoind(test, "lightningd", CLN_BUILD) {
        return;
    }
    require_node_binaries();
    let work = tempfile::tempdir().expect("temp dir");
    let pair_dir = work.path().join("pair");
    let (rt, mut local, network) = bring_up_in(&pair_dir, "mixed.yaml", &mixed_yaml());
    let endpoints = local.endpoints();
    let (alice, bob) = (&endpoints[0], &endpoints[1]);
    let (alice_cert, alice_mac) = lnd_files(alice);
    let Credentials::Cln(c) = &bob.credentials else {
        panic!("not CLN credentials: {:?}", bob.credentials)
    };
    let sim = serde_json::json!({"nodes": [
        {"id": "alice", "address": alice.rpc_addr, "macaroon": alice_mac, "cert": alice_cert},
        {"id": "bob", "address": bob.rpc_addr, "ca_cert": c.ca_cert,
         "client_cert": c.client_cert, "client_key": c.client_key},
    ]});
    std::fs::write(work.path().join("sim.json"), sim.to_string()).unwrap();
    let yaml = &format!(
        "name: external-cln
runtime: external
external:
  nodes_file: sim.json
{PAIR_LOAD}"
    );
    let report = run_external(work.path(), yaml, &[]);
    check_report(&report, "bob");
    let bob_report = (report["nodes"].as_array().unwrap().iter())
        .find(|n| n["name"] == "bob")
        .unwrap();
    assert_eq!(bob_report["implementation"], "cln");

    assert_eq!(local.exited(), None, "a node exited");
    let info = rt
        .block_on(network.node("bob").unwrap().node.get_info())
        .expect("bob still answers");
    assert!(info.num_active_channels >= 2, "{info:?}");
    rt.block_on(local.down()).expect("the pair stops");
    assert!(processes_mentioning(&pair_dir).is_empty());
}
