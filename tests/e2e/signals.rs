//! End to end, "nothing lost": every way a run can be stopped by a signal, on the
//! local runtime, and those whose teardown differs on the Docker runtime
//! ([`Runtime::cases`]). alice-pays-bob (two LND nodes on btcd, a closed loop
//! of far more payments than can finish) runs with `--no-tui`, its stdout and stderr
//! on one pipe read by `tee`, in a process group of its own; once payments succeed:
//!
//! 1. Ctrl-C to the whole group: the tool and `tee` both get SIGINT, `tee` dies, and
//!    every line the tool writes after that meets a pipe nobody reads;
//! 2. SIGHUP to the tool; 3. SIGTERM to the tool;
//! 4. SIGINT, then a second SIGINT once the partial report is written (during
//!    teardown): the tool exits at once, and `lnbench-tui down` removes what is left;
//! 5. SIGINT, then a second SIGINT as soon as the tool says it is stopping: the same,
//!    but before the report is written; the tool writes what it recorded until then
//!    (a partial report that says so: no payments.csv, nothing reconciled with the
//!    nodes) and exits.
//!
//! Each run is checked for its exit status, a partial report.json that matches the
//! schema and names the (first) signal, payments that add up (ok + failed +
//! indeterminate = the rows of payments.csv, and the nodes' ledgers agree), no process
//! of the run left, no container, network or volume labelled with the run left, and
//! the run directory gone. The test prints a table of what it saw and then asserts
//! every cell. Docker rows are skipped (with a message) when no engine answers
//! outside CI.

use crate::common::docker::{block_on, engine, labelled};
use crate::common::*;
use bollard::Docker;
use bollard::query_parameters::ListVolumesOptionsBuilder;
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use std::collections::HashMap;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, PartialEq, Debug)]
enum Case {
    /// SIGINT to the process group: the tool and its `tee`.
    PipedCtrlC,
    Sighup,
    Sigterm,
    /// SIGINT, then a second SIGINT during teardown.
    SecondSigint,
    /// SIGINT, then a second SIGINT as soon as the tool says it is stopping.
    SecondSigintAtOnce,
}

impl Case {
    const ALL: [Case; 5] = [
        Case::PipedCtrlC,
        Case::Sighup,
        Case::Sigterm,
        Case::SecondSigint,
        Case::SecondSigintAtOnce,
    ];

    fn label(self) -> &'static str {
        match self {
            Case::PipedCtrlC => "Ctrl-C, piped to a dying tee",
            Case::Sighup => "SIGHUP",
            Case::Sigterm => "SIGTERM",
            Case::SecondSigint => "SIGINT, 2nd SIGINT in teardown",
            Case::SecondSigintAtOnce => "SIGINT, 2nd SIGINT at once",
        }
    }

    /// The signal the report must name: the first one sent.
    fn first(self) -> Signal {
        match self {
            Case::Sighup => Signal::SIGHUP,
            Case::Sigterm => Signal::SIGTERM,
            Case::PipedCtrlC | Case::SecondSigint | Case::SecondSigintAtOnce => Signal::SIGINT,
        }
    }

    /// The exit status the README's table gives: 128 + the number of the signal that
    /// ended the tool (the second one for case 4, a SIGINT too).
    fn expected_exit(self) -> i32 {
        128 + self.first() as i32
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Runtime {
    Local,
    Docker,
}

impl Runtime {
    /// Every case locally. In Docker the cases whose teardown is the runtime's own:
    /// SIGTERM, and a second SIGINT during teardown or at once (what `down` must
    /// remove differs by runtime). A first SIGHUP and a piped Ctrl-C take the tool
    /// down the same way whatever the runtime (one handler, one writer); SIGINT alone
    /// in Docker is `docker::sigint_in_the_middle_of_the_load_exits_130_and_removes_everything`.
    fn cases(self) -> &'static [Case] {
        match self {
            Runtime::Local => &Case::ALL,
            Runtime::Docker => &[Case::Sigterm, Case::SecondSigint, Case::SecondSigintAtOnce],
        }
    }
}

/// What one run left, one row of the table.
struct Row {
    case: Case,
    runtime: Runtime,
    exit: Option<i32>,
    /// The report matched the schema, was marked incomplete, and its counts add up.
    report_valid: Result<(), String>,
    interrupted_by: String,
    /// ok / failed / indeterminate / rows of payments.csv.
    payments: (u64, u64, u64, u64),
    /// Processes of the run (its nodes, its `tee`) alive afterwards.
    processes_left: Vec<String>,
    /// Containers, networks and volumes labelled with the run, afterwards.
    containers_left: Vec<String>,
    /// Run directories left under the run's `--run-dir`.
    run_dirs_left: usize,
    /// Cases 4 and 5: the tool said it exited on the second signal.
    forced: bool,
    /// Cases 4 and 5 on Docker: the objects labelled with the run at the forced exit,
    /// before `down` (which the count of `containers_left` follows).
    left_at_exit: Option<usize>,
    /// How `tee` ended: case 1 checks it died of the SIGINT, so that the tool's
    /// later lines met a pipe without a reader.
    tee: Option<ExitStatus>,
    log: String,
}

#[test]
fn every_signal_on_local_and_docker_leaves_a_partial_report_and_nothing_running() {
    let _turn = killed_runs_turn();
    require_node_binaries();
    let docker = engine().is_some();
    let mut rows = Vec::new();
    for runtime in [Runtime::Local, Runtime::Docker] {
        if runtime == Runtime::Docker && !docker {
            continue;
        }
        for case in runtime.cases() {
            rows.push(run_case(*case, runtime));
        }
    }
    eprintln!("{}", table(&rows));
    let mut wrong = Vec::new();
    for row in &rows {
        wrong.extend(check(row).into_iter().map(|w| {
            format!(
                "{} on {:?}: {w}\n--- its log ---\n{}",
                row.case.label(),
                row.runtime,
                row.log
            )
        }));
    }
    assert!(
        wrong.is_empty(),
        "{}\n\n{}",
        table(&rows),
        wrong.join("\n\n")
    );
}

/// Every cell of `row` against what the docs promise; the cells that differ.
fn check(row: &Row) -> Vec<String> {
    let mut wrong = Vec::new();
    if row.exit != Some(row.case.expected_exit()) {
        wrong.push(format!(
            "exit {:?}, expected {}",
            row.exit,
            row.case.expected_exit()
        ));
    }
    if !row.processes_left.is_empty() {
        wrong.push(format!("processes left: {:?}", row.processes_left));
    }
    if !row.containers_left.is_empty() {
        wrong.push(format!("docker objects left: {:?}", row.containers_left));
    }
    if row.run_dirs_left != 0 {
        wrong.push(format!("{} run directories left", row.run_dirs_left));
    }
    if matches!(row.case, Case::SecondSigint | Case::SecondSigintAtOnce) && !row.forced {
        wrong.push("no `second signal (SIGINT): exiting now` line".into());
    }
    if row.case == Case::PipedCtrlC
        && row.tee.and_then(|s| s.signal()) != Some(Signal::SIGINT as i32)
    {
        wrong.push(format!("tee did not die of the SIGINT: {:?}", row.tee));
    }
    let (ok, failed, indeterminate, sent) = row.payments;
    if let Err(e) = &row.report_valid {
        wrong.push(format!("report: {e}"));
    }
    // A second signal before the report is written: the report of what was recorded
    // until then, which says so after the first signal's name.
    let first = row.case.first();
    let named = match row.case {
        Case::SecondSigintAtOnce => (row.interrupted_by)
            .strip_prefix(first.as_str())
            .is_some_and(|rest| rest.starts_with(", then a second signal")),
        _ => row.interrupted_by == first.as_str(),
    };
    if !named {
        wrong.push(format!("interrupted_by {:?}", row.interrupted_by));
    }
    if ok == 0 || ok + failed + indeterminate != sent {
        wrong.push(format!(
            "payments: ok {ok} + failed {failed} + indeterminate {indeterminate} vs {sent} sent"
        ));
    }
    wrong
}

fn table(rows: &[Row]) -> String {
    let mut t = String::from(
        "| case | runtime | exit | report valid | interrupted_by | ok / failed / indeterminate / sent | processes left | docker objects left (at exit) | run dirs left |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let (ok, failed, ind, sent) = r.payments;
        t.push_str(&format!(
            "| {} | {:?} | {} | {} | {} | {ok} / {failed} / {ind} / {sent} | {} | {} | {} |\n",
            r.case.label(),
            r.runtime,
            r.exit.map_or("none".into(), |c| c.to_string()),
            match (&r.report_valid, r.interrupted_by.as_str()) {
                (Ok(()), _) => "yes",
                (Err(_), "-") => "none",
                (Err(_), _) => "no",
            },
            match r.interrupted_by.split_once(", then") {
                Some((first, _)) => format!("{first}, then a second signal (forced)"),
                None => r.interrupted_by.clone(),
            },
            r.processes_left.len(),
            if r.runtime == Runtime::Docker {
                let at_exit = r.left_at_exit.map(|n| format!(" ({n})"));
                format!("{}{}", r.containers_left.len(), at_exit.unwrap_or_default())
            } else {
                "-".into()
            },
            r.run_dirs_left,
        ));
    }
    t
}

/// The tool's `--no-tui` run with stdout and stderr on one pipe to `tee run.log`, the
/// two in a process group led by the tool.
struct Piped {
    tool: Child,
    tee: Child,
    log: PathBuf,
}

impl Piped {
    fn spawn(scenario: &Path, report: &Path, run_parent: &Path, log: PathBuf) -> Piped {
        let (reader, writer) = std::io::pipe().expect("pipe");
        let mut cmd = lnbench_command();
        cmd.arg(scenario)
            .args(["--no-tui", "--payments", "1000000", "--report"])
            .arg(report)
            .arg("--run-dir")
            .arg(run_parent)
            .stdin(Stdio::null())
            .stdout(writer.try_clone().expect("pipe"))
            .stderr(writer)
            .process_group(0);
        let tool = cmd.spawn().expect("start lnbench-tui");
        // The pipe's write ends live in the tool only, so tee sees its end.
        drop(cmd);
        // Through `env --default-signal=INT`: a harness started in the background of a
        // non-interactive shell (as `cmd &`) ignores SIGINT, and tee would inherit that;
        // a user's terminal pipeline does not.
        let tee = Command::new("env")
            .args(["--default-signal=INT", "tee"])
            .arg(&log)
            .stdin(reader)
            .stdout(Stdio::null())
            .process_group(tool.id() as i32)
            .spawn()
            .expect("start tee");
        Piped { tool, tee, log }
    }

    fn text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Polls the log (at most 600 s) until a line matches `pred`.
    fn wait_for(&mut self, what: &str, pred: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(600);
        loop {
            let text = self.text();
            if text.lines().any(&pred) {
                return;
            }
            if let Ok(Some(status)) = self.tool.try_wait() {
                panic!("lnbench-tui exited ({status}) before {what}:\n{text}");
            }
            assert!(Instant::now() < deadline, "no {what} within 600 s:\n{text}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Waits (at most 180 s, then kills it and fails) for the tool's exit, then for
    /// tee's (which ends when the pipe's last writer does).
    /// Returns both statuses (tee's None when it had to be killed).
    fn wait_exit(&mut self) -> (ExitStatus, Option<ExitStatus>) {
        let status = wait_child(&mut self.tool, Duration::from_secs(180))
            .unwrap_or_else(|| panic!("lnbench-tui did not exit:\n{}", self.text()));
        (status, wait_child(&mut self.tee, Duration::from_secs(30)))
    }
}

fn wait_child(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// True for a headless progress line with at least one successful payment.
fn payments_succeeded(line: &str) -> bool {
    line.split_once("] ok ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .and_then(|n| n.parse::<u64>().ok())
        .is_some_and(|n| n > 0)
}

fn run_case(case: Case, runtime: Runtime) -> Row {
    let work = tempfile::tempdir().expect("temp dir");
    let run_parent = work.path().join("runs");
    let report = work.path().join("report");
    std::fs::create_dir_all(&run_parent).unwrap();
    let scenario = repo_file(match runtime {
        Runtime::Local => "tests/fixtures/scenarios/valid/alice-pays-bob.yaml",
        Runtime::Docker => "tests/fixtures/docker/alice-pays-bob.yaml",
    });
    let mut run = Piped::spawn(&scenario, &report, &run_parent, work.path().join("run.log"));
    run.wait_for("successful payment", payments_succeeded);
    let tool = Pid::from_raw(run.tool.id() as i32);
    match case {
        Case::PipedCtrlC => killpg(tool, Signal::SIGINT).expect("SIGINT to the group"),
        _ => kill(tool, case.first()).expect("signal the tool"),
    }
    if case == Case::SecondSigint {
        run.wait_for("the report line", |l| l.starts_with("report: "));
        kill(tool, Signal::SIGINT).expect("second SIGINT");
    }
    if case == Case::SecondSigintAtOnce {
        run.wait_for("the stop notice", |l| l.contains("SIGINT received"));
        kill(tool, Signal::SIGINT).expect("second SIGINT");
    }
    let (status, tee) = run.wait_exit();
    let mut log = run.text();
    let run_id = log
        .lines()
        .find_map(|l| l.strip_prefix("run ")?.split(':').next())
        .unwrap_or_default()
        .to_string();
    let forced = log.contains("second signal (SIGINT): exiting now");
    let mut left_at_exit = None;
    if matches!(case, Case::SecondSigint | Case::SecondSigintAtOnce) {
        if runtime == Runtime::Docker {
            left_at_exit = Some(docker_objects(&run_id).len());
        }
        // Local nodes die with the tool (parent-death signal); `down` removes the
        // run directory, and for Docker the containers the forced exit left.
        wait_until_gone(&run_parent);
        log.push_str(&down(&run_parent, &run_id));
    }
    let processes_left = processes_mentioning(&run_parent)
        .into_iter()
        .chain(processes_mentioning(&run.log))
        .map(|(pid, cmd)| format!("{pid} {cmd}"))
        .collect();
    let containers_left = match runtime {
        Runtime::Docker => docker_objects(&run_id),
        Runtime::Local => Vec::new(),
    };
    let (report_valid, interrupted_by, payments) =
        read_report(&report, case == Case::SecondSigintAtOnce);
    Row {
        case,
        runtime,
        exit: status.code(),
        report_valid,
        interrupted_by,
        payments,
        processes_left,
        containers_left,
        run_dirs_left: std::fs::read_dir(&run_parent).map_or(0, |d| d.count()),
        forced,
        left_at_exit,
        tee,
        log,
    }
}

/// Waits (at most 15 s) for the processes of the run to go after a forced exit: the
/// kernel's parent-death signal reaches them, they take a moment to die.
fn wait_until_gone(run_parent: &Path) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while !processes_mentioning(run_parent).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// `lnbench-tui down --run-dir parent --run ID`, its output for the log. Asked of
/// this run alone: the other tests' runs are not this test's.
fn down(run_parent: &Path, run_id: &str) -> String {
    assert!(!run_id.is_empty(), "the run's id, from its `run ID:` line");
    let out = lnbench_command()
        .args(["down", "--run", run_id, "--run-dir"])
        .arg(run_parent)
        .output()
        .expect("run lnbench-tui down");
    format!(
        "--- lnbench-tui down ({}) ---\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Containers, networks and volumes labelled with run `run_id`.
fn docker_objects(run_id: &str) -> Vec<String> {
    assert!(!run_id.is_empty(), "no `run <id>:` line");
    let (containers, networks) = labelled(Some(run_id));
    let label = format!("lnbench.run={run_id}");
    let filters = HashMap::from([("label", vec![label.as_str()])]);
    let volumes = block_on(async {
        Docker::connect_with_defaults()
            .unwrap()
            .list_volumes(Some(
                ListVolumesOptionsBuilder::default()
                    .filters(&filters)
                    .build(),
            ))
            .await
            .unwrap()
    });
    let volumes = volumes.volumes.unwrap_or_default().into_iter();
    (containers.into_iter().map(|c| format!("container {c}")))
        .chain(networks.into_iter().map(|n| format!("network {n}")))
        .chain(volumes.map(|v| format!("volume {}", v.name)))
        .collect()
}

/// The report's verdict (schema, incomplete, counts that add up and reconcile), its
/// `interrupted_by`, and its ok / failed / indeterminate beside the rows of
/// payments.csv. A forced exit's report (`forced`: a second signal before the report)
/// has no payments.csv and no reconciliation: its "sent" is the sum of its counts.
fn read_report(dir: &Path, forced: bool) -> (Result<(), String>, String, (u64, u64, u64, u64)) {
    let Ok(text) = std::fs::read_to_string(dir.join("report.json")) else {
        return (Err("no report.json".into()), "-".into(), (0, 0, 0, 0));
    };
    let report: serde_json::Value = match serde_json::from_str(&text) {
        Ok(r) => r,
        Err(e) => return (Err(format!("not JSON: {e}")), "-".into(), (0, 0, 0, 0)),
    };
    let interrupted_by = report["interrupted_by"].as_str().unwrap_or("-").to_string();
    let count = |key: &str| report["results"][key].as_u64().unwrap_or(0);
    let (ok, failed, ind) = (count("ok"), count("failed"), count("indeterminate"));
    let csv = std::fs::read_to_string(dir.join("payments.csv")).unwrap_or_default();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    let outcome = |o: &str| {
        rows.iter()
            .filter(|l| l.split(',').nth(4) == Some(o))
            .count() as u64
    };
    let valid = std::panic::catch_unwind(|| {
        assert_matches_schema(&report);
        assert_eq!(report["complete"], false, "a partial report");
        if forced {
            return;
        }
        assert_eq!(outcome("ok"), ok, "payments.csv's ok rows");
        assert_eq!(outcome("failed"), failed, "payments.csv's failed rows");
        assert_reconciled(&report);
    })
    .map_err(|e| {
        (e.downcast_ref::<String>().cloned())
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    });
    let sent = if forced {
        ok + failed + ind
    } else {
        rows.len() as u64
    };
    (valid, interrupted_by, (ok, failed, ind, sent))
}
