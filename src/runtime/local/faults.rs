//! Faults done to local processes (`faults:`): kill, start again, pause; and the
//! Toxiproxy server peer links go through (`links:`, link faults), a process of the
//! run like the others (its own group, parent-death signal, log in
//! `<run dir>/toxiproxy/output.log`, stopped by `down` after the nodes).

use super::process::Proc;
use super::{LocalRuntime, RuntimeError};
use crate::runtime::{ProxyHost, ProxyPort, Restarted};
use std::time::Duration;
use tokio::time::Instant;

/// The fault proxy's binary (`scripts/build-nodes.sh` builds it into the cache).
pub const TOXIPROXY: &str = "toxiproxy-server";
/// Its name in the run (directory, resources, services).
pub const TOXIPROXY_NAME: &str = "toxiproxy";
const HINT: &str = "run scripts/build-nodes.sh (it builds toxiproxy-server v2.5.0 with Go)";
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
        let what = "the fault proxy (links: or link faults)";
        let binary = super::find_binary(None, TOXIPROXY, what, HINT)?;
        let dir = self.dir_for(TOXIPROXY_NAME)?;
        let ports = self.ports(count + 1)?;
        let api = format!("127.0.0.1:{}", ports[0]);
        let args: Vec<String> = ["-host", "127.0.0.1", "-port", &ports[0].to_string()]
            .iter()
            .map(|s| s.to_string())
            .collect();
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
        let ports = (ports[1..].iter())
            .map(|p| ProxyPort {
                listen: format!("127.0.0.1:{p}"),
                dial: format!("127.0.0.1:{p}"),
            })
            .collect();
        Ok(ProxyHost { api, ports })
    }
}
