//! End to end through the real binary: a generated 6-node random network of real LND
//! nodes on a btcd regtest chain (local runtime), every node paying random peers;
//! the report counts payments per sender and by route length, multi-hop ones included.

use crate::common::*;

#[test]
fn a_random_network_of_six_lnd_nodes_pays_across_multiple_hops() {
    for binary in ["lnd", "btcd"] {
        if !built_or_not_run("e2e_network", binary, "scripts/setup.sh") {
            return;
        }
    }
    let work = tempfile::tempdir().expect("temp dir");
    let run_dir = work.path().join("runs");
    let report_dir = work.path().join("report");
    std::fs::create_dir_all(&run_dir).unwrap();

    let out = lnbench_command()
        .arg(repo_file("tests/fixtures/scenarios/valid/network-6.yaml"))
        .args(["--no-tui", "--report"])
        .arg(&report_dir)
        .arg("--run-dir")
        .arg(&run_dir)
        .output()
        .expect("run lnbench-tui");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "exit status {:?}\nstderr:\n{stderr}",
        out.status
    );
    // Setup shows progress as n of N.
    assert!(
        stderr.contains(" of "),
        "no n-of-N setup progress:\n{stderr}"
    );

    let text = std::fs::read_to_string(report_dir.join("report.json")).expect("report.json");
    let report: serde_json::Value = serde_json::from_str(&text).expect("report.json is JSON");
    assert_matches_schema(&report);
    assert_eq!(report["complete"], true);
    let ok = report["results"]["ok"].as_u64().unwrap();
    assert!(ok > 0, "no successful payment: {:#}", report["results"]);

    let network = &report["network"];
    assert_eq!(network["nodes"].as_array().unwrap().len(), 6, "{network:#}");
    assert!(network["setup_s"].as_f64().unwrap() > 0.0);
    // Every node sent, and its payments add up to the run's.
    let senders = network["per_sender"].as_array().unwrap();
    assert_eq!(senders.len(), 6, "{network:#}");
    for s in senders {
        let sent = s["ok"].as_u64().unwrap() + s["failed"].as_u64().unwrap();
        assert!(sent > 0, "sender {} paid nothing: {network:#}", s["group"]);
    }
    let by_sender: u64 = senders.iter().map(|s| s["ok"].as_u64().unwrap()).sum();
    assert_eq!(by_sender, ok, "{network:#}");
    // Payments are counted by route length, and some went over two channels or more.
    let lengths = network["by_route_length"].as_array().unwrap();
    let by_length: u64 = lengths.iter().map(|g| g["ok"].as_u64().unwrap()).sum();
    assert_eq!(by_length, ok, "{network:#}");
    let multi_hop: u64 = (lengths.iter())
        .filter(|g| g["group"].as_str().unwrap().parse::<u32>().unwrap() >= 2)
        .map(|g| g["ok"].as_u64().unwrap())
        .sum();
    assert!(multi_hop > 0, "no multi-hop payment: {network:#}");

    // The HTML draws the graph and the per-node table.
    let html = std::fs::read_to_string(report_dir.join("report.html")).unwrap();
    assert!(
        html.contains("id=\"network\"") && html.contains("<circle"),
        "no network section"
    );

    let left = processes_mentioning(&run_dir);
    assert!(
        left.is_empty(),
        "processes of the run still alive: {left:?}"
    );
    assert!(
        std::fs::read_dir(&run_dir).unwrap().next().is_none(),
        "run directory not removed"
    );
}
