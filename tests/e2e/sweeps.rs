//! End to end through the real binary, on real LND nodes and a real btcd chain: the
//! shipped sweep scenarios with small counts (`--payments`), their combined report
//! against docs/sweep.schema.json, each point's report.json against its schema, and
//! nothing left running. The tests take turns: each brings up its own nodes, and the
//! machine is small.

use crate::common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

struct Sweep {
    work: tempfile::TempDir,
    run_dir: PathBuf,
    report_dir: PathBuf,
}

impl Sweep {
    /// A copy of `scenarios/<file>` with `from` replaced by `to` (smaller sweeps).
    fn new(file: &str, from: &str, to: &str) -> (Sweep, PathBuf) {
        require_node_binaries();
        let work = tempfile::tempdir().expect("temp dir");
        let run_dir = work.path().join("runs");
        std::fs::create_dir_all(&run_dir).unwrap();
        let text = std::fs::read_to_string(repo_file(&format!("scenarios/{file}"))).unwrap();
        assert!(text.contains(from), "{file} has no {from:?}");
        let scenario = work.path().join(file);
        std::fs::write(&scenario, text.replace(from, to)).unwrap();
        let report_dir = work.path().join("report");
        (
            Sweep {
                work,
                run_dir,
                report_dir,
            },
            scenario,
        )
    }

    fn command(&self, scenario: &Path, payments: &str) -> Command {
        let mut cmd = lnbench_command();
        cmd.arg(scenario)
            .args(["--payments", payments, "--report"])
            .arg(&self.report_dir)
            .arg("--run-dir")
            .arg(&self.run_dir);
        cmd
    }

    fn run(&self, scenario: &Path, payments: &str) -> Output {
        self.command(scenario, payments)
            .output()
            .expect("run lnbench-tui")
    }

    fn sweep_json(&self) -> Value {
        let text = std::fs::read_to_string(self.report_dir.join("sweep.json")).expect("sweep.json");
        let v: Value = serde_json::from_str(&text).expect("sweep.json is JSON");
        assert_matches_schema_file(&v, "docs/sweep.schema.json");
        v
    }

    fn point_report(&self, label: &str) -> Value {
        let path = self.report_dir.join(label).join("report.json");
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_matches_schema(&v);
        v
    }

    fn assert_nothing_left(&self) {
        let left = processes_mentioning(&self.run_dir);
        assert!(
            left.is_empty(),
            "processes of the sweep still alive: {left:?}"
        );
        assert!(
            std::fs::read_dir(&self.run_dir).unwrap().next().is_none(),
            "run directories not removed"
        );
        let _ = &self.work;
    }
}

fn assert_exit(out: &Output, code: i32) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{stderr}",
        String::from_utf8_lossy(&out.stdout)
    );
    stderr
}

fn labels(sweep: &Value) -> Vec<&str> {
    sweep["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["label"].as_str().unwrap())
        .collect()
}

#[test]
fn alice_pays_bob_short_sweep_runs_both_loads_on_one_network() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (s, scenario) = Sweep::new(
        "alice-pays-bob.yaml",
        "concurrency: [1, 4, 7, 10]",
        "concurrency: [1, 4]",
    );
    let out = s.run(&scenario, "30");
    let stderr = assert_exit(&out, 0);
    assert_eq!(
        stderr.matches("==> chain up").count(),
        1,
        "one network:\n{stderr}"
    );
    assert!(stderr.contains("==> point 1/2: concurrency=1"), "{stderr}");
    assert!(stderr.contains("==> point 2/2: concurrency=4"), "{stderr}");

    let sweep = s.sweep_json();
    assert_eq!(sweep["complete"], true);
    assert_eq!(labels(&sweep), ["concurrency=1", "concurrency=4"]);
    assert_eq!(sweep["p99_bound_ms"], 500.0);
    for (point, concurrency) in sweep["points"].as_array().unwrap().iter().zip([1, 4]) {
        assert_eq!(point["status"], "done", "{point:#}");
        assert_eq!(point["network"], 0);
        assert_eq!(point["results"]["ok"], 30, "{point:#}");
        let report = s.point_report(point["label"].as_str().unwrap());
        assert_eq!(report["workload"]["concurrency"], concurrency);
        assert_eq!(report["results"]["ok"], 30);
    }
    // The slowest point lasts seconds, long enough for the runtime's CPU readings.
    let cpu: Vec<&str> = sweep["points"][0]["results"]["cpu_pct_avg"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["node"].as_str().unwrap())
        .collect();
    assert!(cpu.contains(&"alice"), "{:#}", sweep["points"][0]);
    // The best point under the bound is the fastest of those whose p99 is under it.
    let under: Vec<(&str, f64)> = sweep["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["results"]["latency"]["p99_us"].as_u64().unwrap() <= 500_000)
        .map(|p| {
            (
                p["label"].as_str().unwrap(),
                p["results"]["tps_avg"].as_f64().unwrap(),
            )
        })
        .collect();
    let fastest = under.iter().max_by(|a, b| a.1.total_cmp(&b.1)).map(|p| p.0);
    assert_eq!(
        sweep["best_under_bound"]["label"].as_str(),
        fastest,
        "{sweep:#}"
    );

    let html = std::fs::read_to_string(s.report_dir.join("sweep.html")).unwrap();
    assert_eq!(html.matches("<svg").count(), 2);
    assert!(html.contains("concurrency=4/report.html"));
    let md = std::fs::read_to_string(s.report_dir.join("sweep.md")).unwrap();
    // `done`, or `done (disturbed)` when other work shared the machine.
    assert!(
        md.lines()
            .any(|l| l.starts_with("| concurrency=4 | done") && l.contains("| keysend | 30 | 0 |")),
        "{md}"
    );
    s.assert_nothing_left();
}

#[test]
fn via_carols_routes_through_a_line_and_reports_the_latency_per_hop() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (s, scenario) = Sweep::new(
        "alice-pays-bob-via-carols.yaml",
        "replicas: { carol: [1, 4] }",
        "replicas: { carol: [1, 2] }",
    );
    let out = s.run(&scenario, "15");
    let stderr = assert_exit(&out, 0);
    assert_eq!(
        stderr.matches("==> chain up").count(),
        2,
        "a network per point:\n{stderr}"
    );

    let sweep = s.sweep_json();
    assert_eq!(labels(&sweep), ["carol.replicas=1", "carol.replicas=2"]);
    let networks: Vec<&Value> = sweep["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["network"])
        .collect();
    assert_eq!(networks, [0, 1]);
    let two = s.point_report("carol.replicas=2");
    assert_eq!(two["results"]["ok"], 15, "{:#}", two["results"]);
    assert_eq!(two["workload"]["kind"], "invoice");
    let roles: Vec<(&str, &str)> = two["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["name"].as_str().unwrap(), n["role"].as_str().unwrap()))
        .collect();
    assert_eq!(
        roles,
        [
            ("alice", "sender"),
            ("carol-1", "router"),
            ("carol-2", "router"),
            ("bob", "receiver")
        ]
    );
    let hops = sweep["per_hop"].as_array().unwrap();
    assert_eq!(hops.len(), 1, "{sweep:#}");
    assert_eq!(hops[0]["hops_added"], 1);
    assert_eq!(hops[0]["from"], "carol.replicas=1");
    let md = std::fs::read_to_string(s.report_dir.join("sweep.md")).unwrap();
    assert!(md.contains("Latency added per hop"), "{md}");
    s.assert_nothing_left();
}

#[test]
fn alices_two_senders_each_pay_over_their_own_channels() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (s, scenario) = Sweep::new(
        "alices-pay-bob.yaml",
        "replicas: { alice: [4, 7, 10] }",
        "replicas: { alice: [2] }",
    );
    let out = s.run(&scenario, "30");
    assert_exit(&out, 0);
    let sweep = s.sweep_json();
    assert_eq!(labels(&sweep), ["alice.replicas=2"]);
    let report = s.point_report("alice.replicas=2");
    assert_eq!(report["results"]["ok"], 30, "{:#}", report["results"]);
    assert_eq!(report["results"]["failed"], 0);
    let senders: Vec<&str> = report["workload"]["senders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(senders, ["alice-1", "alice-2"]);
    s.assert_nothing_left();
}

#[test]
fn payment_kinds_run_in_turn_on_one_network_and_say_what_was_timed() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (s, scenario) = Sweep::new("payment-kinds.yaml", "payments: 2000", "payments: 2000");
    let out = s.run(&scenario, "20");
    let stderr = assert_exit(&out, 0);
    assert_eq!(stderr.matches("==> chain up").count(), 1, "{stderr}");
    let sweep = s.sweep_json();
    let kinds = ["keysend", "invoice", "invoice-pregenerated"];
    for (point, kind) in sweep["points"].as_array().unwrap().iter().zip(kinds) {
        assert_eq!(point["kind"], kind);
        assert_eq!(point["status"], "done");
        assert_eq!(point["results"]["ok"], 20, "{point:#}");
        let report = s.point_report(&format!("kind={kind}"));
        assert_eq!(report["workload"]["kind"], kind);
    }
    let md = std::fs::read_to_string(s.report_dir.join("sweep.md")).unwrap();
    for timed in ["no invoice", "both are timed", "only paying them is timed"] {
        assert!(md.contains(timed), "{timed:?} missing:\n{md}");
    }
    s.assert_nothing_left();
}

#[test]
fn an_interrupted_sweep_writes_what_was_done_marked_partial() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (s, scenario) = Sweep::new(
        "alice-pays-bob.yaml",
        "concurrency: [1, 4, 7, 10]",
        "concurrency: [4, 1]",
    );
    let mut child = s
        .command(&scenario, "1000000")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start lnbench-tui");
    let stderr = child.stderr.take().unwrap();
    // Read stderr to the end on a thread, so the tool never writes into a closed pipe.
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut seen: Vec<String> = Vec::new();
    // A few progress lines into the first point, interrupt.
    while seen.iter().filter(|l| l.starts_with('[')).count() < 3 {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => seen.push(line),
            Err(_) => {
                let _ = child.kill();
                panic!("no progress:\n{}", seen.join("\n"));
            }
        }
    }
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{}", seen.join("\n"));

    let sweep = s.sweep_json();
    assert_eq!(sweep["complete"], false);
    assert_eq!(sweep["interrupted_by"], "SIGINT");
    let statuses: Vec<&Value> = sweep["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["status"])
        .collect();
    assert_eq!(statuses, ["partial", "not-run"]);
    assert!(sweep["points"][0]["results"]["ok"].as_u64().unwrap() > 0);
    assert_eq!(sweep["points"][1]["results"], Value::Null);
    assert_eq!(s.point_report("concurrency=4")["complete"], false);
    assert!(!s.report_dir.join("concurrency=1").exists());
    s.assert_nothing_left();
}

#[test]
fn lnd_db_backends_run_lnd_on_sqlite_and_on_a_postgres_the_runtime_starts() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (s, scenario) = Sweep::new(
        "lnd-db-backends.yaml",
        "db_backend: [bbolt, sqlite, postgres, etcd, etcd-cluster]",
        "db_backend: [sqlite, postgres]",
    );
    let out = s.run(&scenario, "10");
    let stderr = assert_exit(&out, 0);
    assert_eq!(stderr.matches("==> chain up").count(), 2, "{stderr}");
    let sweep = s.sweep_json();
    assert_eq!(labels(&sweep), ["db_backend=sqlite", "db_backend=postgres"]);
    for point in sweep["points"].as_array().unwrap() {
        assert_eq!(point["status"], "done", "{point:#}");
        assert_eq!(point["results"]["ok"], 10, "{point:#}");
    }
    let pg = s.point_report("db_backend=postgres");
    assert!(
        pg["scenario"]["text"]
            .as_str()
            .unwrap()
            .contains("postgres"),
        "the report keeps the scenario"
    );
    s.assert_nothing_left();
    let servers = processes_mentioning(Path::new("lnbench-pg-"));
    assert!(servers.is_empty(), "PostgreSQL still running: {servers:?}");
}

/// LND on SQLite and on PostgreSQL with its native SQL schema (`db_backend:
/// sqlite-native, postgres-native`: the sweep adds `--db.use-native-sql`): the payments
/// run and the report names the database.
#[test]
fn lnd_on_sqlite_and_postgres_with_native_sql_runs_payments() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (s, scenario) = Sweep::new(
        "lnd-db-backends.yaml",
        "db_backend: [bbolt, sqlite, postgres, etcd, etcd-cluster]",
        "db_backend: [sqlite-native, postgres-native]",
    );
    let out = s.run(&scenario, "10");
    assert_exit(&out, 0);
    let sweep = s.sweep_json();
    let backends = ["sqlite-native", "postgres-native"];
    assert_eq!(labels(&sweep), backends.map(|b| format!("db_backend={b}")));
    for (point, backend) in sweep["points"].as_array().unwrap().iter().zip(backends) {
        assert_eq!(point["status"], "done", "{point:#}");
        assert_eq!(point["results"]["ok"], 10, "{point:#}");
        let report = s.point_report(&format!("db_backend={backend}"));
        for node in report["nodes"].as_array().unwrap() {
            assert_eq!(node["database"], backend, "{node:#}");
        }
    }
    s.assert_nothing_left();
}
