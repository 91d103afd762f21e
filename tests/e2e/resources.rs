//! End to end through the real binary: envelopes (`resources:`) applied to real LND
//! nodes, read back from the report (what the cgroup or the container's host config
//! holds, and what the kernel counted). A tight CPU limit must show as throttling.

use crate::common::docker::engine;
use crate::common::*;
use std::path::Path;

/// Tight enough that LND's start-up and the load hit the quota.
const TIGHT_CPUS: f64 = 0.3;
const MEMORY: u64 = 1 << 30;

/// The alice-pays-bob fixture on `runtime`, each node in a tight envelope.
fn scenario(fixture: &str, runtime: &str) -> String {
    let text = std::fs::read_to_string(repo_file(fixture)).expect("fixture");
    let text = text
        .replace("runtime: local", &format!("runtime: {runtime}"))
        .replace("name: alice-pays-bob", &format!("name: {}", run_name()));
    format!("{text}resources:\n  nodes: {{ cpus: {TIGHT_CPUS}, memory: 1GiB }}\n")
}

/// The scenario's name, which starts its run id and so its cgroups' names: this
/// test process's own, so leftovers of other runs are not taken for its own.
fn run_name() -> String {
    format!("envelopes-{}", std::process::id())
}

/// Runs `text` headless for 20 payments; the report, after a successful exit.
fn run(text: &str) -> serde_json::Value {
    let work = tempfile::tempdir().expect("temp dir");
    let file = work.path().join("scenario.yaml");
    std::fs::write(&file, text).unwrap();
    let (runs, report) = (work.path().join("runs"), work.path().join("report"));
    std::fs::create_dir_all(&runs).unwrap();
    let out = lnbench_command()
        .arg(&file)
        .args(["--payments", "20", "--report"])
        .arg(&report)
        .arg("--run-dir")
        .arg(&runs)
        .output()
        .expect("run lnbench-tui");
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(report.join("report.json")).expect("report.json");
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_matches_schema(&report);
    let summary = std::fs::read_to_string(work.path().join("report/summary.md")).unwrap();
    assert!(summary.contains("Envelopes (`resources:`)"), "{summary}");
    report
}

/// Every node's envelope as applied; returns the throttled periods of each.
fn envelopes(report: &serde_json::Value, applied_by: &[&str]) -> Vec<u64> {
    let nodes = report["nodes"].as_array().expect("nodes");
    assert_eq!(nodes.len(), 2);
    nodes
        .iter()
        .map(|n| {
            let e = &n["resources"]["envelope"];
            assert_eq!(e["cpus"].as_f64(), Some(TIGHT_CPUS), "{e:#}");
            assert_eq!(e["memory_bytes"].as_u64(), Some(MEMORY), "{e:#}");
            let by = e["applied_by"].as_str().unwrap_or_default();
            assert!(applied_by.contains(&by), "{e:#}");
            e["kernel"]["throttled_periods"].as_u64().unwrap_or(0)
        })
        .collect()
}

#[test]
fn local_nodes_run_in_cgroups_that_hold_the_limit_and_throttle_them() {
    require_node_binaries();
    let root = Path::new("/sys/fs/cgroup");
    let writable = nix::unistd::access(root.join("cpu").as_path(), nix::unistd::AccessFlags::W_OK)
        .or_else(|_| nix::unistd::access(root, nix::unistd::AccessFlags::W_OK));
    if !(root.join("cgroup.controllers").exists() || root.join("cpu").exists()) || writable.is_err()
    {
        record_not_run(
            "local_nodes_run_in_cgroups_that_hold_the_limit_and_throttle_them",
            "no writable cgroup hierarchy (run as root with cgroups mounted)",
        );
        return;
    }
    let report = run(&scenario(
        "tests/fixtures/scenarios/valid/alice-pays-bob.yaml",
        "local",
    ));
    let throttled = envelopes(&report, &["cgroup v1", "cgroup v2"]);
    assert!(
        throttled.iter().any(|t| *t > 0),
        "no node was throttled at {TIGHT_CPUS} CPUs: {throttled:?}"
    );
    let run_dirs = std::fs::read_dir(root.join("cpu")).into_iter().flatten();
    let left: Vec<String> = run_dirs
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("lnbench-") && n.contains(&format!("{}-", run_name())))
        .collect();
    assert!(left.is_empty(), "cgroups left after teardown: {left:?}");
}

#[test]
fn docker_containers_get_the_limit_in_their_host_config() {
    if engine().is_none() {
        record_not_run(
            "docker_containers_get_the_limit_in_their_host_config",
            "no Docker engine answers",
        );
        return;
    }
    let report = run(&scenario(
        "tests/fixtures/docker/alice-pays-bob.yaml",
        "docker",
    ));
    let throttled = envelopes(&report, &["docker"]);
    let readable = report["nodes"][0]["resources"]["envelope"]["not_available"]
        .as_str()
        .is_some_and(str::is_empty);
    if readable {
        assert!(throttled.iter().any(|t| *t > 0), "{throttled:?}");
    }
}

/// The report's envelope table, from a report model (no nodes run): limits, who
/// applied them, the counters, and what was not available; the JSON matches the schema.
#[test]
fn the_report_shows_each_envelope_and_what_was_not_available() {
    use lnbench_tui::metrics::{EnvelopeReading, KernelCounters};
    let mut report = sample_report(
        "name: envelopes\n",
        lnbench_tui::metrics::Summary {
            started_unix_ms: 1_795_000_000_000,
            ended_unix_ms: 1_795_000_020_000,
            elapsed_s: 20.0,
            active_s: 20.0,
            paused_s: 0.0,
            ok: 0,
            failed: 0,
            indeterminate: 0,
            mismatches: None,
            warm_up_excluded: 0,
            dropped: 0,
            tps_avg: 0.0,
            latency: Default::default(),
            failures_by_reason: Default::default(),
            series_resolution_s: 1,
            series: Vec::new(),
            events: Vec::new(),
            events_dropped: 0,
            tool_cpu_s: None,
            tool_process: Default::default(),
            machine: None,
            latency_spectrum: Vec::new(),
            phases: Vec::new(),
            interval_log: None,
            payment_log: None,
            routes: Vec::new(),
            stream: None,
            parts: None,
            drain: None,
            attack: None,
            rebalance: None,
        },
    );
    report.nodes[0].resources.envelope = Some(EnvelopeReading {
        name: report.nodes[0].name.clone(),
        cpus: Some(2.0),
        memory_bytes: Some(MEMORY),
        cpuset: Some("0-1".into()),
        applied_by: "cgroup v1".into(),
        kernel: KernelCounters {
            throttled_periods: Some(12),
            throttled_us: Some(1_500_000),
            memory_peak_bytes: Some(300 << 20),
            oom_kills: None,
        },
        not_available: "OOM kills: this kernel's cgroup does not give it".into(),
    });
    let md = lnbench_tui::report::envelopes::markdown(&report);
    assert!(
        md.contains("2 CPUs, 1.0 GiB, on CPUs 0-1 | cgroup v1 | 1.50 s in 12 periods"),
        "{md}"
    );
    assert!(md.contains("| 300.0 MiB | – |"), "{md}");
    assert!(md.contains("not available: OOM kills"), "{md}");
    assert_matches_schema(&serde_json::to_value(&report).unwrap());
    report.nodes[0].resources.envelope = None;
    assert_eq!(lnbench_tui::report::envelopes::markdown(&report), "");
}
