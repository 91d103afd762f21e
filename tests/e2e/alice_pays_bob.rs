//! End to end through the real binary: alice pays bob by keysend between two real
//! LND nodes on a real btcd regtest chain, headless, with a report; then both nodes
//! are restarted (the shipped scenarios/soak.yaml, its payments cut to 300).

use crate::common::*;

#[test]
fn alice_pays_bob_keysend_real_lnd() {
    require_node_binaries();
    let work = tempfile::tempdir().expect("temp dir");
    let run_dir = work.path().join("runs");
    let report_dir = work.path().join("report");
    std::fs::create_dir_all(&run_dir).unwrap();

    let out = lnbench_command()
        .arg(repo_file("scenarios/soak.yaml"))
        .args(["--payments", "300", "--report"])
        .arg(&report_dir)
        .arg("--run-dir")
        .arg(&run_dir)
        .output()
        .expect("run lnbench-tui");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "exit status {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );

    // Setup steps are shown with their times, then progress, then a summary.
    for step in ["chain up", "nodes up", "wallets funded", "channels active"] {
        assert!(
            stderr.contains(step),
            "setup step {step:?} not shown:\n{stderr}"
        );
    }
    assert!(
        stdout.contains("p99"),
        "no summary table on stdout:\n{stdout}"
    );

    let text = std::fs::read_to_string(report_dir.join("report.json")).expect("report.json");
    let report: serde_json::Value = serde_json::from_str(&text).expect("report.json is JSON");
    assert_matches_schema(&report);
    assert_reconciled(&report);
    assert_eq!(report["complete"], true);
    let results = &report["results"];
    assert_eq!(results["ok"], 300, "results: {results:#}");
    assert_eq!(results["failed"], 0, "results: {results:#}");
    assert!(results["tps_avg"].as_f64().unwrap() > 0.0);
    let lat = &results["latency"];
    let (p50, p99, max) = (
        lat["p50_us"].as_u64().unwrap(),
        lat["p99_us"].as_u64().unwrap(),
        lat["max_us"].as_u64().unwrap(),
    );
    assert!(p50 > 0 && p50 <= p99 && p99 <= max, "latency {lat:#}");
    assert_eq!(lat["count"], 300);
    assert_eq!(report["nodes"].as_array().unwrap().len(), 2);
    assert!(
        report["nodes"][0]["version"]
            .as_str()
            .unwrap()
            .contains("0.21"),
        "node version {}",
        report["nodes"][0]["version"]
    );
    // Each node's start-up: from the nodes' start until it answered synced, which the
    // setup's "nodes up" step (chain height, wallet, graph) bounds from above.
    let nodes_up_s = (report["setup"].as_array().unwrap().iter())
        .find(|s| s["step"] == "nodes up")
        .and_then(|s| s["seconds"].as_f64())
        .expect("a nodes up step");
    for node in report["nodes"].as_array().unwrap() {
        let ready = node["ready_s"].as_f64().unwrap_or(-1.0);
        assert!(
            ready > 0.0 && ready <= nodes_up_s + 0.5,
            "{node:#} (nodes up {nodes_up_s} s)"
        );
    }
    assert!(!report["results"]["series"].as_array().unwrap().is_empty());
    // payments.csv: a row per counted payment, from alice to bob, as many as counted.
    let csv = std::fs::read_to_string(report_dir.join("payments.csv")).expect("payments.csv");
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len() as u64, 300, "{csv}");
    assert!(
        rows.iter().all(|r| r.contains(",ok,alice,bob,keysend,")),
        "{csv}"
    );
    // Its latencies are in microseconds, as report.json's: the rows' largest is the
    // report's max, within HDR's 3 significant digits.
    assert!(
        csv.starts_with("intended_start_s,start_s,end_s,latency_us,"),
        "{csv}"
    );
    let row_max = (rows.iter())
        .map(|r| {
            r.split(',')
                .nth(3)
                .unwrap()
                .parse::<u64>()
                .expect("latency_us")
        })
        .max()
        .unwrap();
    assert!(
        row_max.abs_diff(max) * 500 <= max,
        "payments.csv max {row_max} us against report.json's {max} us"
    );

    // Every node and the chain were read from /proc during the load.
    let mut read = report["nodes"].as_array().unwrap().clone();
    read.push(report["chain"].clone());
    for node in &read {
        let name = node["name"].as_str().unwrap_or("chain");
        let r = &node["resources"];
        let samples = r["samples"].as_array().unwrap();
        assert!(samples.len() >= 2, "{name}: {r:#}");
        let any = |field: &str| {
            samples
                .iter()
                .any(|s| s[field].as_f64().unwrap_or(0.0) > 0.0)
        };
        assert!(any("cpu_pct"), "{name}: no CPU figure above 0: {r:#}");
        assert!(any("mem_bytes"), "{name}: no memory figure: {r:#}");
        assert!(any("data_dir_bytes"), "{name}: no data-dir size: {r:#}");
        assert!(r["cpu_pct_avg"].as_f64().unwrap() > 0.0, "{name}: {r:#}");
        assert!(
            r["mem_bytes_peak"].as_u64().unwrap() > 1024 * 1024,
            "{name}"
        );
        assert!(r["data_dir_bytes_end"].as_u64().unwrap() > 0, "{name}");
        assert!(r["bytes_per_payment"].is_number(), "{name}: {r:#}");
    }
    for svg in [
        "cpu-over-time.svg",
        "memory-over-time.svg",
        "data-dir-over-time.svg",
    ] {
        assert!(report_dir.join(svg).exists(), "{svg} not written");
    }

    // Both nodes restarted after the load, on their own data.
    crate::restarts::check_shown(&stderr, &report_dir);
    crate::restarts::check_restarts(&report, 10);
    for node in report["nodes"].as_array().unwrap() {
        let r = &node["restart"];
        assert!(r["data_dir_bytes"].as_u64().unwrap() > 0, "{r:#}");
    }

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
