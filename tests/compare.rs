//! `lnbench-tui compare` through the binary, on recorded report.json files
//! (tests/fixtures/reports): two hand-made runs of the same scenario against two LND
//! versions, and two real runs of alice-pays-bob against LND (300 payments each,
//! recorded with `--report`; only the node binary path was cut to `lnd`).

mod common;

use assert_cmd::Command;
use common::repo_file;
use std::path::{Path, PathBuf};

const BASE: &str = "tests/fixtures/reports/lnd-0.18";
const NEW: &str = "tests/fixtures/reports/lnd-0.19";
const REAL_A: &str = "tests/fixtures/reports/real-lnd-a";
const REAL_B: &str = "tests/fixtures/reports/real-lnd-b";

fn compare() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lnbench-tui"))
}

fn fixture_json(dir: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(repo_file(dir).join("report.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Writes `report` as `dir/name/report.json` and returns that directory.
fn write_report(dir: &Path, name: &str, report: &serde_json::Value) -> PathBuf {
    let run = dir.join(name);
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("report.json"), report.to_string()).unwrap();
    run
}

#[test]
fn fixtures_match_the_published_schema() {
    for dir in [BASE, NEW, REAL_A, REAL_B] {
        common::assert_matches_schema(&fixture_json(dir));
    }
}

#[test]
fn compares_two_recorded_runs() {
    let out = tempfile::tempdir().unwrap();
    let assert = compare()
        .arg("compare")
        .arg(repo_file(BASE))
        // A report.json path works as well as its directory.
        .arg(repo_file(NEW).join("report.json"))
        .arg("--out")
        .arg(out.path())
        .assert()
        .success();
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    let md = std::fs::read_to_string(out.path().join("compare.md")).unwrap();
    assert_eq!(stdout, md, "stdout is the markdown written");
    for line in [
        "| metric | alice-pays-bob (lnd 0.18.5-beta) | alice-pays-bob (lnd 0.19.0-beta) | Δ alice-pays-bob (lnd 0.19.0-beta) |",
        "| TPS (avg) | 82.0 | 112.0 | +30.0 (+36.6%) ▲ better |",
        "| latency p50 | 22.0 ms | 22.0 ms | +0 µs (+0.0%) |",
        "| latency p99 | 96.0 ms | 76.0 ms | -20.0 ms (-20.8%) ▼ better |",
        "| latency p99.9 | 111.0 ms | 91.0 ms | -20.0 ms (-18.0%) ▼ better |",
        "| successful payments | 2870 | 3920 | +1050 (+36.6%) ▲ better |",
        "| failed payments | 5 | 0 | -5 (-100.0%) ▼ better |",
        "| failure rate | 0.17% | 0.00% | -0.17 pp (-100.0%) ▼ better |",
        "| tool CPU / payment | 521.7 µs | 357.1 µs | -164.6 µs (-31.5%) ▼ better |",
    ] {
        assert!(md.lines().any(|l| l == line), "missing {line:?} in\n{md}");
    }
    assert_eq!(md.lines().filter(|l| l.starts_with("| ")).count(), 11);

    let html = std::fs::read_to_string(out.path().join("compare.html")).unwrap();
    for needle in [
        "id=\"tps-over-time\"",
        "id=\"latency-p99-over-time\"",
        "+30.0 (+36.6%) ▲ better",
        "alice-pays-bob (lnd 0.19.0-beta)",
    ] {
        assert!(html.contains(needle), "compare.html lacks {needle}");
    }
    assert_eq!(html.matches("<svg").count(), 2, "two inline charts");
    assert!(
        !html.contains("<script") && !html.contains("<link"),
        "self-contained"
    );
}

#[test]
fn compares_two_real_lnd_runs() {
    let out = tempfile::tempdir().unwrap();
    let assert = compare()
        .args(["compare", REAL_A, REAL_B, "--out"])
        .arg(out.path())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .assert()
        .success();
    let md = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    // Same scenario, same LND version: the directories tell the runs apart.
    for line in [
        "| metric | real-lnd-a | real-lnd-b | Δ real-lnd-b |",
        "| TPS (avg) | 33.1 | 37.4 | +4.3 (+13.0%) ▲ better |",
        "| latency p50 | 274.7 ms | 266.0 ms | -8.7 ms (-3.2%) |",
        "| latency p99 | 555.0 ms | 382.7 ms | -172.3 ms (-31.0%) ▼ better |",
        "| successful payments | 300 | 300 | +0 (+0.0%) |",
        "| failure rate | 0.00% | 0.00% | +0.00 pp (+0.0%) |",
    ] {
        assert!(md.lines().any(|l| l == line), "missing {line:?} in\n{md}");
    }
    let html = std::fs::read_to_string(out.path().join("compare.html")).unwrap();
    assert!(html.contains("lnd 0.21.1-beta"), "node versions listed");
    // Each run's colour: its line and its legend entry in each of the two charts.
    for color in ["#1F5FA8", "#D95F02"] {
        let strokes = html.matches(&format!("stroke=\"{color}\"")).count();
        assert_eq!(strokes, 4, "{color}");
    }
}

#[test]
fn changes_within_the_noise_threshold_are_not_flagged() {
    let out = tempfile::tempdir().unwrap();
    compare()
        .args(["compare", BASE, NEW, "--noise-pct", "40", "--out"])
        .arg(out.path())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .assert()
        .success();
    let md = std::fs::read_to_string(out.path().join("compare.md")).unwrap();
    assert!(
        md.contains("| TPS (avg) | 82.0 | 112.0 | +30.0 (+36.6%) |"),
        "{md}"
    );
    assert!(
        md.contains("| failed payments | 5 | 0 | -5 (-100.0%) ▼ better |"),
        "{md}"
    );
}

#[test]
fn unknown_fields_are_ignored_and_same_labels_fall_back_to_directories() {
    let dir = tempfile::tempdir().unwrap();
    let mut report = fixture_json(BASE);
    report["a_field_from_the_future"] = serde_json::json!({"x": 1});
    report["results"]["events"] = serde_json::json!([]);
    let a = write_report(dir.path(), "monday", &report);
    let b = write_report(dir.path(), "tuesday", &report);
    let out = dir.path().join("out");
    let assert = compare()
        .arg("compare")
        .args([&a, &b])
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    assert!(
        stdout.contains("| metric | monday | tuesday | Δ tuesday |"),
        "{stdout}"
    );
    assert!(
        stdout.contains("| TPS (avg) | 82.0 | 82.0 | +0.0 (+0.0%) |"),
        "{stdout}"
    );
}

fn stderr_of(assert: &assert_cmd::assert::Assert) -> String {
    String::from_utf8(assert.get_output().stderr.clone()).unwrap()
}

#[test]
fn a_missing_input_exits_2_naming_it() {
    let out = tempfile::tempdir().unwrap();
    let missing = out.path().join("no-such-run");
    let assert = compare()
        .arg("compare")
        .arg(repo_file(BASE))
        .arg(&missing)
        .arg("--out")
        .arg(out.path().join("out"))
        .assert()
        .code(2);
    let err = stderr_of(&assert);
    assert!(err.contains(&missing.display().to_string()), "{err}");
    assert!(err.contains("no such file or directory"), "{err}");
    assert!(!out.path().join("out").exists(), "nothing written");
}

#[test]
fn bad_inputs_exit_2_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let mut newer = fixture_json(BASE);
    newer["schema_version"] = serde_json::json!(2);
    let newer = write_report(dir.path(), "newer", &newer);
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let scenario = repo_file("tests/fixtures/scenarios/valid/alice-pays-bob.yaml");
    for (input, expected) in [
        (
            newer.clone(),
            "report schema_version 2, this lnbench-tui reads version 1",
        ),
        (empty.clone(), "directory without report.json"),
        (scenario.clone(), "not a lnbench-tui report.json"),
    ] {
        let assert = compare()
            .arg("compare")
            .arg(repo_file(BASE))
            .arg(&input)
            .arg("--out")
            .arg(dir.path().join("out"))
            .assert()
            .code(2);
        let err = stderr_of(&assert);
        assert!(err.contains(&input.display().to_string()), "{err}");
        assert!(err.contains(expected), "{expected:?} not in {err}");
    }
    let assert = compare()
        .args(["compare", BASE, NEW, "--noise-pct=-1", "--out"])
        .arg(dir.path().join("out"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .assert()
        .code(2);
    assert!(stderr_of(&assert).contains("--noise-pct -1"));
    // One run is nothing to compare.
    compare()
        .args(["compare", BASE, "--out"])
        .arg(dir.path().join("out"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .assert()
        .code(2);
}

/// Two runs that profiled alice's CPU get a differential flame graph of alice: a file
/// in --out and a figure in compare.html (inline, without script).
#[test]
fn profiled_runs_get_a_differential_flame_graph() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dirs = Vec::new();
    for (name, fixture, folded) in [
        ("a", REAL_A, "main;route;hash 60\nmain;db;write 40\n"),
        ("b", REAL_B, "main;route;hash 20\nmain;db;write 80\n"),
    ] {
        let mut report = fixture_json(fixture);
        report["profiling"] = serde_json::json!({
            "start_s": 5.0, "seconds": 10.0, "tps_in_window": 50.0, "tps_after_window": 51.0,
            "profiles": [
                { "node": "alice", "implementation": "lnd", "kind": "cpu", "profiler": "pprof",
                  "total": 100, "unit": "nanoseconds",
                  "files": ["profile-alice-cpu.pb.gz", "profile-alice-cpu.folded", "flamegraph-alice-cpu.svg"],
                  "top_functions": [] },
                { "node": "bob", "implementation": "lnd", "kind": "cpu", "profiler": "none",
                  "not_profiled": "not asked", "total": 0, "unit": "", "files": [], "top_functions": [] }
            ]
        });
        common::assert_matches_schema(&report);
        let dir = write_report(tmp.path(), name, &report);
        std::fs::write(dir.join("profile-alice-cpu.folded"), folded).unwrap();
        dirs.push(dir);
    }
    let out = tmp.path().join("out");
    compare()
        .arg("compare")
        .args(&dirs)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let svg = std::fs::read_to_string(out.join("flamegraph-diff-alice-2.svg")).expect("diff SVG");
    assert!(svg.contains("<svg") && svg.contains("hash"), "{svg}");
    assert!(
        !out.join("flamegraph-diff-bob-2.svg").exists(),
        "bob was not profiled"
    );
    let html = std::fs::read_to_string(out.join("compare.html")).unwrap();
    let at = html
        .find("<figure id=\"flamegraph-diff-alice-2\"")
        .expect("figure in compare.html");
    assert!(html[at..].contains("<svg"));
    assert!(!html.contains("<script"), "compare.html stays script-free");
    let md = std::fs::read_to_string(out.join("compare.md")).unwrap();
    assert!(md.contains("flamegraph-diff-alice-2.svg"), "{md}");
}

/// `results.machine` as a run writes it: `outside` percent of one core from outside
/// the run, `steal` percent of CPU time stolen.
fn machine(outside: f64, steal: f64) -> serde_json::Value {
    let disturbed = outside > 10.0 || steal > 2.0;
    serde_json::json!({
        "seconds": 30.0, "samples": 30, "cores": 2, "host_busy_pct": 120.0 + outside,
        "run_pct": 120.0, "outside_load_pct": outside, "outside_load_pct_max": outside * 1.5,
        "steal_pct": steal, "iowait_pct": 0.3, "disturbed": disturbed,
        "verdict": if disturbed { "DISTURBED: ..." } else { "quiet: ..." }
    })
}

/// Compares the two hand-made runs with the given machines; returns (compare.md,
/// stdout, compare.html).
fn compare_with_machines(
    base: serde_json::Value,
    new: serde_json::Value,
) -> (String, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut runs = Vec::new();
    for (name, fixture, m) in [("base", BASE, base), ("new", NEW, new)] {
        let mut report = fixture_json(fixture);
        // Null stands for a report from before the host was sampled: no field.
        if !m.is_null() {
            report["results"]["machine"] = m;
        }
        common::assert_matches_schema(&report);
        runs.push(write_report(dir.path(), name, &report));
    }
    let out = dir.path().join("out");
    let assert = compare()
        .arg("compare")
        .args(&runs)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap();
    (read("compare.md"), stdout, read("compare.html"))
}

#[test]
fn a_disturbed_run_is_flagged_and_its_difference_may_be_the_machine() {
    let (md, stdout, html) = compare_with_machines(machine(3.2, 0.1), machine(85.0, 0.4));
    assert_eq!(stdout, md, "the printed table is the markdown");
    let row = "| machine | quiet: outside load 3 % of a core, steal 0.1 % \
               | DISTURBED: outside load 85 % of a core, steal 0.4 % | may be the machine |";
    assert!(md.lines().any(|l| l == row), "missing {row:?} in\n{md}");
    let note = md
        .lines()
        .find(|l| l.starts_with("Note: alice-pays-bob (lnd 0.19.0-beta) was DISTURBED"))
        .unwrap_or_else(|| panic!("no verdict note in\n{md}"));
    assert!(
        note.contains("outside load 85 % of a core")
            && note.contains(
                "A difference between alice-pays-bob (lnd 0.18.5-beta) and \
                 alice-pays-bob (lnd 0.19.0-beta) may be the machine, not the nodes"
            ),
        "{note}"
    );
    // The runs table flags the run, and the banner says the same as the note.
    assert!(
        html.contains(
            "<td class=\"fail\">DISTURBED: outside load 85 % of a core, steal 0.4 %</td>"
        ),
        "{html}"
    );
    assert!(
        html.contains("<td>quiet: outside load 3 % of a core, steal 0.1 %</td>"),
        "{html}"
    );
    let banner = html
        .lines()
        .find(|l| l.contains("class=\"banner partial\"") && l.contains("may be the machine"))
        .expect("a banner with the verdict");
    assert!(banner.contains("85 %"), "{banner}");
    assert!(
        html.contains("<td class=\"num fail\">may be the machine</td>"),
        "the Δ of the machine row is flagged"
    );
}

#[test]
fn a_disturbed_baseline_casts_doubt_too_and_quiet_runs_none() {
    let (md, _, _) = compare_with_machines(machine(0.5, 4.0), machine(1.0, 0.0));
    assert!(
        md.contains("| machine | DISTURBED: outside load 0 % of a core, steal 4.0 % |"),
        "steal alone disturbs:\n{md}"
    );
    assert!(
        md.contains("Note: alice-pays-bob (lnd 0.18.5-beta) was DISTURBED"),
        "{md}"
    );
    let (md, _, html) = compare_with_machines(machine(2.0, 0.0), machine(6.0, 0.0));
    assert!(
        md.lines().any(|l| l
            == "| machine | quiet: outside load 2 % of a core, steal 0.0 % \
                | quiet: outside load 6 % of a core, steal 0.0 % | both quiet |"),
        "{md}"
    );
    assert!(
        !md.contains("may be the machine") && !md.contains("Note:"),
        "{md}"
    );
    assert!(!html.contains("DISTURBED"), "{html}");
}

#[test]
fn a_run_from_before_sampling_is_not_sampled_and_two_have_no_machine_row() {
    let (md, _, _) = compare_with_machines(serde_json::Value::Null, machine(40.0, 0.0));
    assert!(
        md.contains("| machine | not sampled | DISTURBED: outside load 40 % of a core"),
        "{md}"
    );
    assert!(md.contains("may be the machine"), "{md}");
    let out = tempfile::tempdir().unwrap();
    let assert = compare()
        .args(["compare", BASE, NEW, "--out"])
        .arg(out.path())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .assert()
        .success();
    let md = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    assert!(!md.contains("| machine |"), "{md}");
}

/// Writes a sweep directory (no repeats) with one report per label, from `report`.
fn write_sweep(dir: &Path, labels: &[&str], report: &serde_json::Value) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let points: Vec<serde_json::Value> = labels
        .iter()
        .map(|l| {
            write_report(dir, l, report);
            serde_json::json!({ "label": l })
        })
        .collect();
    let sweep = serde_json::json!({ "schema_version": 2, "points": points });
    std::fs::write(dir.join("sweep.json"), sweep.to_string()).unwrap();
    dir.to_path_buf()
}

/// The quick start's output is a sweep directory: two of them are compared point by
/// point, matched by label, and a point in only one is listed, not compared.
#[test]
fn two_sweeps_are_compared_point_by_point() {
    let tmp = tempfile::tempdir().unwrap();
    let a = write_sweep(
        &tmp.path().join("a"),
        &["concurrency=1", "concurrency=4"],
        &fixture_json(BASE),
    );
    let b = write_sweep(
        &tmp.path().join("b"),
        &["concurrency=4", "concurrency=1", "concurrency=7"],
        &fixture_json(NEW),
    );
    let out = tmp.path().join("out");
    let assert = compare()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    for label in ["concurrency=1", "concurrency=4"] {
        assert!(stdout.contains(&format!("## {label}")), "{stdout}");
        let md = std::fs::read_to_string(out.join(label).join("compare.md")).unwrap();
        assert!(md.contains("| TPS (avg) | 82.0 | 112.0 |"), "{md}");
    }
    assert!(!out.join("concurrency=7").exists());
    let index = std::fs::read_to_string(out.join("compare.md")).unwrap();
    assert!(
        index.contains("[concurrency=4](concurrency=4/compare.md)"),
        "{index}"
    );
    assert!(index.contains("not compared: concurrency=7"), "{index}");
    // The index as a page too, linking each point's own compare.html.
    let page = std::fs::read_to_string(out.join("compare.html")).unwrap();
    for needle in [
        r#"<a href="concurrency%3D1/compare.html">concurrency=1</a>"#,
        r#"<a href="concurrency%3D4/compare.html">concurrency=4</a>"#,
        "not compared: concurrency=7",
    ] {
        assert!(
            page.contains(needle),
            "compare.html lacks {needle}:\n{page}"
        );
    }
    for label in ["concurrency=1", "concurrency=4"] {
        assert!(out.join(label).join("compare.html").is_file(), "{label}");
    }
}

/// Without `--out` the table is printed and nothing is written: two runs, and two
/// sweeps point by point.
#[test]
fn without_out_compare_prints_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let assert = compare()
        .current_dir(tmp.path())
        .arg("compare")
        .arg(repo_file(BASE))
        .arg(repo_file(NEW))
        .assert()
        .success();
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    assert!(stdout.contains("| TPS (avg) | 82.0 | 112.0 |"), "{stdout}");

    let a = write_sweep(
        &tmp.path().join("a"),
        &["concurrency=1"],
        &fixture_json(BASE),
    );
    let b = write_sweep(
        &tmp.path().join("b"),
        &["concurrency=1"],
        &fixture_json(NEW),
    );
    let before: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    let assert = compare()
        .current_dir(tmp.path())
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .assert()
        .success();
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    assert!(stdout.contains("## concurrency=1"), "{stdout}");
    assert!(stdout.contains("| TPS (avg) | 82.0 | 112.0 |"), "{stdout}");
    let after: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert_eq!(
        before.len(),
        after.len(),
        "nothing written beside the inputs"
    );
    assert!(!a.join("concurrency=1").join("compare.md").exists());
}

/// `compare` printing its table to a reader that went away (`... | head -0`) still
/// writes its files and exits 0; a print macro would panic there (exit 101).
#[test]
fn compare_into_a_closed_pipe_writes_its_files_and_does_not_panic() {
    let out = tempfile::tempdir().unwrap();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_lnbench-tui"))
        .arg("compare")
        .arg(repo_file(BASE))
        .arg(repo_file(NEW))
        .arg("--out")
        .arg(out.path())
        .stdout(writer.try_clone().unwrap())
        .stderr(writer)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0), "{status}");
    assert!(out.path().join("compare.md").is_file());
}
