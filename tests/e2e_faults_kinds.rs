//! The fault kinds tests/e2e_faults.rs does not run, each once on real LND nodes and
//! a real btcd chain with the peer link through a real Toxiproxy: a jittery link, a
//! bandwidth cap begun by `after_payments:`, a reset of the link, and a clean restart
//! of the receiver. Each assertion shows the fault had its effect (payment latency,
//! throughput, the proxy accepting the peer's new connection, the node's way back;
//! tests/common/fault_kinds.rs). tests/e2e_kube_faults.rs runs the same on Kubernetes.

mod common;

use common::fault_kinds::{check, check_mining, mining_scenario, scenario};
use common::scenario_run::Finished;
use common::*;
use serde_json::Value;

fn needs_binaries() {
    require_node_binaries();
    let proxy = cache_dir().join("bin").join("toxiproxy-unix");
    assert!(
        proxy.exists(),
        "{} is missing: run scripts/setup.sh before the end-to-end tests",
        proxy.display()
    );
}

/// Runs `text` as [`Finished::run`] does, keeping the run directory (`--keep`) for its
/// logs; no process of the run may be left.
fn run_kept(text: &str) -> Finished {
    let work = tempfile::tempdir().expect("temp dir");
    let (scenario, runs) = (work.path().join("scenario.yaml"), work.path().join("runs"));
    std::fs::write(&scenario, text).unwrap();
    std::fs::create_dir_all(&runs).unwrap();
    let out = std::process::Command::new(lnbench())
        .arg(&scenario)
        .arg("--keep")
        .arg("--report")
        .arg(work.path().join("report"))
        .arg("--run-dir")
        .arg(&runs)
        .output()
        .expect("run lnbench-tui");
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    let left = processes_mentioning(&runs);
    assert!(
        left.is_empty(),
        "processes of the run still alive: {left:?}\n{log}"
    );
    Finished {
        work,
        status: out.status,
        log,
    }
}

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

fn report_of(run: &Finished) -> Value {
    assert_eq!(run.status.code(), Some(0), "{}", run.log);
    let text = std::fs::read_to_string(run.report_dir().join("report.json")).expect("report");
    let report: Value = serde_json::from_str(&text).unwrap();
    assert_matches_schema(&report);
    report
}

#[test]
fn jitter_bandwidth_reset_and_restart_each_have_their_effect() {
    needs_binaries();
    let run = run_kept(&scenario("e2e-faults-kinds", "runtime: local\n"));
    check(&report_of(&run));
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
    needs_binaries();
    let run = Finished::run(&mining_scenario("e2e-faults-mining", "runtime: local\n"));
    check_mining(&report_of(&run));
}
