//! End to end: SIGINT in the middle of the load ends the run cleanly: a partial
//! report is written, the exit code says interrupted, and no node process is left.

mod common;

use common::*;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn sigint_during_load_tears_everything_down() {
    require_node_binaries();
    let work = tempfile::tempdir().expect("temp dir");
    let run_dir = work.path().join("runs");
    let report_dir = work.path().join("report");
    std::fs::create_dir_all(&run_dir).unwrap();

    let mut child = Command::new(lnbench())
        .arg(repo_file("scenarios/alice-pays-bob.yaml"))
        // far more than can finish before the signal
        .args(["--payments", "1000000", "--report"])
        .arg(&report_dir)
        .arg("--run-dir")
        .arg(&run_dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start lnbench-tui");

    // Wait until payments are flowing: the second progress line of the load.
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    let mut progress_lines = 0;
    let deadline = Instant::now() + Duration::from_secs(300);
    while progress_lines < 2 {
        let line = rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .unwrap_or_else(|_| panic!("no load progress within 300 s:\n{}", seen.join("\n")));
        if line.contains(" ok ") && line.contains("tps") {
            progress_lines += 1;
        }
        seen.push(line);
    }

    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).expect("send SIGINT");
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "lnbench-tui did not exit within 90 s of SIGINT"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(1)) {
        seen.push(line);
    }
    assert_eq!(status.code(), Some(130), "exit status {status:?}\n{}", seen.join("\n"));

    let left = processes_mentioning(&run_dir);
    assert!(left.is_empty(), "processes of the run still alive: {left:?}");

    let text = std::fs::read_to_string(report_dir.join("report.json")).expect("partial report.json");
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_matches_schema(&report);
    assert_eq!(report["complete"], false);
    assert_eq!(report["interrupted_by"], "SIGINT");
    assert!(report["results"]["ok"].as_u64().unwrap() > 0);
}
