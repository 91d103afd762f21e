//! Faults done to local processes (`faults:`): kill, start again, pause (the chain's
//! process too: `kill: chain`, `restart: chain`); and the
//! Toxiproxy server peer links go through (`links:`, link faults), a process of the
//! run like the others (its own group, parent-death signal, log in
//! `<run dir>/toxiproxy/output.log`, stopped by `down` after the nodes). Its API is on
//! a unix socket in `<run dir>/toxiproxy/api/` (mode 0700), not on a TCP port: only
//! this user can change the run's proxies. The proxies themselves listen on loopback
//! TCP, as the nodes dial them.

use super::process::Proc;
use super::{CHAIN_NAME, LocalRuntime, RuntimeError};
use crate::runtime::shared::proxy::api_socket;
use crate::runtime::{ProxyHost, ProxyPort, Restarted};
use std::time::Duration;
use tokio::time::Instant;

/// The fault proxy's binary (`scripts/build-nodes.sh` builds it into the cache):
/// Toxiproxy's server with its API on a unix socket (`scripts/toxiproxy-unix/`).
pub const TOXIPROXY: &str = "toxiproxy-unix";
/// Its name in the run (directory, resources, services).
pub const TOXIPROXY_NAME: &str = "toxiproxy";
const HINT: &str =
    "run scripts/build-nodes.sh (it builds toxiproxy-unix, Toxiproxy v2.5.0, with Go)";
const READY_TIMEOUT: Duration = Duration::from_secs(30);

impl LocalRuntime {
    pub(super) async fn kill(&mut self, name: &str) -> Result<(), RuntimeError> {
        let Some(at) = self.nodes.iter().position(|p| p.name == name) else {
            return Err(RuntimeError::UnknownNode { name: name.into() });
        };
        // Out of the list while it is down, so `exited` cannot see the deliberate kill.
        let mut proc = self.nodes.remove(at);
        proc.kill().await;
        self.killed.push((at, proc.log.clone(), name.to_string()));
        Ok(())
    }

    pub(super) async fn start_killed(&mut self, name: &str) -> Result<Restarted, RuntimeError> {
        let unknown = || RuntimeError::UnknownNode { name: name.into() };
        let k = (self.killed.iter().position(|(_, _, n)| n == name)).ok_or_else(unknown)?;
        let launch = self.launches.iter().find(|(_, _, ep)| ep.name == name);
        let (binary, args, endpoint) = launch.cloned().ok_or_else(unknown)?;
        let (at, log, _) = self.killed.remove(k);
        let started_at = Instant::now();
        let proc = Proc::spawn(name, &format!("node {name}"), &binary, &args, log)?;
        self.pids.push(proc.pid);
        self.rejoin(name, proc.pid)?;
        let endpoint = crate::runtime::NodeEndpoint {
            pid: Some(proc.pid),
            ..endpoint
        };
        self.nodes.insert(at.min(self.nodes.len()), proc);
        Ok(Restarted {
            stop: Duration::ZERO,
            started_at,
            endpoint,
        })
    }

    /// Stops the chain's process (SIGKILL when `kill`, else SIGTERM with the restart
    /// deadline); it is out of `chain` while down, so `exited` cannot see the stop.
    pub(super) async fn stop_chain_proc(&mut self, kill: bool) -> Result<Duration, RuntimeError> {
        let mut proc = self.chain.take().ok_or_else(|| RuntimeError::UnknownNode {
            name: CHAIN_NAME.into(),
        })?;
        let asked = Instant::now();
        if kill {
            proc.kill().await;
        } else {
            proc.terminate();
            proc.wait_or_kill(asked + crate::runtime::RESTART_STOP_DEADLINE)
                .await;
        }
        Ok(asked.elapsed())
    }

    /// Starts the chain again with the arguments of its first start (same data
    /// directory, ports and credentials) and its log appended to.
    pub(super) fn start_chain_proc(&mut self) -> Result<Instant, RuntimeError> {
        let unknown = || RuntimeError::UnknownNode {
            name: CHAIN_NAME.into(),
        };
        if self.chain.is_some() {
            return Err(unknown());
        }
        let (binary, args) = self.chain_launch.clone().ok_or_else(unknown)?;
        let log = self.run_dir.join(CHAIN_NAME).join("output.log");
        let started_at = Instant::now();
        let proc = Proc::spawn(CHAIN_NAME, "the chain", &binary, &args, log)?;
        self.pids.push(proc.pid);
        self.rejoin(CHAIN_NAME, proc.pid)?;
        self.chain = Some(proc);
        Ok(started_at)
    }

    pub(super) fn pause(&mut self, name: &str, paused: bool) -> Result<(), RuntimeError> {
        let proc = (self.nodes.iter()).find(|p| p.name == name);
        let proc = proc.ok_or_else(|| RuntimeError::UnknownNode { name: name.into() })?;
        proc.pause(paused);
        Ok(())
    }

    pub(super) async fn start_toxiproxy(
        &mut self,
        count: usize,
    ) -> Result<ProxyHost, RuntimeError> {
        let what = crate::runtime::shared::proxy::WHAT;
        let binary = super::find_binary(None, TOXIPROXY, what, HINT)?;
        let dir = self.dir_for(TOXIPROXY_NAME)?;
        let api = api_socket(&dir)?;
        let ports = self.ports(count)?;
        let args = vec!["-socket".to_string(), api.display().to_string()];
        let mut proc = Proc::spawn(TOXIPROXY_NAME, what, &binary, &args, dir.join("output.log"))?;
        self.pids.push(proc.pid);
        let client = crate::links::toxiproxy::Toxiproxy::new(&api).map_err(|e| {
            RuntimeError::Unsupported {
                what: what.into(),
                why: format!("{e:#}"),
                hint: "report this".into(),
            }
        })?;
        let deadline = Instant::now() + READY_TIMEOUT;
        while !client.answers().await {
            if let Some(status) = proc.exited() {
                return Err(RuntimeError::exited(what, status, &proc.log));
            }
            if Instant::now() >= deadline {
                return Err(RuntimeError::not_ready(what, READY_TIMEOUT, &proc.log));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        self.toxiproxy_version = super::binaries::version_of(&binary).await;
        self.toxiproxy = Some(proc);
        let ports = (ports.iter())
            .map(|p| ProxyPort {
                listen: format!("127.0.0.1:{p}"),
                dial: format!("127.0.0.1:{p}"),
            })
            .collect();
        Ok(ProxyHost { api, ports })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::shared::proxy::SOCKET_PATH_MAX;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_api_socket_directory_is_fresh_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let socket = api_socket(dir.path()).unwrap();
        let private = socket.parent().unwrap();
        let mode = std::fs::metadata(private).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        // A second start, or a directory planted there first, is refused.
        assert!(api_socket(dir.path()).is_err());
    }

    #[test]
    fn a_symlink_planted_for_the_api_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.path().join("api")).unwrap();
        assert!(api_socket(dir.path()).is_err());
    }

    #[test]
    fn a_socket_path_too_long_for_unix_sockets_is_refused_with_a_hint() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("d".repeat(SOCKET_PATH_MAX));
        let e = api_socket(&deep).unwrap_err().to_string();
        assert!(e.contains("--run-dir"), "{e}");
        assert!(!deep.exists());
    }
}
