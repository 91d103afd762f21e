//! End to end: SIGINT in the middle of the load ends the run cleanly: a partial
//! report is written, the exit code says interrupted, and no node process is left.

use crate::common::running::Running;
use crate::common::*;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A run of alice-pays-bob with far more payments than can finish, its stderr lines
/// on a channel.
struct Run {
    running: Running,
    _work: tempfile::TempDir,
    run_dir: PathBuf,
    report_dir: PathBuf,
}

impl std::ops::Deref for Run {
    type Target = Running;
    fn deref(&self) -> &Running {
        &self.running
    }
}

impl std::ops::DerefMut for Run {
    fn deref_mut(&mut self) -> &mut Running {
        &mut self.running
    }
}

impl Run {
    fn start() -> Run {
        Run::start_with(|text| text)
    }

    /// Like [`Run::start`], with the scenario text changed by `edit`.
    fn start_with(edit: impl FnOnce(String) -> String) -> Run {
        require_node_binaries();
        let work = tempfile::tempdir().expect("temp dir");
        let run_dir = work.path().join("runs");
        let report_dir = work.path().join("report");
        std::fs::create_dir_all(&run_dir).unwrap();
        let text = std::fs::read_to_string(repo_file(
            "tests/fixtures/scenarios/valid/alice-pays-bob.yaml",
        ))
        .unwrap();
        let scenario = work.path().join("alice-pays-bob.yaml");
        std::fs::write(&scenario, edit(text)).unwrap();
        let mut cmd = lnbench_command();
        cmd.arg(&scenario)
            .args(["--payments", "1000000", "--report"])
            .arg(&report_dir)
            .arg("--run-dir")
            .arg(&run_dir);
        Run {
            running: Running::spawn(cmd),
            _work: work,
            run_dir,
            report_dir,
        }
    }

    /// Sends `signal`, waits for the exit, and checks it was clean: exit code 128 + the
    /// signal's number (130 for SIGINT, 143 for SIGTERM) and no process of the run left.
    fn interrupt(&mut self, signal: Signal) {
        kill(Pid::from_raw(self.child.id() as i32), signal).expect("send signal");
        let (status, log) = self.wait_exit(Duration::from_secs(90));
        assert_eq!(
            status.code(),
            Some(128 + signal as i32),
            "exit status {status:?}\n{log}"
        );
        let left = processes_mentioning(&self.run_dir);
        assert!(
            left.is_empty(),
            "processes of the run still alive: {left:?}\n{log}"
        );
        assert!(log.contains(&format!("interrupted by {signal}")), "{log}");
    }
}

#[test]
fn sigint_during_load_tears_everything_down() {
    let mut run = Run::start();
    run.wait_for("load progress", 2, |l| {
        l.contains(" ok ") && l.contains("tps")
    });
    run.interrupt(Signal::SIGINT);
    let report_dir = run.report_dir.clone();

    let text =
        std::fs::read_to_string(report_dir.join("report.json")).expect("partial report.json");
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_matches_schema(&report);
    assert_eq!(report["complete"], false);
    assert_eq!(report["interrupted_by"], "SIGINT");
    assert!(report["results"]["ok"].as_u64().unwrap() > 0);
    assert_interrupted_load_reconciled(&report);
}

/// The payments in flight at the interrupt are left indeterminate by the tool, not
/// counted as failures, and resolved after the load from the sender's ledger; the
/// tool's ok then equals what the receiver settled, with no mismatch.
fn assert_interrupted_load_reconciled(report: &serde_json::Value) {
    assert_eq!(report["results"]["failed"], 0, "{:#}", report["results"]);
    let r = &report["reconciliation"];
    let count = |v: &serde_json::Value| v.as_u64().unwrap_or_else(|| panic!("{v} in {r:#}"));
    let indeterminate = count(&report["results"]["indeterminate"]);
    assert!(count(&r["indeterminate"]) >= indeterminate, "{r:#}");
    assert_eq!(count(&r["unresolved"]), 0, "{r:#}");
    assert_eq!(
        count(&r["resolved_ok"]) + count(&r["resolved_failed"]),
        count(&r["indeterminate"]),
        "{r:#}"
    );
    eprintln!(
        "at the interrupt: {} indeterminate, {} resolved ok, {} resolved failed, {} of them by \
         payment hash",
        r["indeterminate"], r["resolved_ok"], r["resolved_failed"], r["resolved_by_hash"]
    );
    assert_reconciled(report);
}

#[test]
fn sigterm_during_setup_tears_everything_down() {
    let mut run = Run::start();
    // The chain is up and the nodes are starting: the middle of setup.
    run.wait_for("node start", 1, |l| l.contains("==> nodes up"));
    run.interrupt(Signal::SIGTERM);
    // No load ran, but the partial report says how far setup got and why it stopped.
    let text = std::fs::read_to_string(run.report_dir.join("report.json"))
        .expect("a partial report after an interrupted setup");
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_matches_schema(&report);
    assert_eq!(report["complete"], false);
    assert_eq!(report["interrupted_by"], "SIGTERM");
    assert_eq!(report["results"]["ok"], 0);
    let steps: Vec<&str> = report["setup"]
        .as_array()
        .expect("setup steps")
        .iter()
        .map(|s| s["step"].as_str().unwrap())
        .collect();
    assert_eq!(steps.first(), Some(&"chain up"), "{steps:?}");
}

#[test]
fn a_node_that_dies_mid_load_ends_the_run_with_its_log() {
    let mut run = Run::start();
    run.wait_for("load progress", 2, |l| {
        l.contains(" ok ") && l.contains("tps")
    });
    let bob = processes_mentioning(&run.run_dir)
        .into_iter()
        .find(|(_, cmd)| cmd.contains("--alias=bob"))
        .expect("bob's lnd is running");
    kill(Pid::from_raw(bob.0 as i32), Signal::SIGKILL).expect("kill bob");

    let (status, log) = run.wait_exit(Duration::from_secs(90));
    assert_eq!(status.code(), Some(3), "exit status {status:?}\n{log}");
    assert!(log.contains("bob exited during the load"), "{log}");
    let left = processes_mentioning(&run.run_dir);
    assert!(
        left.is_empty(),
        "processes of the run still alive: {left:?}"
    );

    let text = std::fs::read_to_string(run.report_dir.join("report.json")).expect("partial report");
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(report["complete"], false);
    assert!(
        report["interrupted_by"]
            .as_str()
            .unwrap()
            .contains("bob exited"),
        "{}",
        report["interrupted_by"]
    );
}

/// btcd and LND get the chain's RPC password from 0600 config files: no command line
/// on the machine shows it while a run goes on.
#[test]
fn no_password_on_any_command_line_during_a_run() {
    let mut run = Run::start();
    run.wait_for_load(1);
    let with_passwords = processes_with_passwords();
    run.interrupt(Signal::SIGINT);
    let text = std::fs::read_to_string(run.report_dir.join("report.json")).expect("report");
    assert_interrupted_load_reconciled(&serde_json::from_str(&text).unwrap());
    assert!(
        with_passwords.is_empty(),
        "passwords on command lines: {with_passwords:?}"
    );
}

/// A second Ctrl-C while the run stops ends the tool at once; its nodes die with it.
#[test]
fn a_second_sigint_exits_at_once_and_leaves_no_process() {
    let mut run = Run::start();
    run.wait_for_load(1);
    let pid = Pid::from_raw(run.child.id() as i32);
    kill(pid, Signal::SIGINT).expect("first SIGINT");
    run.wait_for("the stop notice", 1, |l| l.contains("SIGINT received"));
    kill(pid, Signal::SIGINT).expect("second SIGINT");
    let (status, log) = run.wait_exit(Duration::from_secs(30));
    assert_eq!(status.code(), Some(130), "exit status {status:?}\n{log}");
    assert!(log.contains("second signal (SIGINT): exiting now"), "{log}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = processes_mentioning(&run.run_dir);
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "processes alive 10 s after the forced exit: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn sigkill_of_the_tool_takes_its_nodes_down_too() {
    let _turn = killed_runs_turn();
    let mut run = Run::start();
    run.wait_for("load progress", 1, |l| {
        l.contains(" ok ") && l.contains("tps")
    });
    assert!(
        !processes_mentioning(&run.run_dir).is_empty(),
        "the run's nodes should be running before the kill"
    );
    // SIGKILL runs no teardown: the kernel's parent-death signal must stop the nodes.
    kill(Pid::from_raw(run.child.id() as i32), Signal::SIGKILL).expect("SIGKILL lnbench-tui");
    run.child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = processes_mentioning(&run.run_dir);
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "processes still alive 10 s after lnbench-tui was killed: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // The run directory stays (no teardown ran); `down` removes it, its tool being gone.
    let dirs = run_dirs(&run.run_dir);
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let stdout = down(&run.run_dir);
    assert!(
        stdout.contains(&format!("removed directory {}", dirs[0].display())),
        "{stdout}"
    );
    assert!(run_dirs(&run.run_dir).is_empty());
}

/// The run directories under `parent`.
fn run_dirs(parent: &std::path::Path) -> Vec<PathBuf> {
    std::fs::read_dir(parent)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect()
}

/// `lnbench-tui down --run-dir parent --run ID`, ID the one run's under `parent`; its
/// stdout. Asked of that run alone: the other tests' runs, in Docker too, are not this
/// test's (a plain `down` looks at every killed run's containers). Without a Docker
/// engine its docker part fails (exit 3) after the local part is done.
fn down(parent: &std::path::Path) -> String {
    let names: Vec<String> = (run_dirs(parent).iter())
        .map(|d| d.file_name().unwrap().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with("lnbench-pg-"))
        .collect();
    assert_eq!(names.len(), 1, "one run directory: {names:?}");
    let id = names[0]
        .strip_prefix("lnbench-")
        .expect("a run directory's name");
    let out = lnbench_command()
        .args(["down", "--run", id, "--run-dir"])
        .arg(parent)
        .output()
        .expect("run lnbench-tui down");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() || stderr.contains("no Docker engine answers"),
        "{out:?}"
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Pids and command lines of the processes whose parent is `parent`.
fn children_of(parent: u32) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces, so split after its ')'.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(parent) {
            let cmd = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            found.push((pid, String::from_utf8_lossy(&cmd).replace('\0', " ")));
        }
    }
    found
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
    })
}

#[test]
fn sigkill_of_the_tool_takes_its_postgresql_down_too() {
    let _turn = killed_runs_turn();
    // Both nodes on PostgreSQL: the runtime starts a server for them. Under root it
    // runs as the postgres user, and a change of user clears the parent-death
    // signal unless it is set again after it.
    let mut run = Run::start_with(|text| {
        text.replace(
            "    version: v0.21.1-beta\n",
            "    version: v0.21.1-beta\n    args: [\"--db.backend=postgres\"]\n",
        )
    });
    run.wait_for("load progress", 1, |l| {
        l.contains(" ok ") && l.contains("tps")
    });
    let tool = run.child.id();
    let server = children_of(tool)
        .into_iter()
        .find(|(_, cmd)| cmd.contains("postgres") && cmd.contains(" -D "))
        .unwrap_or_else(|| {
            panic!(
                "no PostgreSQL server among the tool's children: {:?}",
                children_of(tool)
            )
        });
    let backends = children_of(server.0);
    assert!(
        !backends.is_empty(),
        "the server has no backends: {server:?}"
    );
    kill(Pid::from_raw(tool as i32), Signal::SIGKILL).expect("SIGKILL lnbench-tui");
    run.child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let left: Vec<&(u32, String)> = std::iter::once(&server)
            .chain(&backends)
            .filter(|(pid, _)| alive(*pid))
            .collect();
        if left.is_empty() && processes_mentioning(&run.run_dir).is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still alive 15 s after lnbench-tui was killed: {left:?} {:?}",
            processes_mentioning(&run.run_dir)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // The data directory named on the server's command line (outside the run
    // directory when running as root) goes with the run directory in `down`.
    let data = server
        .1
        .split_whitespace()
        .skip_while(|a| *a != "-D")
        .nth(1)
        .map(PathBuf::from)
        .expect("-D on the server's command line");
    assert!(data.is_dir(), "{}", data.display());
    let stdout = down(&run.run_dir);
    assert!(
        !data.exists(),
        "{} left after down:\n{stdout}",
        data.display()
    );
    assert!(run_dirs(&run.run_dir).is_empty(), "{stdout}");
}
