//! The chain backend stopped mid-load, the same on every runtime: the scenario and
//! what its report must show (tests/e2e/faults_chain.rs, tests/e2e/kube_faults.rs).

use super::scenario_run::{fault, lnd_pair};
use serde_json::Value;

/// Alice pays bob 5 keysends a second for 40 s on bitcoind; 8 s in the chain is
/// stopped cleanly and started again; 22 s in it is killed and started 4 s later.
pub fn scenario(name: &str, top: &str) -> String {
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

pub fn check(report: &Value) {
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
