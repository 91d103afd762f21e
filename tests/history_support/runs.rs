//! Shared by the history tests on either store: report directories made from a real
//! report (runs, and repeated runs as sweeps), and the planted-regression check.

#![allow(dead_code)] // each test binary uses a different subset of these helpers

use crate::common::repo_file;
use assert_cmd::Command;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

pub fn history(store: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut c = Command::cargo_bin("lnbench-tui").unwrap();
    c.arg("history").arg("--store").arg(store);
    c
}

pub fn report(started_at: &str, tps: f64) -> Value {
    let text = std::fs::read_to_string(repo_file("tests/fixtures/reports/real-lnd-a/report.json"))
        .unwrap();
    let mut r: Value = serde_json::from_str(&text).unwrap();
    r["started_at"] = json!(started_at);
    r["results"]["tps_avg"] = json!(tps);
    r["results"]["latency"]["p50_us"] = json!((1e6 / tps) as u64);
    r["results"]["latency"]["p99_us"] = json!((4e6 / tps) as u64);
    r
}

/// A run repeated (a sweep directory of `repeat=K` points) with these TPS.
pub fn repeated(dir: &Path, started_at: &str, tps: &[f64]) -> PathBuf {
    let mut points = Vec::new();
    for (k, t) in tps.iter().enumerate() {
        let label = format!("repeat={}", k + 1);
        std::fs::create_dir_all(dir.join(&label)).unwrap();
        let r = report(started_at, *t);
        std::fs::write(dir.join(&label).join("report.json"), r.to_string()).unwrap();
        points.push(json!({ "label": label, "status": "done" }));
    }
    let base = report(started_at, 1.0);
    let sweep = json!({
        "schema_version": 2, "complete": true, "started_at": started_at,
        "finished_at": started_at, "scenario": base["scenario"], "runtime": "local",
        "host": base["host"], "tool": base["tool"], "points": points,
    });
    std::fs::write(dir.join("sweep.json"), sweep.to_string()).unwrap();
    dir.to_path_buf()
}

pub fn stdout_of(c: &mut Command, code: i32) -> String {
    let out = c.output().unwrap();
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert_eq!(out.status.code(), Some(code), "stdout:\n{o}\nstderr:\n{e}");
    o + &e
}

/// Two runs within noise, then a slower one: `check` exits 0, then 1, on the store
/// `history()` names.
pub fn check_calls_a_planted_regression(history: &dyn Fn() -> Command, d: &Path) {
    let base = repeated(
        &d.join("a"),
        "2026-11-20T10:00:00Z",
        &[60.0, 62.0, 61.0, 63.0, 59.0],
    );
    let same = repeated(
        &d.join("b"),
        "2026-11-20T11:00:00Z",
        &[61.0, 60.5, 62.5, 59.5, 63.5],
    );
    stdout_of(history().arg("import").arg(&base).arg(&same), 0);
    let noise = stdout_of(history().arg("check"), 0);
    assert!(noise.contains("within noise"), "{noise}");
    assert!(!noise.contains("REGRESSION"), "{noise}");

    let slow = repeated(
        &d.join("c"),
        "2026-11-20T12:00:00Z",
        &[40.0, 41.0, 39.5, 42.0, 40.5],
    );
    stdout_of(history().arg("import").arg(&slow), 0);
    let out = stdout_of(history().args(["check", "--scenario", "alice-pays-bob"]), 1);
    assert!(out.contains("tps 40.5 (median of 5)"), "{out}");
    assert!(out.contains("significant (Mann-Whitney U"), "{out}");
    assert!(out.contains("REGRESSION"), "{out}");
    // A floor above the change: still significantly worse, no longer a regression.
    let floor = ["check", "--metric", "tps", "--min-change", "40"];
    let lenient = stdout_of(history().args(floor), 0);
    assert!(
        lenient.contains("within the 40.0 % floor (--min-change): not a regression"),
        "{lenient}"
    );
    assert!(!lenient.contains("REGRESSION"), "{lenient}");
    stdout_of(history().args(["check", "--last", "0"]), 2);
    stdout_of(history().args(["check", "--min-change", "-1"]), 2);
    let none = stdout_of(history().args(["check", "--scenario", "nope"]), 0);
    assert!(none.contains("nothing to check"), "{none}");
}
