//! A running lnbench-tui whose stderr lines arrive on a channel, so a test can wait
//! for a line (the load started, the run id) and then signal it or wait for its exit.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

pub struct Running {
    pub child: Child,
    lines: Receiver<String>,
    /// Every stderr line read so far.
    pub seen: Vec<String>,
}

impl Running {
    /// Starts `cmd` with stdout discarded and stderr read line by line.
    pub fn spawn(mut cmd: Command) -> Running {
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start lnbench-tui");
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Running {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Reads stderr until `count` lines matching `pred` were seen (at most 300 s).
    pub fn wait_for(&mut self, what: &str, count: usize, pred: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(300);
        let mut matched = 0;
        while matched < count {
            let line = self
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .unwrap_or_else(|_| panic!("no {what} within 300 s:\n{}", self.seen.join("\n")));
            if pred(&line) {
                matched += 1;
            }
            self.seen.push(line);
        }
    }

    /// Waits until `count` headless progress lines (`... ok N ... tps ...`) were seen.
    pub fn wait_for_load(&mut self, count: usize) {
        self.wait_for("load progress", count, |l| {
            l.contains(" ok ") && l.contains("tps")
        });
    }

    /// Waits (at most `limit`, then kills it and fails) for the exit; returns the
    /// status and all of stderr.
    pub fn wait_exit(&mut self, limit: Duration) -> (ExitStatus, String) {
        let started = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if started.elapsed() > limit {
                let _ = self.child.kill();
                panic!(
                    "lnbench-tui did not exit within {} s:\n{}",
                    limit.as_secs(),
                    self.seen.join("\n")
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(1)) {
            self.seen.push(line);
        }
        (status, self.seen.join("\n"))
    }

    /// The run id, from the first line (`run <id>: ...`).
    pub fn run_id(&self) -> String {
        let first = self
            .seen
            .iter()
            .find(|l| l.starts_with("run "))
            .expect("a `run <id>:` line");
        first["run ".len()..].split(':').next().unwrap().to_string()
    }
}

/// A run of the binary on a scenario file of the repository, for a number of payments,
/// with its run directory and its report (`report/` inside it) in a temporary
/// directory of its own.
pub struct ScenarioRun {
    pub running: Running,
    pub work: tempfile::TempDir,
}

impl ScenarioRun {
    /// Starts `scenario` (a path in the repository) for `payments`, with `env` added
    /// to the binary's environment.
    pub fn start(scenario: &str, payments: u64, env: &[(&str, std::ffi::OsString)]) -> Self {
        let work = tempfile::tempdir().expect("temp dir");
        let mut cmd = super::lnbench_command();
        cmd.arg(super::repo_file(scenario))
            .args(["--payments", &payments.to_string(), "--report"])
            .arg(work.path().join("report"))
            .arg("--run-dir")
            .arg(work.path())
            .envs(env.iter().map(|(k, v)| (k, v)));
        ScenarioRun {
            running: Running::spawn(cmd),
            work,
        }
    }

    pub fn report_dir(&self) -> std::path::PathBuf {
        self.work.path().join("report")
    }
}

impl std::ops::Deref for ScenarioRun {
    type Target = Running;
    fn deref(&self) -> &Running {
        &self.running
    }
}

impl std::ops::DerefMut for ScenarioRun {
    fn deref_mut(&mut self) -> &mut Running {
        &mut self.running
    }
}
