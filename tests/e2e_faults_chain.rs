//! The chain backend stopped mid-load, on real LND nodes over a real bitcoind,
//! through the real binary: `restart: chain` (a clean stop and start) and
//! `kill: chain` with `restart_after:`, locally and in Docker. Each fault's record
//! gives the network's way back (the chain's RPC, a block mined then reaching both
//! nodes, their channels), and the load goes on after it. bitcoind builds from a
//! source tree; where the build cache lacks it these tests say they did not run.

mod common;

use common::docker::{assert_nothing_left_in_engine, engine};
use common::scenario_run::{Finished, fault, lnd_pair};
use common::*;
use serde_json::Value;

/// Alice pays bob 5 keysends a second for 40 s on bitcoind; 8 s in the chain is
/// stopped cleanly and started again; 22 s in it is killed and started 4 s later.
fn scenario(name: &str, top: &str) -> String {
    lnd_pair(name, top, 2000000, 2).replace("implementation: btcd", "implementation: bitcoind")
        + "  amount_msat: 1000
  rate:
    hold: { rate: 5, duration: 40s }
  stop:
    duration: 40s
  payment_timeout: 20s
faults:
  - at: 8s
    restart: chain
  - at: 22s
    kill: chain
    restart_after: 4s
"
}

/// The way back of the fault `label`, checked for order and plausibility.
fn chain_back<'a>(report: &'a Value, label: &str) -> &'a Value {
    let f = fault(report, label);
    eprintln!("{label}: {f:#}");
    assert!(f["error"].is_null(), "{f:#}");
    assert_eq!(f["target"], "chain", "{f:#}");
    let back = &f["chain_back"];
    let s = |k: &str| back[k].as_f64().unwrap_or_else(|| panic!("{k} in {f:#}"));
    assert!(s("rpc_s") > 0.0, "{f:#}");
    assert!(
        s("synced_s") >= s("rpc_s"),
        "a node had the block before the chain answered: {f:#}"
    );
    assert!(s("channels_s") >= s("synced_s"), "{f:#}");
    assert!(back["height"].as_u64().unwrap() > 100, "{f:#}");
    assert!(back["lost_blocks"].as_u64().is_some(), "{f:#}");
    back
}

fn check(report: &Value) {
    let restart = chain_back(report, "restart chain");
    assert!(
        restart["stop_s"].as_f64().is_some(),
        "a clean stop is timed: {restart:#}"
    );
    let kill = chain_back(report, "kill chain");
    assert!(kill["stop_s"].is_null(), "{kill:#}");
    assert!(
        kill["height"].as_u64() > restart["height"].as_u64(),
        "each way back mined a block the nodes then had: {kill:#} after {restart:#}"
    );
    let f = fault(report, "kill chain");
    let (began, ended) = (
        f["began_s"].as_f64().unwrap(),
        f["ended_s"].as_f64().unwrap(),
    );
    assert!(ended - began >= 3.9, "down for restart_after: 4s: {f:#}");
    // The load went on: payments succeeded after the chain came back.
    let after = f["after"]["ok"].as_u64().unwrap_or(0);
    assert!(after > 0, "nothing succeeded after the kill: {f:#}");
}

#[test]
fn the_chain_restarted_and_killed_mid_load_comes_back_locally() {
    if !built_or_not_run(
        "the_chain_restarted_and_killed_mid_load_comes_back_locally",
        "bitcoind",
        BITCOIND_BUILD,
    ) {
        return;
    }
    require_node_binaries();
    let run = Finished::run(&scenario("e2e-chain-faults", "runtime: local\n"));
    assert_eq!(run.status.code(), Some(0), "{}", run.log);
    check(&run.report_json());
}

#[test]
fn the_chain_restarted_and_killed_mid_load_comes_back_in_docker() {
    let test = "the_chain_restarted_and_killed_mid_load_comes_back_in_docker";
    if !built_or_not_run(test, "bitcoind", BITCOIND_BUILD) {
        return;
    }
    let Some(docker) = engine() else {
        return;
    };
    let image = lnbench_tui::chain::driver(lnbench_tui::chain::ChainKind::Bitcoind).local_image();
    assert!(
        common::docker::block_on(docker.inspect_image(&image)).is_ok(),
        "image {image} is missing: run scripts/build-images.sh (scripts/setup.sh --dev does)"
    );
    let run = Finished::run(&scenario(
        "e2e-docker-chain-faults",
        "runtime: docker\npull: never\n",
    ));
    assert_eq!(run.status.code(), Some(0), "{}", run.log);
    let report = run.report_json();
    check(&report);
    assert_nothing_left_in_engine(&run.log);
}
