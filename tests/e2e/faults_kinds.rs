//! The fault kinds tests/e2e/faults.rs does not run, each once on real LND nodes and
//! a real btcd chain with the peer link through a real Toxiproxy: a jittery link, a
//! bandwidth cap begun by `after_payments:`, a reset of the link, and a clean restart
//! of the receiver. Each assertion shows the fault had its effect (payment latency,
//! throughput, the proxy accepting the peer's new connection, the node's way back;
//! tests/common/fault_kinds.rs). tests/e2e/kube_faults.rs runs the same on Kubernetes.

use crate::common::fault_kinds::{check, check_mining, mining_scenario, scenario};
use crate::common::scenario_run::Finished;
use crate::common::*;

/// "Accepted client" lines of the run's Toxiproxy log: one per connection a node
/// made through the proxy.
fn proxy_connections(run: &Finished) -> usize {
    let runs = run.work.path().join("runs");
    let mut n = 0;
    for entry in std::fs::read_dir(&runs).expect("run dir") {
        let log = entry.unwrap().path().join("toxiproxy").join("output.log");
        if let Ok(text) = std::fs::read_to_string(&log) {
            n += text.matches("Accepted client").count();
        }
    }
    n
}

#[test]
fn jitter_bandwidth_reset_and_restart_each_have_their_effect() {
    require_node_binaries_and_toxiproxy();
    let run = Finished::run_kept(&scenario("e2e-faults-kinds", "runtime: local\n"));
    check(&run.report_on("local"));
    // After the reset, alice dialled bob again through the proxy.
    let connections = proxy_connections(&run);
    assert!(
        connections >= 2,
        "{connections} connections through the proxy"
    );
}

/// A block every 2 s during the load, stopped 8 s in, a burst of 3 blocks while it is
/// stopped, resumed 16 s in and stopped again 26 s in.
#[test]
fn background_mining_stops_resumes_and_a_burst_mines() {
    require_node_binaries_and_toxiproxy();
    let run = Finished::run(&mining_scenario("e2e-faults-mining", "runtime: local\n"));
    check_mining(&run.report_on("local"));
}
