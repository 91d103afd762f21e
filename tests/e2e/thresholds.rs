//! End to end through the real binary: a failed threshold makes the exit code 1, and
//! the report directory holds every file of the report, thresholds included.

use crate::common::*;

#[test]
fn a_failed_threshold_exits_1_with_the_whole_report() {
    require_node_binaries();
    let work = tempfile::tempdir().expect("temp dir");
    let run_dir = work.path().join("runs");
    let report_dir = work.path().join("report");
    std::fs::create_dir_all(&run_dir).unwrap();
    let base = std::fs::read_to_string(repo_file(
        "tests/fixtures/scenarios/valid/alice-pays-bob.yaml",
    ))
    .unwrap();
    let scenario = work.path().join("thresholds.yaml");
    std::fs::write(
        &scenario,
        format!("{base}thresholds:\n  p99_latency: 1m\n  min_tps: 1000000\n"),
    )
    .unwrap();

    let out = lnbench_command()
        .arg(&scenario)
        .args(["--payments", "50", "--report"])
        .arg(&report_dir)
        .arg("--run-dir")
        .arg(&run_dir)
        .output()
        .expect("run lnbench-tui");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.contains("threshold p99_latency: pass"), "{stdout}");
    assert!(stdout.contains("threshold min_tps: FAIL"), "{stdout}");
    for file in [
        "report.json",
        "report.html",
        "summary.md",
        "tps-over-time.svg",
        "tps-vs-payments.svg",
        "latency-over-time.svg",
        "latency-spectrum.svg",
        "latency.hlog",
    ] {
        assert!(report_dir.join(file).exists(), "{file} missing:\n{stderr}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report_dir.join("report.json")).unwrap())
            .unwrap();
    assert_matches_schema(&json);
    assert_eq!(json["thresholds"][1]["passed"], false);
    let md = std::fs::read_to_string(report_dir.join("summary.md")).unwrap();
    assert!(
        md.contains("| min_tps |") && md.contains("**FAIL**"),
        "{md}"
    );
    assert!(processes_mentioning(&run_dir).is_empty());

    // The report of this real run, as a person opens it: in a browser, offline.
    let png = work.path().join("report.png");
    let dom = chromium_render(&report_dir.join("report.html"), &png);
    // TPS over time, TPS vs payments, latency over time, the percentile spectrum, and
    // CPU, memory and data-dir size per node.
    assert_eq!(dom.matches("<svg").count(), 7, "every chart is in the page");
    assert!(
        dom.contains("min_tps") && dom.contains("FAIL"),
        "thresholds shown"
    );
    let console = chromium_console(&report_dir.join("report.html"));
    assert!(console.is_empty(), "console messages: {console:#?}");
    let shot = std::fs::metadata(&png).expect("screenshot written").len();
    assert!(
        shot > 20_000,
        "screenshot of {shot} bytes is too small to show the report"
    );
}
