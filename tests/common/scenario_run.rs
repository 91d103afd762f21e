//! One headless run of a scenario text through the binary, in a temp dir of its own
//! (scenario file, report dir, run dir), as the end-to-end tests of each implementation
//! on Bitcoin Core drive it; and the checks they share.

use super::running::Running;
use super::{assert_matches_schema, lnbench_command, processes_mentioning};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

pub struct ScenarioRun {
    pub running: Running,
    work: tempfile::TempDir,
}

impl ScenarioRun {
    /// Starts `lnbench-tui <text> --payments N --report <dir> --run-dir <dir>`.
    pub fn start(text: &str, payments: u64) -> ScenarioRun {
        let work = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(work.path().join("runs")).unwrap();
        let scenario = work.path().join("scenario.yaml");
        std::fs::write(&scenario, text).unwrap();
        let mut cmd = lnbench_command();
        cmd.arg(&scenario)
            .args(["--payments", &payments.to_string(), "--report"])
            .arg(work.path().join("report"))
            .arg("--run-dir")
            .arg(work.path().join("runs"));
        ScenarioRun {
            running: Running::spawn(cmd),
            work,
        }
    }

    pub fn run_dir(&self) -> PathBuf {
        self.work.path().join("runs")
    }

    pub fn report(&self) -> serde_json::Value {
        let path = self.work.path().join("report").join("report.json");
        let text = std::fs::read_to_string(&path).expect("report.json");
        serde_json::from_str(&text).expect("report.json is JSON")
    }

    /// Every report file's text, one after the other.
    pub fn report_text(&self) -> String {
        let mut all = String::new();
        for entry in std::fs::read_dir(self.work.path().join("report")).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                all.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
            }
        }
        all
    }

    /// Waits for a successful exit and returns the report, checked against the schema,
    /// for `payments` successes, no failure and a bitcoind chain, and the log.
    pub fn succeeded(&mut self, payments: u64) -> (serde_json::Value, String) {
        let (status, log) = self.running.wait_exit(Duration::from_secs(900));
        assert_eq!(status.code(), Some(0), "exit status {status:?}\n{log}");
        let report = self.report();
        assert_matches_schema(&report);
        super::assert_reconciled(&report);
        assert_eq!(report["complete"], true);
        assert_eq!(report["results"]["ok"], payments, "{:#}", report["results"]);
        assert_eq!(report["results"]["failed"], 0, "{:#}", report["results"]);
        assert_eq!(report["chain"]["implementation"], "bitcoind");
        eprintln!(
            "{}: {} payments, {:.1} TPS, p50 {} us, p99 {} us",
            report["scenario"]["name"],
            report["results"]["ok"],
            report["results"]["tps_avg"].as_f64().unwrap_or_default(),
            report["results"]["latency"]["p50_us"],
            report["results"]["latency"]["p99_us"],
        );
        (report, log)
    }
}

/// No process of the run is alive, and its run directory is gone.
pub fn assert_nothing_left(run_dir: &Path, log: &str) {
    let left = processes_mentioning(run_dir);
    assert!(
        left.is_empty(),
        "processes of the run still alive: {left:?}\n{log}"
    );
    let entries = std::fs::read_dir(run_dir).map_or(0, |d| d.count());
    assert_eq!(entries, 0, "the run directory is removed after the run");
}

/// The report's node of that name.
pub fn node<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == name)
        .unwrap_or_else(|| panic!("node {name} in {:#}", report["nodes"]))
}

/// A scenario text run to its end through the binary, with the counts it gives (no
/// `--payments`), in a temp dir of its own; nothing of the run may be left running.
pub struct Finished {
    pub work: tempfile::TempDir,
    pub status: std::process::ExitStatus,
    /// The tool's stderr: progress lines and errors.
    pub log: String,
}

impl Finished {
    pub fn run(text: &str) -> Finished {
        Finished::run_with(text, |_| {})
    }

    /// [`Finished::run`] with what `setup` adds to the command (an argument, the
    /// environment).
    pub fn run_with(text: &str, setup: impl FnOnce(&mut Command)) -> Finished {
        let run = Finished::launch(text, setup);
        assert_nothing_left(&run.work.path().join("runs"), &run.log);
        run
    }

    /// Runs `text` as [`Finished::run`] does, keeping the run directory (`--keep`) for
    /// its logs; no process of the run may be left.
    pub fn run_kept(text: &str) -> Finished {
        let run = Finished::launch(text, |cmd| {
            cmd.arg("--keep");
        });
        let left = processes_mentioning(&run.work.path().join("runs"));
        assert!(
            left.is_empty(),
            "processes of the run still alive: {left:?}\n{}",
            run.log
        );
        run
    }

    fn launch(text: &str, setup: impl FnOnce(&mut Command)) -> Finished {
        let work = tempfile::tempdir().expect("temp dir");
        let (scenario, runs) = (work.path().join("scenario.yaml"), work.path().join("runs"));
        std::fs::write(&scenario, text).unwrap();
        std::fs::create_dir_all(&runs).unwrap();
        let mut cmd = lnbench_command();
        cmd.arg(&scenario);
        setup(&mut cmd);
        let out = cmd
            .arg("--report")
            .arg(work.path().join("report"))
            .arg("--run-dir")
            .arg(&runs)
            .output()
            .expect("run lnbench-tui");
        let log = String::from_utf8_lossy(&out.stderr).into_owned();
        Finished {
            work,
            status: out.status,
            log,
        }
    }

    /// The report of a successful run (exit 0), checked against the schema, on the
    /// runtime it names first (`local`, `docker`, `kubernetes`).
    pub fn report_on(&self, runtime: &str) -> serde_json::Value {
        assert_eq!(self.status.code(), Some(0), "{}", self.log);
        let report = self.report_json();
        assert!(
            report["runtime"]
                .as_str()
                .is_some_and(|r| r.starts_with(runtime)),
            "not on {runtime}: {}",
            report["runtime"]
        );
        report
    }

    pub fn report_dir(&self) -> PathBuf {
        self.work.path().join("report")
    }

    /// report.json, checked against docs/report.schema.json.
    pub fn report_json(&self) -> serde_json::Value {
        let path = self.report_dir().join("report.json");
        let text = std::fs::read_to_string(&path).expect("report.json");
        let report: serde_json::Value = serde_json::from_str(&text).expect("report.json is JSON");
        assert_matches_schema(&report);
        report
    }

    /// sweep.json, checked against docs/sweep.schema.json.
    pub fn sweep_json(&self) -> serde_json::Value {
        let text =
            std::fs::read_to_string(self.report_dir().join("sweep.json")).expect("sweep.json");
        let sweep: serde_json::Value = serde_json::from_str(&text).expect("sweep.json is JSON");
        super::assert_matches_schema_file(&sweep, "docs/sweep.schema.json");
        sweep
    }
}

/// The head of a scenario in which alice pays bob by keysend over `count` channels
/// of `capacity_sat` each, both LND on a btcd chain: `name:`, the `top` lines as
/// given (runtime, pull, description), the chain, nodes and channels, and
/// `workload:` up to its receiver. The test adds the load, the stop and the rest.
pub fn lnd_pair(name: &str, top: &str, capacity_sat: u64, count: u32) -> String {
    lnd_pair_on("btcd", name, top, capacity_sat, count)
}

/// [`lnd_pair`] on the `chain` named.
pub fn lnd_pair_on(chain: &str, name: &str, top: &str, capacity_sat: u64, count: u32) -> String {
    lnd_channels(chain, name, top, capacity_sat, count)
        + "workload:
  kind: keysend
  senders: [alice]
  receiver: bob
"
}

/// [`lnd_pair_on`] up to its channels: the test writes the workload.
pub fn lnd_channels(chain: &str, name: &str, top: &str, capacity_sat: u64, count: u32) -> String {
    format!(
        "name: {name}
{top}chain:
  implementation: {chain}
nodes:
  alice:
    implementation: lnd
  bob:
    implementation: lnd
channels:
  - from: alice
    to: bob
    capacity_sat: {capacity_sat}
    count: {count}
"
    )
}

/// The report's fault record with this label (`kill bob`, `latency alice–bob`).
pub fn fault<'a>(report: &'a serde_json::Value, label: &str) -> &'a serde_json::Value {
    (report["faults"].as_array().expect("faults[]").iter())
        .find(|f| f["label"] == label)
        .unwrap_or_else(|| panic!("fault {label} in {:#}", report["faults"]))
}

/// The fault record `label` of a node killed and started again (`kill bob`), printed
/// with `what` and checked: no error, the node's RPC back, then its channels.
pub fn killed_node_back<'a>(
    report: &'a serde_json::Value,
    label: &str,
    what: &str,
) -> &'a serde_json::Value {
    let k = fault(report, label);
    eprintln!("{what}: {k:#}");
    assert!(k["error"].is_null(), "{k:#}");
    let back = &k["node_back"];
    let rpc = back["rpc_s"].as_f64().expect("rpc_s");
    let channels = back["channels_s"].as_f64().expect("channels_s");
    assert!(rpc > 0.0 && channels >= rpc, "{k:#}");
    k
}

/// `lnbench-tui ARGS` run in `work` (whose `runs/` is its run directory); nothing of
/// the run may be left running.
pub fn lnbench_in(work: &Path, args: &[&str]) -> std::process::Output {
    let out = lnbench_command()
        .current_dir(work)
        .args(args)
        .output()
        .expect("run lnbench-tui");
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_nothing_left(&work.join("runs"), &log);
    out
}
