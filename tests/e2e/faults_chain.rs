//! The chain backend stopped mid-load, on real LND nodes over a real bitcoind,
//! through the real binary: `restart: chain` (a clean stop and start) and
//! `kill: chain` with `restart_after:`, locally and in Docker (on Kubernetes:
//! tests/e2e/kube_faults.rs). Each fault's record
//! gives the network's way back (the chain's RPC, a block mined then reaching both
//! nodes, their channels), and the load goes on after it. bitcoind builds from a
//! source tree; where the build cache lacks it these tests say they did not run.

use crate::common::chain_faults::{check, scenario};
use crate::common::docker::{assert_nothing_left_in_engine, engine};
use crate::common::scenario_run::Finished;
use crate::common::*;

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
        crate::common::docker::block_on(docker.inspect_image(&image)).is_ok(),
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
