//! The store, import and check on report directories made here from a real report.

use super::check::{self, By, Metric};
use super::record::commit_in;
use super::store::{Inserted, SCHEMA_VERSION, Store};
use super::*;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::Duration;

const FIXTURE: &str = include_str!("../../tests/fixtures/reports/real-lnd-a/report.json");

/// A report.json like a real one, with these figures and start.
fn report(started_at: &str, tps: f64, p99_us: u64, envelope_cpus: Option<f64>) -> Value {
    let mut r: Value = serde_json::from_str(FIXTURE).unwrap();
    r["started_at"] = json!(started_at);
    r["results"]["tps_avg"] = json!(tps);
    r["results"]["latency"]["p50_us"] = json!(p99_us / 2);
    r["results"]["latency"]["p99_us"] = json!(p99_us);
    for n in r["nodes"].as_array_mut().unwrap() {
        let mut res = json!({ "cpu_pct_avg": 50.0, "bytes_per_payment": 1500.0 });
        if let Some(cpus) = envelope_cpus {
            res["envelope"] =
                json!({ "name": "nodes", "cpus": cpus, "memory_bytes": null, "cpuset": null });
        }
        n["resources"] = res;
    }
    r
}

fn write(dir: &Path, name: &str, v: &Value) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(name), serde_json::to_string_pretty(v).unwrap()).unwrap();
}

/// A repeated run (a sweep directory of `repeat=K` points) with these TPS, p99 ten
/// times the TPS's inverse.
fn repeated(dir: &Path, started_at: &str, tps: &[f64], cpus: Option<f64>) -> PathBuf {
    let base = report(started_at, 1.0, 1, cpus);
    let mut points = Vec::new();
    for (k, t) in tps.iter().enumerate() {
        let label = format!("repeat={}", k + 1);
        let r = report(started_at, *t, (1e7 / t) as u64, cpus);
        write(&dir.join(&label), "report.json", &r);
        points.push(json!({ "label": label, "status": "done" }));
    }
    let sweep = json!({
        "schema_version": 2, "complete": true, "started_at": started_at,
        "finished_at": started_at, "scenario": base["scenario"], "runtime": "local",
        "host": base["host"], "tool": base["tool"], "points": points,
    });
    write(dir, "sweep.json", &sweep);
    dir.to_path_buf()
}

fn store_in(dir: &Path) -> Store {
    Store::open(&dir.join("h.sqlite")).unwrap()
}

#[test]
fn the_store_is_the_flag_else_the_variable_else_the_cache() {
    fn get(e: &HashMap<&'static str, &'static str>) -> impl Fn(&str) -> Option<OsString> + use<> {
        let e = e.clone();
        move |k: &str| e.get(k).map(OsString::from)
    }
    let env: HashMap<&str, &str> = [("LNBENCH_CACHE", "/c")].into();
    let flag = Path::new("/f.sqlite");
    assert_eq!(store_path_from(Some(flag), &get(&env)), Some(flag.into()));
    assert_eq!(
        store_path_from(None, &get(&env)),
        Some(PathBuf::from("/c/history.sqlite"))
    );
    let off: HashMap<&str, &str> = [("LNBENCH_CACHE", "/c"), (STORE_ENV, "off")].into();
    assert_eq!(store_path_from(None, &get(&off)), None);
    let named: HashMap<&str, &str> = [(STORE_ENV, "/h.sqlite")].into();
    assert_eq!(
        store_path_from(None, &get(&named)),
        Some(PathBuf::from("/h.sqlite"))
    );
}

#[test]
fn a_debug_build_records_only_where_told() {
    let none = |_: &str| None;
    let cache = |k: &str| (k == "LNBENCH_CACHE").then(|| OsString::from("/c"));
    let named = |k: &str| (k == STORE_ENV).then(|| OsString::from("/h.sqlite"));
    let flag = Some(Path::new("/f.sqlite"));
    // A release build records into the cache by default; a debug build does not.
    assert_eq!(
        recording_store_from(None, false, &cache, false),
        Some(PathBuf::from("/c/history.sqlite"))
    );
    assert_eq!(recording_store_from(None, false, &cache, true), None);
    assert_eq!(recording_store_from(None, false, &none, true), None);
    assert_eq!(
        recording_store_from(None, false, &named, true),
        Some(PathBuf::from("/h.sqlite"))
    );
    assert_eq!(
        recording_store_from(flag, false, &cache, true),
        Some(PathBuf::from("/f.sqlite"))
    );
    assert_eq!(recording_store_from(flag, true, &cache, false), None);
}

#[test]
fn commits_are_read_from_versions() {
    assert_eq!(
        commit_in("0.21.1-beta commit=v0.21.1-beta").as_deref(),
        Some("v0.21.1-beta")
    );
    assert_eq!(commit_in("v24.08-12-gabc1234").as_deref(), Some("abc1234"));
    assert_eq!(commit_in("0.18.5-beta"), None);
}

#[test]
fn a_run_and_a_repeated_run_round_trip_through_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let single = dir.path().join("single");
    write(
        &single,
        "report.json",
        &report("2026-11-20T10:00:00Z", 33.0, 500_000, Some(0.7)),
    );
    let run = import::read_dir(&single).unwrap();
    assert_eq!(run.scenario, "alice-pays-bob");
    assert_eq!(run.scenario_hash.len(), 64);
    assert_eq!(run.points.len(), 1);
    let p = &run.points[0];
    assert_eq!((p.group.as_str(), p.repeat), ("", None));
    assert_eq!((p.tps, p.p99_us, p.cpu_pct), (33.0, 500_000, Some(100.0)));
    assert_eq!(
        p.bytes_per_payment,
        Some(3000.0),
        "two nodes' growth, summed"
    );
    assert_eq!(p.nodes[0].bytes_per_payment, Some(1500.0));
    assert!(p.envelope.contains("alice cpus=0.7"), "{}", p.envelope);
    assert_eq!(p.nodes[0].commit.as_deref(), Some("v0.21.1-beta"));

    let sweep = repeated(
        &dir.path().join("sweep"),
        "2026-11-21T10:00:00Z",
        &[30.0, 31.0, 32.0],
        None,
    );
    let rep = import::read_dir(&sweep).unwrap();
    let groups: Vec<(&str, Option<u32>)> = (rep.points.iter())
        .map(|p| (p.group.as_str(), p.repeat))
        .collect();
    assert_eq!(groups, [("", Some(1)), ("", Some(2)), ("", Some(3))]);
    assert_eq!(rep.points[0].envelope, "none");

    let mut store = store_in(dir.path());
    assert_eq!(store.insert(&run).unwrap(), Inserted::New(1));
    assert_eq!(store.insert(&rep).unwrap(), Inserted::New(2));
    assert_eq!(store.insert(&run).unwrap(), Inserted::Already(1));
    let stored = store.runs().unwrap();
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[0].run, run);
    assert_eq!(stored[1].run, rep);
}

#[test]
fn a_load_after_a_history_is_kept_with_it_and_not_compared_with_a_fresh_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_in(dir.path());
    let mut after = report("2026-11-20T11:00:00Z", 30.0, 1000, None);
    after["history"] = json!({ "target": 10000, "before": 120, "paid": 9880, "failed": 2,
        "seconds": 70.0, "tps": 141.1, "concurrency": 10 });
    after["snapshot"] = json!({ "payments": 120 });
    let mut restored = report("2026-11-20T12:00:00Z", 30.0, 1000, None);
    restored["snapshot"] = json!({ "payments": 120 });
    let mut made = Vec::new();
    for (name, at, r) in [
        (
            "fresh",
            "2026-11-20T10:00:00Z",
            report("2026-11-20T10:00:00Z", 60.0, 1000, None),
        ),
        ("after", "", after),
        ("restored", "", restored),
        (
            "fresh2",
            "2026-11-20T13:00:00Z",
            report("2026-11-20T13:00:00Z", 61.0, 1000, None),
        ),
    ] {
        let _ = at;
        write(&dir.path().join(name), "report.json", &r);
        let run = import::read_dir(&dir.path().join(name)).unwrap();
        made.push(run.points[0].made_before);
        store.insert(&run).unwrap();
    }
    assert_eq!(made, [None, Some(10000), Some(120), None]);
    let runs = store.runs().unwrap();
    let loads: Vec<&str> = runs.iter().map(|r| r.run.points[0].load.as_str()).collect();
    assert!(loads[1].ends_with(" made_before=10000"), "{}", loads[1]);
    assert_eq!(loads[0], loads[3]);
    assert_ne!(loads[0], loads[2]);
    assert_eq!(runs[1].run.points[0].made_before, Some(10000), "stored");
    // The fresh run's baseline is the fresh one before it, not the runs with history.
    let c = check::check(&runs, None, &opts(10, &[Metric::Tps], 0.0)).unwrap();
    assert_eq!(
        (c.latest, c.points[0].baseline_runs.as_slice()),
        (4, &[1][..])
    );
}

#[test]
fn check_calls_a_slower_run_a_regression_and_a_repeat_noise() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_in(dir.path());
    let d = dir.path();
    for (name, at, tps) in [
        ("a", "2026-11-20T10:00:00Z", [60.0, 62.0, 61.0, 63.0, 59.0]),
        ("b", "2026-11-20T11:00:00Z", [61.0, 60.5, 62.5, 59.5, 63.5]),
    ] {
        let run = import::read_dir(&repeated(&d.join(name), at, &tps, None)).unwrap();
        store.insert(&run).unwrap();
    }
    let opts = opts(10, &[Metric::Tps, Metric::P99], 5.0);
    let runs = store.runs().unwrap();
    let noise = check::check(&runs, None, &opts).unwrap();
    assert_eq!(noise.latest, 2);
    assert_eq!(noise.points[0].baseline_runs, [1]);
    assert!(!noise.regression(), "{noise:#?}");

    let slow = repeated(
        &d.join("c"),
        "2026-11-20T12:00:00Z",
        &[40.0, 41.0, 39.5, 42.0, 40.5],
        None,
    );
    store.insert(&import::read_dir(&slow).unwrap()).unwrap();
    let runs = store.runs().unwrap();
    let slower = check::check(&runs, Some("alice-pays-bob"), &opts).unwrap();
    assert_eq!(slower.latest, 3);
    assert_eq!(slower.points[0].baseline_runs, [1, 2]);
    assert!(slower.regression(), "{slower:#?}");
    let tps = &slower.points[0].verdicts[0];
    assert_eq!((tps.baseline.len(), tps.latest.len()), (10, 5));
    assert!(tps.regression() && tps.significance.unwrap().change_pct < 0.0);
    // --last 1: the baseline is the latest comparable run only.
    let last = check::check(&runs, None, &check::CheckOptions { last: 1, ..opts }).unwrap();
    assert_eq!(last.points[0].baseline_runs, [2]);
}

fn opts(last: usize, metrics: &[Metric], min_change_pct: f64) -> check::CheckOptions {
    check::CheckOptions {
        last,
        metrics: metrics.to_vec(),
        min_change_pct,
    }
}

/// Runs of the scenario with these TPS figures (one run per list, one repeat per
/// figure), an hour apart, in a fresh store.
fn runs_of(d: &std::path::Path, tps: &[&[f64]]) -> Vec<crate::history::store::StoredRun> {
    let mut store = store_in(d);
    for (i, figures) in tps.iter().enumerate() {
        let at = format!("2026-11-20T1{i}:00:00Z");
        let run = repeated(&d.join(format!("r{i}")), &at, figures, None);
        store.insert(&import::read_dir(&run).unwrap()).unwrap();
    }
    store.runs().unwrap()
}

const A: [f64; 5] = [60.0, 61.0, 62.0, 63.0, 59.0];
/// 15.6 % below A, each figure below all of A's.
const C: [f64; 5] = [51.0, 51.5, 52.0, 51.2, 51.8];

#[test]
fn a_significant_change_smaller_than_min_change_is_not_a_regression() {
    let dir = tempfile::tempdir().unwrap();
    let runs = runs_of(dir.path(), &[&A, &C]);
    let tps = |min| check::check(&runs, None, &opts(10, &[Metric::Tps], min)).unwrap();
    // C is 15.6 % below A: worse beyond noise, a regression under a 10 % floor...
    let strict = tps(10.0);
    let v = &strict.points[0].verdicts[0];
    assert!(v.worse() && v.regression(), "{v:#?}");
    assert_eq!(
        v.spread_pct, None,
        "one earlier run has no run-to-run spread"
    );
    assert_eq!(v.floor_pct, 10.0);
    // ...and not one under a 20 % floor, though still significantly worse.
    let lenient = tps(20.0);
    let v = &lenient.points[0].verdicts[0];
    assert!(v.worse() && !v.regression(), "{v:#?}");
    assert!(!lenient.regression());
}

#[test]
fn the_earlier_runs_own_spread_raises_the_floor() {
    let high = [70.0, 71.0, 72.0, 73.0, 69.0];
    let mid = [56.0, 57.0, 58.0, 57.5, 56.5];
    let low = [44.0, 45.0, 46.0, 45.5, 44.5];
    // Below every earlier figure (so significantly worse), 23.7 % below their median.
    let latest = [43.0, 43.5, 43.8, 43.2, 43.6];
    let dir = tempfile::tempdir().unwrap();
    let runs = runs_of(dir.path(), &[&high, &mid, &low, &latest]);
    let report = check::check(&runs, None, &opts(10, &[Metric::Tps], 0.0)).unwrap();
    assert_eq!(report.points[0].baseline_runs, [1, 2, 3]);
    let v = &report.points[0].verdicts[0];
    // The 15 earlier figures' median is 57; the first run's median 71 strays 24.6 %.
    let spread = v.spread_pct.expect("three earlier runs");
    assert!((spread - 14.0 / 57.0 * 100.0).abs() < 1e-9, "{spread}");
    assert_eq!(v.floor_pct, spread);
    assert!(v.worse(), "{v:#?}");
    assert!(!v.regression(), "within the earlier runs' swing: {v:#?}");
    assert!(!report.regression());
    // A floor asked for above the spread wins.
    let report = check::check(&runs, None, &opts(10, &[Metric::Tps], 30.0)).unwrap();
    assert_eq!(report.points[0].verdicts[0].floor_pct, 30.0);
    // Beyond the swing: a regression.
    let slower: Vec<f64> = latest.iter().map(|t| t - 6.0).collect();
    let dir = tempfile::tempdir().unwrap();
    let runs = runs_of(dir.path(), &[&high, &mid, &low, &slower]);
    let report = check::check(&runs, None, &opts(10, &[Metric::Tps], 0.0)).unwrap();
    assert!(report.regression(), "{report:#?}");
}

#[test]
fn runs_under_another_envelope_are_not_compared() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_in(dir.path());
    let d = dir.path();
    let free = repeated(&d.join("a"), "2026-11-20T10:00:00Z", &[60.0; 4], None);
    let held = repeated(&d.join("b"), "2026-11-20T11:00:00Z", &[20.0; 4], Some(0.2));
    store.insert(&import::read_dir(&free).unwrap()).unwrap();
    store.insert(&import::read_dir(&held).unwrap()).unwrap();
    let runs = store.runs().unwrap();
    let report = check::check(&runs, None, &opts(10, &[Metric::Tps], 5.0)).unwrap();
    assert!(report.points[0].baseline_runs.is_empty(), "{report:#?}");
    assert!(!report.regression());
}

#[test]
fn trend_groups_by_version_or_commit() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_in(dir.path());
    for (name, at, tps, version) in [
        (
            "a",
            "2026-11-20T10:00:00Z",
            80.0,
            "0.18.5-beta commit=v0.18.5-beta",
        ),
        (
            "b",
            "2026-11-20T11:00:00Z",
            90.0,
            "0.18.5-beta commit=v0.18.5-beta",
        ),
        (
            "c",
            "2026-11-20T12:00:00Z",
            40.0,
            "0.19.0-beta commit=v0.19.0-beta",
        ),
    ] {
        let mut r = report(at, tps, 1000, None);
        for n in r["nodes"].as_array_mut().unwrap() {
            n["version"] = json!(version);
        }
        write(&dir.path().join(name), "report.json", &r);
        store
            .insert(&import::read_dir(&dir.path().join(name)).unwrap())
            .unwrap();
    }
    let runs = store.runs().unwrap();
    let t = check::trend(&runs, None, Metric::Tps, By::Commit);
    assert_eq!(t.len(), 1);
    let rows: Vec<(&str, f64, usize)> = (t[0].rows.iter())
        .map(|r| (r.label.as_str(), r.median, r.n))
        .collect();
    assert_eq!(
        rows,
        [("lnd v0.18.5-beta", 85.0, 2), ("lnd v0.19.0-beta", 40.0, 1)]
    );
    assert_eq!(t[0].rows[0].runs, [1, 2]);
    let v = check::trend(&runs, Some("other"), Metric::Tps, By::Version);
    assert!(v.is_empty());
}

fn is_bad_store(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<BadStore>().is_some())
}

#[test]
fn a_store_of_a_newer_schema_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    drop(Store::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "INSERT INTO schema_version (version) VALUES (?1)",
        [SCHEMA_VERSION + 1],
    )
    .unwrap();
    drop(conn);
    let before = std::fs::read(&path).unwrap();
    let e = Store::open(&path).err().unwrap();
    assert!(is_bad_store(&e), "{e:#}");
    assert!(format!("{e:#}").contains("newer lnbench-tui"), "{e:#}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

/// A version no migration starts from (a negative one, written by hand or by another
/// tool) is refused with the store named, not a panic.
#[test]
fn a_store_of_an_unknown_schema_version_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE schema_version (version INTEGER NOT NULL);
         INSERT INTO schema_version (version) VALUES (-3);",
    )
    .unwrap();
    drop(conn);
    let before = std::fs::read(&path).unwrap();
    let e = Store::open(&path).err().unwrap();
    assert!(is_bad_store(&e), "{e:#}");
    assert!(format!("{e:#}").contains("schema version -3"), "{e:#}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn a_corrupted_file_a_foreign_database_and_a_directory_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.sqlite");
    let text = "this is not a database, it is a note ".repeat(200);
    std::fs::write(&junk, &text).unwrap();
    let e = Store::open(&junk).err().unwrap();
    assert!(is_bad_store(&e), "{e:#}");
    assert!(format!("{e:#}").contains("not a results store"), "{e:#}");
    assert_eq!(std::fs::read_to_string(&junk).unwrap(), text);

    let foreign = dir.path().join("other.sqlite");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    let e = Store::open(&foreign).err().unwrap();
    assert!(format!("{e:#}").contains("no schema_version"), "{e:#}");

    let e = Store::open(dir.path()).err().unwrap();
    assert!(is_bad_store(&e), "{e:#}");
    assert!(format!("{e:#}").contains("a directory"), "{e:#}");
    let e = Store::open_existing(&dir.path().join("none.sqlite"))
        .err()
        .unwrap();
    assert!(is_bad_store(&e), "{e:#}");
    assert!(!dir.path().join("none.sqlite").exists());
}

#[test]
fn a_locked_store_is_waited_for_then_said_locked_and_left_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    drop(Store::open(&path).unwrap());
    let holder = rusqlite::Connection::open(&path).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let e = Store::open_with(&path, true, Duration::from_millis(50))
        .err()
        .unwrap();
    assert!(!is_bad_store(&e), "a lock is the environment's: {e:#}");
    assert!(
        format!("{e:#}").contains("locked by another process"),
        "{e:#}"
    );
    holder.execute_batch("ROLLBACK").unwrap();
    assert!(store_in(dir.path()).runs().unwrap().is_empty());
}

#[test]
fn a_run_that_fails_half_way_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = repeated(
        &dir.path().join("s"),
        "2026-11-20T10:00:00Z",
        &[1.0, 2.0],
        None,
    );
    let run = import::read_dir(&sweep).unwrap();
    let mut store = store_in(dir.path());
    // The second point's nodes fail to insert: the run and its first point go too.
    rusqlite::Connection::open(dir.path().join("h.sqlite"))
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER fail AFTER INSERT ON nodes WHEN \
             (SELECT count(*) FROM points) > 1 BEGIN SELECT RAISE(ABORT, 'planted'); END",
        )
        .unwrap();
    let e = store.insert(&run).err().unwrap();
    assert!(format!("{e:#}").contains("planted"), "{e:#}");
    assert!(store.runs().unwrap().is_empty());
}

#[test]
fn a_directory_without_a_report_is_not_recordable() {
    let dir = tempfile::tempdir().unwrap();
    let e = import::read_dir(dir.path()).err().unwrap();
    assert!(
        e.to_string().contains("neither report.json nor sweep.json"),
        "{e}"
    );
    std::fs::write(
        dir.path().join("report.json"),
        "{\n  \"schema_version\": 1,\n  oops",
    )
    .unwrap();
    let e = import::read_dir(dir.path()).err().unwrap();
    assert!(e.to_string().contains("line 3 column"), "{e}");
}

/// A store left at schema version 1 by an earlier lnbench-tui, with one run in it.
fn v1_store(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(include_str!("schema_v1.sql")).unwrap();
    conn.execute_batch(
        "INSERT INTO schema_version (version) VALUES (1);
         INSERT INTO runs VALUES (1, '2026-11-20T10:00:01Z', '2026-11-20T10:00:00Z',
           '2026-11-20T10:01:00Z', 'old', 'abc', 'local', 'v0', 1, '/r', 'cpu', 2, 1, 'os',
           'k', 'cpu, 2 cores, 0 GiB');
         INSERT INTO points VALUES (1, 1, '', '', NULL, '/r/report.json', 1, 'l', 'none',
           NULL, NULL, NULL, 10, 0, 5.0, 1, 2, 3, 40.0);
         INSERT INTO nodes VALUES (1, 'alice', 'lnd', '0.18.5-beta', NULL, 'bbolt', 40.0);",
    )
    .unwrap();
}

#[test]
fn a_version_1_store_is_upgraded_to_keep_bytes_per_payment() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    v1_store(&path);
    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.version().unwrap(), SCHEMA_VERSION);
    assert_eq!(SCHEMA_VERSION, 3);
    let old = store.runs().unwrap();
    assert_eq!(old.len(), 1);
    let p = &old[0].run.points[0];
    assert_eq!(
        (p.tps, p.cpu_pct, p.bytes_per_payment),
        (5.0, Some(40.0), None)
    );
    assert_eq!(p.nodes[0].bytes_per_payment, None);

    write(
        &dir.path().join("new"),
        "report.json",
        &report("2026-11-21T10:00:00Z", 30.0, 1000, None),
    );
    let run = import::read_dir(&dir.path().join("new")).unwrap();
    assert_eq!(store.insert(&run).unwrap(), Inserted::New(2));
    drop(store);
    let mut again = Store::open_existing(&path).unwrap();
    let runs = again.runs().unwrap();
    assert_eq!(runs[1].run, run);
    assert_eq!(runs[1].run.points[0].bytes_per_payment, Some(3000.0));
    let versions: Vec<i64> = rusqlite::Connection::open(&path)
        .unwrap()
        .prepare("SELECT version FROM schema_version ORDER BY version")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(versions, [1, 2, 3], "each migration once");
    assert_eq!(runs[0].run.points[0].made_before, None, "older rows: NULL");
}

#[test]
fn trend_and_the_site_show_bytes_per_payment() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_in(dir.path());
    for (name, at) in [("a", "2026-11-20T10:00:00Z"), ("b", "2026-11-20T11:00:00Z")] {
        write(
            &dir.path().join(name),
            "report.json",
            &report(at, 30.0, 1000, None),
        );
        store
            .insert(&import::read_dir(&dir.path().join(name)).unwrap())
            .unwrap();
    }
    let runs = store.runs().unwrap();
    let t = check::trend(&runs, None, Metric::BytesPerPayment, By::Version);
    assert_eq!((t[0].rows[0].median, t[0].rows[0].n), (3000.0, 2));
    assert_eq!(
        Metric::parse("bytes-per-payment"),
        Some(Metric::BytesPerPayment)
    );
    assert_eq!(Metric::BytesPerPayment.text(3000.0), "2.9 KiB");
    let pages = site::write(&runs, &dir.path().join("site")).unwrap();
    let html = std::fs::read_to_string(&pages[1]).unwrap();
    for m in ["tps", "p50", "p99", "cpu", "bytes-per-payment"] {
        assert!(html.contains(&format!("<h3>{m}</h3>")), "{m} chart missing");
    }
    assert!(
        html.contains("2.9 KiB"),
        "the chart's top is labelled in bytes"
    );
}
