//! One started process: its own process group, its log file, and how it is stopped.

use super::super::RuntimeError;
use nix::sys::signal::{Signal, killpg};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// How often `wait_or_kill` looks whether the leader has exited.
const EXIT_POLL: Duration = Duration::from_millis(20);

/// A process this runtime started. It leads its own process group, so signals reach
/// anything it starts too.
#[derive(Debug)]
pub struct Proc {
    pub name: String,
    pub pid: u32,
    pub log: PathBuf,
    child: tokio::process::Child,
}

impl Proc {
    /// Starts `binary args` with stdout and stderr appended to `log`.
    pub fn spawn(
        name: &str,
        what: &str,
        binary: &Path,
        args: &[String],
        log: PathBuf,
    ) -> Result<Proc, RuntimeError> {
        let spawn_err = |source| RuntimeError::Spawn {
            what: what.to_string(),
            binary: binary.to_path_buf(),
            source,
        };
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .map_err(|source| RuntimeError::Io {
                path: log.clone(),
                source,
            })?;
        let err = out.try_clone().map_err(spawn_err)?;
        let mut command = tokio::process::Command::new(binary);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .kill_on_drop(true);
        die_with_parent(&mut command);
        let child = command.spawn().map_err(spawn_err)?;
        let pid = child.id().expect("a just-spawned child has a pid");
        Ok(Proc {
            name: name.to_string(),
            pid,
            log,
            child,
        })
    }

    /// `Some(status)` if the process has exited. It is not reaped here: an exited
    /// leader stays a zombie, so its pid (its group's id) cannot go to another process
    /// until teardown has signalled the group and reaps it.
    pub fn exited(&mut self) -> Option<String> {
        let Some(pid) = self.child.id() else {
            // Reaped already; tokio keeps the status.
            return match self.child.try_wait() {
                Ok(Some(status)) => Some(status.to_string()),
                Ok(None) => None,
                Err(e) => Some(format!("unknown status: {e}")),
            };
        };
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
        match waitid(Id::Pid(Pid::from_raw(pid as i32)), flags) {
            Ok(WaitStatus::Exited(_, code)) => Some(format!("exit status: {code}")),
            Ok(WaitStatus::Signaled(_, signal, _)) => {
                Some(format!("signal: {} ({signal})", signal as i32))
            }
            Ok(_) => None,
            Err(e) => Some(format!("unknown status: {e}")),
        }
    }

    /// Signals the group by the leader's pid while the leader is not reaped (running,
    /// or a zombie): then that pid is still its own. Once reaped, nothing is sent, as
    /// the pid may be another process's by now.
    fn signal_group(&self, signal: Signal) {
        let Some(pid) = self.child.id() else {
            return;
        };
        // ESRCH: the group is gone already, which is what we want.
        let _ = killpg(Pid::from_raw(pid as i32), signal);
    }

    /// SIGTERM to the group (and SIGCONT, so a paused group can act on it).
    pub fn terminate(&self) {
        self.signal_group(Signal::SIGTERM);
        self.signal_group(Signal::SIGCONT);
    }

    /// SIGSTOP to the group (`paused`), or SIGCONT.
    pub fn pause(&self, paused: bool) {
        self.signal_group(if paused {
            Signal::SIGSTOP
        } else {
            Signal::SIGCONT
        });
    }

    /// SIGKILL to the group, and waits until the process is reaped.
    pub async fn kill(&mut self) {
        self.signal_group(Signal::SIGKILL);
        let _ = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
    }

    /// Waits until the process exits, or `deadline` passes; then SIGKILLs the group and
    /// reaps the process. Returns true if it stopped by itself.
    pub async fn wait_or_kill(&mut self, deadline: tokio::time::Instant) -> bool {
        // Watched without reaping, so the group can be signalled by the leader's pid.
        let stopped = loop {
            if self.exited().is_some() {
                break true;
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                break false;
            }
            tokio::time::sleep((deadline - now).min(EXIT_POLL)).await;
        };
        if !stopped {
            tracing::warn!(process = %self.name, pid = self.pid, "did not stop in time; killing it");
        }
        // Whether the leader stopped or not, nothing else of its group may linger.
        self.signal_group(Signal::SIGKILL);
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
        stopped
    }

    /// SIGKILL to the group, without waiting (for `Drop`).
    pub fn kill_now(&mut self) {
        self.signal_group(Signal::SIGKILL);
        let _ = self.child.start_kill();
    }

    /// Non-blocking reap, for `Drop`: true once the process is gone.
    pub fn reaped(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }
}

/// SIGTERM to all, then waits for each until one shared deadline `limit` away, and
/// SIGKILLs the rest; returns the names of those it had to kill.
pub async fn stop_all(procs: Vec<Proc>, limit: Duration) -> Vec<String> {
    for p in &procs {
        p.terminate();
    }
    let deadline = tokio::time::Instant::now() + limit;
    let mut killed = Vec::new();
    for mut p in procs {
        if !p.wait_or_kill(deadline).await {
            killed.push(p.name.clone());
        }
    }
    killed
}

impl Drop for Proc {
    /// `kill_on_drop` only reaches the leader; take its whole group down with it.
    fn drop(&mut self) {
        // A no-op once reaped; a zombie leader's group still gets it.
        self.signal_group(Signal::SIGKILL);
    }
}

/// Has the kernel SIGKILL the child when this process dies, however it dies: even a
/// SIGKILL of lnbench-tui, which runs no teardown, then leaves no node behind. (The
/// signal follows the thread that spawned the child: the run's root future, which
/// stays on the main thread until the process ends.)
#[allow(
    unsafe_code,
    reason = "pre_exec runs between fork and exec; it only makes one async-signal-safe prctl call"
)]
fn die_with_parent(command: &mut tokio::process::Command) {
    // SAFETY: the closure allocates nothing and calls only prctl(2), which is
    // async-signal-safe, as required between fork and exec.
    unsafe {
        command.pre_exec(|| {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(std::io::Error::from)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn terminate_stops_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        // A shell that starts a grandchild in the same group, then waits.
        let (mut proc, pid_file) = shell_with_grandchild(dir.path(), "wait");
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !pid_file.exists()
            || std::fs::read_to_string(&pid_file)
                .unwrap()
                .trim()
                .is_empty()
        {
            assert!(std::time::Instant::now() < deadline, "shell did not start");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let grandchild = read_pid(&pid_file);
        assert!(proc.exited().is_none());
        proc.terminate();
        let stopped = proc
            .wait_or_kill(tokio::time::Instant::now() + Duration::from_secs(5))
            .await;
        assert!(stopped, "sh stops on SIGTERM");
        // The grandchild got the signal too (it may linger as a zombie of init briefly).
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while alive(grandchild) {
            assert!(std::time::Instant::now() < deadline, "grandchild survived");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A leader that exited on its own, leaving a grandchild in its group: `exited`
    /// reports it without reaping it, so its pid stays its own (a zombie) and the group
    /// is still signalled by it; teardown reaps it.
    #[tokio::test]
    async fn an_exited_leader_is_not_reaped_before_its_group_is_signalled() {
        let dir = tempfile::tempdir().unwrap();
        let (mut proc, pid_file) = shell_with_grandchild(dir.path(), "exit 3");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = proc.exited() {
                break status;
            }
            assert!(std::time::Instant::now() < deadline, "sh did not exit");
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        assert!(status.contains('3'), "{status}");
        let leader = i32::try_from(proc.pid).unwrap();
        let state = crate::metrics::process::read_stat(leader)
            .and_then(|stat| crate::metrics::process::state(&stat));
        assert_eq!(state, Some('Z'), "the exited leader was reaped already");
        let grandchild = read_pid(&pid_file);
        proc.terminate();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while alive(grandchild) {
            assert!(std::time::Instant::now() < deadline, "grandchild survived");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(
            proc.wait_or_kill(tokio::time::Instant::now() + Duration::from_secs(5))
                .await
        );
    }

    /// `sh` that starts `sleep 300` in its group, writes its pid to the file returned,
    /// then runs `then`.
    fn shell_with_grandchild(dir: &Path, then: &str) -> (Proc, std::path::PathBuf) {
        let pid_file = dir.join("child.pid");
        let script = format!("sleep 300 & echo $! > '{}'; {then}", pid_file.display());
        let proc = Proc::spawn(
            "sh",
            "test shell",
            Path::new("/bin/sh"),
            &["-c".into(), script],
            dir.join("output.log"),
        )
        .unwrap();
        (proc, pid_file)
    }

    fn read_pid(file: &Path) -> i32 {
        std::fs::read_to_string(file)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    fn alive(pid: i32) -> bool {
        // A zombie still answers kill(0); look at its state instead.
        crate::metrics::process::read_stat(pid)
            .is_some_and(|stat| crate::metrics::process::state(&stat) != Some('Z'))
    }
}
