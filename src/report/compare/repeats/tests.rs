//! Repeated runs as compare inputs, on sweep directories written by hand.

use super::*;
use crate::report::compare::table::rows;
use serde_json::json;

/// A sweep directory with `tps` repeats of one point (`group`), each repeat's
/// report.json copied from the fixture with its TPS set.
fn sweep_dir(root: &Path, name: &str, group: &str, tps: &[f64], p99_ms: &[u64]) -> PathBuf {
    let dir = root.join(name);
    let fixture = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reports/real-lnd-a/report.json"),
    )
    .unwrap();
    let mut repeats = Vec::new();
    for (k, (t, p99)) in tps.iter().zip(p99_ms).enumerate() {
        let label = format!("repeat={}", k + 1);
        let mut report: serde_json::Value = serde_json::from_str(&fixture).unwrap();
        report["results"]["tps_avg"] = json!(t);
        report["results"]["latency"]["p99_us"] = json!(p99 * 1000);
        std::fs::create_dir_all(dir.join(&label)).unwrap();
        std::fs::write(dir.join(&label).join("report.json"), report.to_string()).unwrap();
        repeats.push(
            json!({"label": label, "repeat": k + 1, "tps_avg": t, "p50_us": 100_000,
            "p90_us": 150_000, "p99_us": p99 * 1000, "max_us": p99 * 1100, "ok": 100, "failed": 0,
            "outlier": false}),
        );
    }
    let sweep = json!({"schema_version": SWEEP_SCHEMA_VERSION, "spread": [
        {"group": group, "repeats": repeats}]});
    std::fs::write(dir.join("sweep.json"), sweep.to_string()).unwrap();
    dir
}

#[test]
fn a_repeated_sweep_is_read_as_its_median_repeat_and_all_the_figures() {
    let root = tempfile::tempdir().unwrap();
    let dir = sweep_dir(
        root.path(),
        "a",
        "all",
        &[30.0, 36.0, 33.0],
        &[300, 310, 290],
    );
    assert_eq!(sweep_target(&dir), Some((dir.clone(), None)));
    let (input, r) = load_repeated(&dir, None).unwrap();
    assert_eq!(r.tps, [30.0, 36.0, 33.0]);
    assert_eq!(
        input.report.results.tps_avg, 33.0,
        "the median repeat is shown"
    );
    assert!(input.path.ends_with("repeat=3/report.json"));
    assert_eq!(input.dir_name, "a");
    // A report directory is not a sweep target; DIR#GROUP is.
    assert_eq!(sweep_target(&dir.join("repeat=1")), None);
    let named = PathBuf::from(format!("{}#all", dir.display()));
    assert_eq!(
        sweep_target(&named),
        Some((dir.clone(), Some("all".into())))
    );
    let err = load_repeated(&dir, Some("concurrency=4"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no repeated point concurrency=4 (there are: all)"),
        "{err}"
    );
}

#[test]
fn the_table_calls_a_clear_change_significant_and_noise_noise() {
    let root = tempfile::tempdir().unwrap();
    let a = sweep_dir(
        root.path(),
        "a",
        "all",
        &[30.0, 31.0, 29.5, 30.5, 30.2],
        &[300, 305, 298, 302, 301],
    );
    let same = sweep_dir(
        root.path(),
        "b",
        "all",
        &[30.4, 29.8, 30.9, 30.1, 29.6],
        &[303, 299, 300, 304, 297],
    );
    let slower = sweep_dir(
        root.path(),
        "c",
        "all",
        &[24.0, 25.0, 24.5, 23.8, 24.9],
        &[400, 410, 395, 405, 402],
    );
    let mut inputs = Vec::new();
    let mut reps = Vec::new();
    for d in [&a, &same, &slower] {
        let (i, r) = load_repeated(d, None).unwrap();
        inputs.push(i);
        reps.push(Some(r));
    }
    let results: Vec<_> = inputs.iter().map(|r| &r.report.results).collect();
    let mut table = rows(&results, 5.0);
    apply(&mut table, &reps, 5.0);
    let tps = table.iter().find(|r| r.metric == "TPS (avg)").unwrap();
    assert_eq!(tps.values[0], "30.2 (median, n=5)");
    assert_eq!(
        tps.changes[0].verdict,
        Some(Verdict::Noise),
        "{:?}",
        tps.changes[0]
    );
    assert!(
        tps.changes[0].text.contains("within noise"),
        "{}",
        tps.changes[0].text
    );
    assert_eq!(
        tps.changes[1].verdict,
        Some(Verdict::Worse),
        "{:?}",
        tps.changes[1]
    );
    assert!(
        tps.changes[1]
            .text
            .contains("significant (Mann-Whitney U, p = 0.008, 5 vs 5 repeats) worse"),
        "{}",
        tps.changes[1].text
    );
    let p99 = table.iter().find(|r| r.metric == "latency p99").unwrap();
    assert_eq!(p99.changes[1].verdict, Some(Verdict::Worse));
    assert!(
        p99.changes[1].text.starts_with("+33."),
        "{}",
        p99.changes[1].text
    );
    // A threshold above the TPS change: significant, but not flagged; p99's +33 %
    // is beyond it and still worse.
    let mut lenient = rows(&results, 30.0);
    apply(&mut lenient, &reps, 30.0);
    let tps = lenient.iter().find(|r| r.metric == "TPS (avg)").unwrap();
    assert_eq!(tps.changes[1].verdict, Some(Verdict::Noise));
    assert!(
        tps.changes[1]
            .text
            .ends_with("5 vs 5 repeats), within ±30%"),
        "{}",
        tps.changes[1].text
    );
    let p99 = lenient.iter().find(|r| r.metric == "latency p99").unwrap();
    assert_eq!(p99.changes[1].verdict, Some(Verdict::Worse));
    // Rows without repeats keep the fixed threshold.
    let ok = table
        .iter()
        .find(|r| r.metric == "successful payments")
        .unwrap();
    assert!(!ok.values[0].contains("median"));
}

#[test]
fn each_repeats_machine_is_read_from_the_sweep() {
    let root = tempfile::tempdir().unwrap();
    let dir = sweep_dir(
        root.path(),
        "a",
        "all",
        &[30.0, 31.0, 29.0],
        &[300, 300, 300],
    );
    let path = dir.join("sweep.json");
    let mut sweep: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let machines = [(2.0, 0.1, false), (45.0, 0.3, true)];
    for (r, (outside, steal, disturbed)) in (sweep["spread"][0]["repeats"].as_array_mut())
        .unwrap()
        .iter_mut()
        .zip(machines)
    {
        r["outside_load_pct"] = json!(outside);
        r["steal_pct"] = json!(steal);
        r["disturbed"] = json!(disturbed);
    }
    std::fs::write(&path, sweep.to_string()).unwrap();
    let (_, r) = load_repeated(&dir, None).unwrap();
    // The third repeat was not sampled: its machine counts for nothing.
    assert_eq!(r.outside_load_pct, [2.0, 45.0]);
    assert_eq!(r.steal_pct, [0.1, 0.3]);
    assert_eq!(r.disturbed, 1);
}
