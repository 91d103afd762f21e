//! End to end with profiles: real LND nodes on a real btcd chain, `profile:` on alice
//! (LND's own pprof listener) and the chain (perf record on btcd's process); the report
//! must hold a flame graph of each with the code that ran, and the raw files must parse.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Folded stacks of a `.folded` file: total of the counts.
fn folded_total(path: &std::path::Path) -> u64 {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<u64>().ok())
        .sum()
}

/// The part of report.html inside `<figure id="ID"> ... </figure>`.
fn figure<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("<figure id=\"{id}\""))
        .unwrap_or_else(|| panic!("no figure {id} in report.html"));
    let end = html[start..].find("</figure>").expect("figure closed") + start;
    &html[start..end]
}

/// A run of `fixture` (under tests/fixtures/scenarios/valid/) for 16 s, alice and the
/// chain profiled from 3 s in for 8 s, in `work`: it exits 0; its report directory,
/// report.json (checked against the schema) and stderr.
fn profiled_run(work: &Path, fixture: &str) -> (PathBuf, serde_json::Value, String) {
    let run_dir = work.join("runs");
    let report_dir = work.join("report");
    std::fs::create_dir_all(&run_dir).unwrap();
    let text = std::fs::read_to_string(repo_file(&format!(
        "tests/fixtures/scenarios/valid/{fixture}"
    )))
    .unwrap()
    .replace(
        "    payments: 2000\n    duration: 5m\n",
        "    duration: 16s\n",
    );
    let scenario = work.join("profiled.yaml");
    std::fs::write(
        &scenario,
        format!("{text}profile:\n  nodes: [alice, chain]\n  start: 3s\n  duration: 8s\n"),
    )
    .unwrap();
    let out = lnbench_command()
        .arg(&scenario)
        .arg("--report")
        .arg(&report_dir)
        .arg("--run-dir")
        .arg(&run_dir)
        .output()
        .expect("run lnbench-tui");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "stderr:\n{stderr}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report_dir.join("report.json")).unwrap())
            .unwrap();
    assert_matches_schema(&json);
    (report_dir, json, stderr)
}

#[test]
fn profiled_run_has_flame_graphs_of_lnd_and_of_btcd() {
    require_node_binaries();
    if which_perf().is_none() {
        panic!(
            "perf is not installed: the btcd half of this test needs it (apt install linux-perf)"
        );
    }
    let work = tempfile::tempdir().expect("temp dir");
    let (report_dir, json, stderr) = profiled_run(work.path(), "alice-pays-bob.yaml");
    let profiling = &json["profiling"];
    let profiles = profiling["profiles"].as_array().expect("profiles listed");
    let find = |node: &str, kind: &str| {
        profiles
            .iter()
            .find(|p| p["node"] == node && p["kind"] == kind)
            .unwrap_or_else(|| panic!("no {node} {kind} profile: {profiling:#}"))
    };
    for (node, kind, profiler) in [
        ("alice", "cpu", "pprof"),
        ("alice", "heap", "pprof"),
        ("chain", "cpu", "perf"),
    ] {
        let p = find(node, kind);
        assert_eq!(p["profiler"], profiler, "{p:#}\nstderr:\n{stderr}");
        assert!(p.get("not_profiled").is_none(), "{p:#}");
        assert!(p["total"].as_u64().unwrap() > 0, "{p:#}");
        assert!(!p["top_functions"].as_array().unwrap().is_empty(), "{p:#}");
        for f in p["files"].as_array().unwrap() {
            let f = f.as_str().unwrap();
            assert!(report_dir.join(f).is_file(), "{f} listed but not written");
        }
    }
    // bob was not asked for.
    assert!(
        !profiles.iter().any(|p| p["node"] == "bob"),
        "{profiling:#}"
    );

    // The raw CPU profile is the pprof LND served, and parses; its folded stacks too.
    let raw = std::fs::read(report_dir.join("profile-alice-cpu.pb.gz")).unwrap();
    let parsed = lnbench_tui::profile::pprof::parse(&raw).expect("the raw pprof file parses");
    assert!(!parsed.sample.is_empty(), "no samples in LND's CPU profile");
    assert!(
        parsed
            .string_table
            .iter()
            .any(|s| s.starts_with("github.com/lightningnetwork/lnd/routing.")),
        "the raw profile keeps LND's full function names"
    );
    assert!(parsed.sample_types().iter().any(|t| t == "cpu/nanoseconds"));
    assert!(folded_total(&report_dir.join("profile-alice-cpu.folded")) > 0);
    assert!(
        folded_total(&report_dir.join("profile-chain-cpu.folded")) > 0,
        "perf folded nothing"
    );

    // report.html shows both flame graphs inline, without script; alice's frames
    // include LND's payment path (its routing package), the chain's are btcd's.
    let html = std::fs::read_to_string(report_dir.join("report.html")).unwrap();
    assert!(
        !html.contains("<script"),
        "report.html must stay script-free"
    );
    let alice = figure(&html, "flamegraph-alice-cpu");
    assert!(alice.contains("<svg"), "no SVG in alice's figure");
    assert!(
        alice.contains("lnd/routing.(*ChannelRouter)"),
        "alice's flame graph has no frame of LND's routing package"
    );
    let chain = figure(&html, "flamegraph-chain-cpu");
    assert!(chain.contains("<svg"), "no SVG in the chain's figure");
    assert!(
        chain.contains("btcd"),
        "the chain's flame graph names no btcd frame"
    );
    for svg in [
        "flamegraph-alice-cpu.svg",
        "flamegraph-alice-heap.svg",
        "flamegraph-chain-cpu.svg",
    ] {
        let text = std::fs::read_to_string(report_dir.join(svg)).unwrap();
        assert!(text.contains("<svg"), "{svg} is no SVG");
    }

    let md = std::fs::read_to_string(report_dir.join("summary.md")).unwrap();
    assert!(md.contains("### Profiles"), "{md}");
    assert!(md.contains("| function | self | total |"), "{md}");
    keep_report(&report_dir, "");
}

/// Core Lightning on Bitcoin Core, both native: perf on alice's lightningd (with its
/// plugins) and on bitcoind.
#[test]
fn profiled_cln_run_has_perf_flame_graphs_of_lightningd_and_bitcoind() {
    let test = "profiled_cln_run_has_perf_flame_graphs_of_lightningd_and_bitcoind";
    if !built_on_bitcoind(test, "lightningd", CLN_BUILD) {
        return;
    }
    assert!(
        which_perf().is_some(),
        "perf is not installed (apt install linux-perf)"
    );
    let work = tempfile::tempdir().expect("temp dir");
    let (report_dir, json, stderr) = profiled_run(work.path(), "cln-pays-cln.yaml");
    let profiles = json["profiling"]["profiles"].as_array().expect("profiles");
    for node in ["alice", "chain"] {
        let p = profiles
            .iter()
            .find(|p| p["node"] == node && p["kind"] == "cpu")
            .unwrap_or_else(|| panic!("no {node} profile: {profiles:#?}"));
        assert_eq!(p["profiler"], "perf", "{p:#}\nstderr:\n{stderr}");
        assert!(p["total"].as_u64().unwrap() > 0, "{p:#}");
    }
    let alice = std::fs::read_to_string(report_dir.join("profile-alice-cpu.folded")).unwrap();
    assert!(folded_total(&report_dir.join("profile-alice-cpu.folded")) > 0);
    assert!(
        alice.lines().any(|l| l.starts_with("lightningd;")),
        "no lightningd stacks"
    );
    assert!(
        folded_total(&report_dir.join("profile-chain-cpu.folded")) > 0,
        "bitcoind: nothing folded"
    );
    let html = std::fs::read_to_string(report_dir.join("report.html")).unwrap();
    assert!(figure(&html, "flamegraph-alice-cpu").contains("<svg"));
    assert!(figure(&html, "flamegraph-chain-cpu").contains("<svg"));
    keep_report(&report_dir, "-cln");
}

/// Copies the report to `$LNBENCH_KEEP_PROFILE_REPORT<suffix>` when that is set.
fn keep_report(report_dir: &Path, suffix: &str) {
    if let Ok(keep) = std::env::var("LNBENCH_KEEP_PROFILE_REPORT") {
        let _ = Command::new("cp")
            .arg("-r")
            .arg(report_dir)
            .arg(format!("{keep}{suffix}"))
            .status();
    }
}

fn which_perf() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("perf"))
        .find(|p| p.is_file())
}
