//! `history:` end to end, through the real binary on real LND nodes and a real btcd
//! chain: a ladder of two steps on one network, each point's load preceded by the
//! payments that bring the network to its step (and the restart after each step), and
//! a history the channel cannot carry, refused with its reasons and nothing left
//! running.

use crate::common::require_node_binaries;
use crate::common::scenario_run::{Finished, lnd_pair};
use serde_json::Value;

fn point<'a>(sweep: &'a Value, label: &str) -> &'a Value {
    (sweep["points"].as_array().expect("points[]").iter())
        .find(|p| p["label"] == label)
        .unwrap_or_else(|| panic!("point {label} in {sweep:#}"))
}

fn bob(point: &Value) -> &Value {
    (point["results"]["nodes"]
        .as_array()
        .expect("nodes[]")
        .iter())
    .find(|n| n["node"] == "bob")
    .unwrap_or_else(|| panic!("bob in {point:#}"))
}

#[test]
fn a_history_ladder_pays_each_steps_history_before_its_load() {
    require_node_binaries();
    let text = lnd_pair("e2e-history-ladder", "runtime: local\n", 2_000_000, 2)
        + "  amount_msat: 1000
  concurrency: 4
  stop:
    payments: 50
history:
  concurrency: 8
after_load:
  restart: [bob]
sweep:
  history: [0, 300]
";
    let run = Finished::run(&text);
    assert!(run.status.success(), "{}", run.log);
    let sweep = run.sweep_json();
    let (first, second) = (point(&sweep, "history=0"), point(&sweep, "history=300"));
    assert_eq!(
        (first["network"].as_u64(), second["network"].as_u64()),
        (Some(0), Some(0))
    );
    // The first step is the fresh network: nothing to pay.
    let h0 = &first["history"];
    assert_eq!(
        (h0["before"].as_u64(), h0["paid"].as_u64()),
        (Some(0), Some(0)),
        "{h0:#}"
    );
    // The second step tops up from what the first point's load paid.
    let paid_before = first["results"]["ok"].as_u64().expect("ok");
    assert_eq!(paid_before, 50, "{first:#}");
    let h1 = &second["history"];
    assert_eq!(h1["target"].as_u64(), Some(300), "{h1:#}");
    assert_eq!(h1["before"].as_u64(), Some(50), "{h1:#}");
    assert_eq!(h1["paid"].as_u64(), Some(250), "{h1:#}");
    assert_eq!(h1["concurrency"].as_u64(), Some(8), "{h1:#}");
    assert!(h1["tps"].as_f64().unwrap() > 0.0, "{h1:#}");
    // The measured load is its own: 50 payments, not 300.
    assert_eq!(second["results"]["ok"].as_u64(), Some(50), "{second:#}");
    // A ladder restarts after every step, and says how big the data dir was.
    for p in [first, second] {
        assert!(bob(p)["restart_s"].as_f64().is_some(), "{p:#}");
        assert!(bob(p)["data_dir_bytes"].as_u64().unwrap_or(0) > 0, "{p:#}");
    }
    // The ladder's curves and table beside the sweep's own.
    for chart in [
        "history-p99.svg",
        "history-data-dir.svg",
        "history-restart.svg",
    ] {
        let svg = std::fs::read_to_string(run.report_dir().join(chart)).expect(chart);
        assert!(svg.contains("payments made before the load"), "{chart}");
    }
    let md = std::fs::read_to_string(run.report_dir().join("sweep.md")).expect("sweep.md");
    assert!(md.contains("| history=300 | 300 | 250, "), "{md}");
    let html = std::fs::read_to_string(run.report_dir().join("sweep.html")).expect("sweep.html");
    assert!(
        html.contains("<section id=\"ladder\">"),
        "no ladder table in sweep.html"
    );
    assert!(html.contains("<td class=\"num\">300</td>"), "{html}");
    let report = std::fs::read_to_string(run.report_dir().join("history=300/report.json"));
    let report: Value = serde_json::from_str(&report.expect("point report")).unwrap();
    crate::common::assert_matches_schema(&report);
    assert_eq!(
        report["history"]["paid"].as_u64(),
        Some(250),
        "{:#}",
        report["history"]
    );
    assert!(
        run.log
            .contains("==> history: 300 payments made before the load (250 paid"),
        "{}",
        run.log
    );
}

#[test]
fn a_history_the_channel_cannot_carry_ends_the_run_with_the_reasons() {
    require_node_binaries();
    // One 200,000 sat channel carries about eight 20,000 sat payments one way.
    let text = lnd_pair("e2e-history-drained", "runtime: local\n", 200_000, 1)
        + "  amount_msat: 20000000
  concurrency: 1
  stop:
    payments: 5
history:
  payments: 30
  concurrency: 1
";
    let run = Finished::run(&text);
    assert!(!run.status.success(), "{}", run.log);
    assert!(run.log.contains("history: "), "{}", run.log);
    assert!(
        run.log.contains("failed in the phase's round 1"),
        "{}",
        run.log
    );
    assert!(
        run.log.contains("give the channels more capacity"),
        "{}",
        run.log
    );
    // No load ran: the history was not there.
    assert!(!run.log.contains("==> load:"), "{}", run.log);
}

/// `lnbench-tui ARGS` in `work`: its exit code and stderr.
fn lnbench_in(work: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let out = crate::common::scenario_run::lnbench_in(work, args);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// In `w` (with its `runs/`): `snapshot save save.yaml --to ./snap`, then `run.yaml
/// --snapshot ./snap --report report`; both exit 0. The save's log, the run's log and
/// its report.json, checked against the schema.
fn save_then_restore(w: &std::path::Path) -> (String, String, Value) {
    let save = [
        "snapshot",
        "save",
        "save.yaml",
        "--to",
        "./snap",
        "--run-dir",
        "runs",
    ];
    let (code, saved) = lnbench_in(w, &save);
    assert_eq!(code, Some(0), "{saved}");
    let run = [
        "run.yaml",
        "--snapshot",
        "./snap",
        "--report",
        "report",
        "--run-dir",
        "runs",
        "--no-store",
    ];
    let (code, log) = lnbench_in(w, &run);
    assert_eq!(code, Some(0), "{log}");
    let report = std::fs::read_to_string(w.join("report/report.json")).expect("report.json");
    let report: Value = serde_json::from_str(&report).unwrap();
    crate::common::assert_matches_schema(&report);
    (saved, log, report)
}

/// A work directory with `runs/` for `save_then_restore`, and a local LND pair paying 20
/// keysends with 4 in flight, named `name`.
fn snapshot_workspace(name: &str) -> (tempfile::TempDir, String) {
    let work = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(work.path().join("runs")).unwrap();
    let pair = lnd_pair(name, "runtime: local\n", 2_000_000, 2)
        + "  amount_msat: 1000
  concurrency: 4
  stop:
    payments: 20
";
    (work, pair)
}

#[test]
fn a_snapshot_saved_with_history_hands_it_on_and_a_run_tops_up_from_it() {
    require_node_binaries();
    let (work, pair) = snapshot_workspace("e2e-history-snapshot");
    let w = work.path();
    std::fs::write(
        w.join("save.yaml"),
        pair.clone() + "history: { payments: 120 }\n",
    )
    .unwrap();
    std::fs::write(w.join("run.yaml"), pair + "history: { payments: 200 }\n").unwrap();
    let (saved, _, report) = save_then_restore(w);
    assert!(saved.contains("and 120 payments"), "{saved}");
    let manifest = std::fs::read_to_string(w.join("snap/manifest.json")).unwrap();
    let manifest: Value = serde_json::from_str(&manifest).unwrap();
    assert_eq!(manifest["payments"].as_u64(), Some(120), "{manifest:#}");
    assert_eq!(
        report["snapshot"]["payments"].as_u64(),
        Some(120),
        "{:#}",
        report["snapshot"]
    );
    let h = &report["history"];
    assert_eq!(
        (h["before"].as_u64(), h["paid"].as_u64()),
        (Some(120), Some(80)),
        "{h:#}"
    );
    assert_eq!(report["results"]["ok"].as_u64(), Some(20));
}

/// The manifest of the snapshot in `dir`.
fn manifest(dir: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(dir.join("manifest.json")).expect("manifest.json");
    serde_json::from_str(&text).unwrap()
}

/// `snapshot save` of a history ladder: a snapshot per step, the second restored from
/// the first and paying only the difference; a run's ladder then climbs on from the
/// top step, with that step's history already paid.
#[test]
fn a_ladder_saves_each_step_restored_from_the_step_before() {
    require_node_binaries();
    let (work, pair) = snapshot_workspace("e2e-history-ladder-save");
    let w = work.path();
    let ladder = pair.clone() + "history: { concurrency: 8 }\nsweep: { history: [60, 150] }\n";
    std::fs::write(w.join("save.yaml"), ladder).unwrap();
    let save = [
        "snapshot",
        "save",
        "save.yaml",
        "--to",
        "./ladder",
        "--run-dir",
        "runs",
    ];
    let (code, saved) = lnbench_in(w, &save);
    assert_eq!(code, Some(0), "{saved}");
    let (low, high) = (
        manifest(&w.join("ladder/payments-60")),
        manifest(&w.join("ladder/payments-150")),
    );
    assert_eq!(low["payments"].as_u64(), Some(60), "{low:#}");
    assert_eq!(high["payments"].as_u64(), Some(150), "{high:#}");
    assert!(
        saved.contains("ladder step 2 of 2: 150 payments, restored from ./ladder/payments-60"),
        "{saved}"
    );
    // The second step paid the difference only, on the restored network, whose
    // setup time it keeps.
    assert!(saved.contains("paying 90 payments"), "{saved}");
    assert!(saved.contains("restored in"), "{saved}");
    assert_eq!(low["setup_s"], high["setup_s"], "{low:#} {high:#}");
    assert!(
        saved.contains("ladder saved in ./ladder: payments-60, payments-150"),
        "{saved}"
    );
    let run = [
        "run.yaml",
        "--snapshot",
        "./ladder/payments-150",
        "--report",
        "report",
        "--run-dir",
        "runs",
        "--no-store",
    ];
    // A run climbs on from the top step: nothing to pay at 150, then 30 more (its
    // first load paid 20) to reach 200.
    let climb = pair + "history: { concurrency: 8 }\nsweep: { history: [150, 200] }\n";
    std::fs::write(w.join("run.yaml"), climb).unwrap();
    let (code, log) = lnbench_in(w, &run);
    assert_eq!(code, Some(0), "{log}");
    let sweep = std::fs::read_to_string(w.join("report/sweep.json")).expect("sweep.json");
    let sweep: Value = serde_json::from_str(&sweep).unwrap();
    crate::common::assert_matches_schema_file(&sweep, "docs/sweep.schema.json");
    for (label, before, paid) in [("history=150", 150, 0), ("history=200", 170, 30)] {
        let p = point(&sweep, label);
        let h = &p["history"];
        assert_eq!(
            (h["before"].as_u64(), h["paid"].as_u64()),
            (Some(before), Some(paid)),
            "{label}: {h:#}"
        );
        assert_eq!(p["results"]["ok"].as_u64(), Some(20), "{p:#}");
    }
}

#[test]
fn a_key_value_snapshot_restored_with_native_sql_is_migrated_and_timed() {
    require_node_binaries();
    let (work, pair) = snapshot_workspace("e2e-history-migrate");
    let w = work.path();
    let on = |args: &str| {
        pair.replace(
            "implementation: lnd\n",
            &format!("implementation: lnd\n    args: [{args}]\n"),
        )
    };
    let kv = on("--db.backend=sqlite") + "history: { payments: 100 }\n";
    std::fs::write(w.join("save.yaml"), kv).unwrap();
    let native = on("--db.backend=sqlite, --db.use-native-sql");
    std::fs::write(w.join("run.yaml"), native).unwrap();
    let (_, log, report) = save_then_restore(w);
    assert!(
        log.contains("bob was saved on sqlite and migrates to sqlite-native"),
        "{log}"
    );
    let migrations = report["snapshot"]["migrations"]
        .as_array()
        .expect("migrations[]");
    let nodes: Vec<&str> = migrations
        .iter()
        .filter_map(|m| m["node"].as_str())
        .collect();
    assert_eq!(nodes, ["alice", "bob"], "{migrations:#?}");
    for m in migrations {
        assert_eq!(
            (m["from"].as_str(), m["to"].as_str()),
            (Some("sqlite"), Some("sqlite-native"))
        );
        assert!(m["ready_s"].as_f64().unwrap() > 0.0, "{m:#}");
    }
    assert_eq!(report["results"]["ok"].as_u64(), Some(20));
    // LND's log, as the report holds it: bob moved the history's keysend invoices,
    // alice its payments (the history's and the route probes').
    let logged = |node: &str, name: &str| -> Value {
        let m = migrations.iter().find(|m| m["node"] == node).unwrap();
        (m["logged"].as_array().expect("logged[]").iter())
            .find(|l| l["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {m:#}"))
            .clone()
    };
    let summary = std::fs::read_to_string(w.join("report/summary.md")).expect("summary.md");
    assert!(
        summary.contains("bob migrated sqlite to sqlite-native, ready "),
        "{summary}"
    );
    let invoices = logged("bob", "kv_invoice_migration");
    assert!(invoices["items"].as_u64().unwrap() >= 100, "{invoices:#}");
    let payments = logged("alice", "kv_payments_migration");
    assert!(payments["items"].as_u64().unwrap() >= 100, "{payments:#}");
    assert!(payments["seconds"].as_f64().unwrap() > 0.0, "{payments:#}");
}
