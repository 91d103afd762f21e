//! The whole bring-up on the fake runtime: a chain that mines and confirms, wallets
//! funded, peers connected, channels opened and active, routes probed; then faults on
//! the fake processes during the load, and the report of what setup and faults did.

use super::*;

/// A line of three nodes: alice pays carol through bob. (On a runtime with no checks
/// before the start, so that no binary need be built here.)
const LINE: &str = "
name: fake-line
runtime: kubernetes
nodes:
  alice: { implementation: lnd }
  bob: { implementation: lnd }
  carol: { implementation: lnd }
channels:
  - { from: alice, to: bob, capacity_sat: 5000000 }
  - { from: bob, to: carol, capacity_sat: 5000000 }
workload:
  kind: keysend
  senders: [alice]
  receiver: carol
  amount_msat: 1000
  concurrency: 2
  stop: { payments: 300 }
  payment_timeout: 10s
";

fn line(extra: &str) -> Scenario {
    parse(
        Path::new("line.yaml"),
        &format!("{LINE}{extra}"),
        crate::runtime::capabilities,
    )
    .unwrap()
}

#[tokio::test]
async fn the_network_is_set_up_step_by_step_and_paid_across_a_hop() {
    let dirs = Dirs::new();
    let runtimes = fakes(|_| Ok(quick()));
    let s = line("thresholds:\n  max_mismatches: 0\n");
    let exit = execute_with(s, &dirs.opts, &runtimes, Signals::manual())
        .await
        .unwrap();
    assert_eq!(exit, Exit::Ok);
    let report = dirs.report("");
    let steps: Vec<&str> = (report["setup"].as_array().unwrap().iter())
        .map(|s| s["step"].as_str().unwrap())
        .collect();
    assert_eq!(
        steps,
        [
            "chain up",
            "nodes up",
            "wallets funded",
            "peers connected",
            "channels active",
            "routes ready"
        ]
    );
    assert_eq!(report["chain"]["version"], "fake chain");
    assert_eq!(report["nodes"].as_array().unwrap().len(), 3);
    assert_eq!(report["results"]["ok"], 300, "{}", report["results"]);
    // The route probe before the load is on carol's ledger, not in the comparison.
    let r = &report["reconciliation"];
    assert_eq!(r["mismatches"], 0, "{r}");
    assert_eq!(r["receivers"][0]["node_received"], 300, "{r}");
    assert_eq!(dirs.runs_left(), 0);
}

#[tokio::test]
async fn faults_kill_restart_and_mine_on_the_fake_processes() {
    let dirs = Dirs::new();
    let runtimes = fakes(|_| Ok(long(FakeScript::default())));
    let faults = "faults:
  - at: 1s
    restart: bob
  - at: 1s
    mine: 3
  - at: 2s
    kill: bob
    restart_after: 1s
";
    let mut s = line(faults);
    s.workload.stop.payments = None;
    s.workload.stop.duration = Some(Duration::from_secs(4));
    let exit = execute_with(s, &dirs.opts, &runtimes, Signals::manual())
        .await
        .unwrap();
    assert_eq!(exit, Exit::Ok);
    let report = dirs.report("");
    let faults = report["faults"].as_array().unwrap();
    assert_eq!(faults.len(), 3, "{faults:?}");
    for f in faults {
        assert!(f["error"].is_null(), "{f}");
        assert!(f["ended_s"].as_f64().is_some(), "{f}");
    }
    let (restart, mine, kill) = (&faults[0], &faults[1], &faults[2]);
    assert!(
        restart["node_back"]["channels_s"].as_f64().is_some(),
        "{restart}"
    );
    assert!(kill["node_back"]["channels_s"].as_f64().is_some(), "{kill}");
    // Setup mined 1 block to fund and 6 to confirm the channels, from 101.
    assert_eq!(mine["chain_height"], 101 + 1 + 6 + 3, "{mine}");
    // While bob is down, carol cannot be reached: those payments fail.
    let results = &report["results"];
    let (ok, failed) = (
        results["ok"].as_u64().unwrap(),
        results["failed"].as_u64().unwrap(),
    );
    assert!(failed > 0 && ok > failed, "{results}");
}
