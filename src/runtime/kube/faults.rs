//! A node's kill, start and pause in the kubernetes runtime, as signals to its process
//! sent from the pod's `files` container (which shares the pod's process namespace;
//! `restart`). The kubelet starts a killed node's container again by itself
//! (restartPolicy Always), on the same data volume; to keep the node down until its
//! start, the kill holds the new container's process frozen (SIGSTOP) as soon as it
//! appears, and the start thaws it (SIGCONT). A pause is SIGSTOP, its end SIGCONT.

use super::objects::FILES_CONTAINER;
use super::restart::{self, Signal};
use super::{KubeRuntime, pods, watch};
use crate::runtime::{NodeEndpoint, Restarted, RuntimeError};
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// A node killed and not started yet: the exec that killed it and waits to freeze the
/// process the kubelet starts next (its pid, or why not).
#[derive(Debug)]
pub struct Killed {
    pub name: String,
    pub held: JoinHandle<Result<Vec<u8>, String>>,
}

/// How long an exec that signals a process may take.
const SIGNAL_WITHIN: Duration = Duration::from_secs(15);

impl KubeRuntime {
    fn node_endpoint(&self, name: &str) -> Result<NodeEndpoint, RuntimeError> {
        (self.endpoints.iter())
            .find(|e| e.name == name)
            .cloned()
            .ok_or_else(|| RuntimeError::UnknownNode { name: name.into() })
    }

    fn signal_failed(&self, name: &str, what: &str, why: String) -> RuntimeError {
        RuntimeError::RestartFailed {
            name: name.into(),
            why: format!("{what} from the pod's files container failed ({why})"),
            hint: format!(
                "look at the pod: kubectl -n {} describe pod {name}",
                self.namespace
            ),
        }
    }

    /// SIGKILL to the node's process; the restart the kubelet makes is counted as
    /// asked, so the exit watcher does not take it for a death. Returns at once: a
    /// task of its own waits for the new container's process and freezes it.
    pub(super) async fn kill(&mut self, name: &str) -> Result<(), RuntimeError> {
        self.node_endpoint(name)?;
        if self.killed.iter().any(|k| k.name == name) {
            return Err(self.signal_failed(name, "a kill", "it was killed already".into()));
        }
        self.shared.ask_restart(name);
        let within = restart::STARTED_AGAIN_WITHIN;
        let held = tokio::spawn(pods::exec_in(
            self.api(),
            name.into(),
            FILES_CONTAINER.into(),
            restart::kill_hold_command(within),
            within + SIGNAL_WITHIN,
        ));
        self.killed.push(Killed {
            name: name.into(),
            held,
        });
        Ok(())
    }

    /// Thaws the process the kubelet started after the kill (waiting for it if it is
    /// not there yet) and follows its log anew. The way back counts from the thaw.
    pub(super) async fn start_killed(&mut self, name: &str) -> Result<Restarted, RuntimeError> {
        let endpoint = self.node_endpoint(name)?;
        let at = (self.killed.iter().position(|k| k.name == name))
            .ok_or_else(|| self.signal_failed(name, "a start", "it was not killed".into()))?;
        let killed = self.killed.remove(at);
        let held = match killed.held.await {
            Ok(held) => held,
            Err(e) => Err(format!("the kill's task ended: {e}")),
        };
        if let Err(why) = held {
            return Err(self.signal_failed(name, "the kill", why));
        }
        let started_at = Instant::now();
        self.pause(name, false).await?;
        let log = self.log_path(name);
        (self.loggers).push(tokio::spawn(watch::follow_log(
            self.api(),
            name.into(),
            log,
        )));
        Ok(Restarted {
            stop: Duration::ZERO,
            started_at,
            endpoint,
        })
    }

    /// SIGSTOP (or SIGCONT) to the node's process.
    pub(super) async fn pause(&mut self, name: &str, paused: bool) -> Result<(), RuntimeError> {
        self.node_endpoint(name)?;
        let (signal, what) = if paused {
            (Signal::Stop, "SIGSTOP")
        } else {
            (Signal::Cont, "SIGCONT")
        };
        let command = restart::signal_command(signal);
        let command: Vec<&str> = command.iter().map(String::as_str).collect();
        (self
            .exec_within(name, FILES_CONTAINER, &command, SIGNAL_WITHIN)
            .await)
            .map(|_| ())
            .map_err(|why| self.signal_failed(name, what, why))
    }

    /// Ends the kills' waits (teardown).
    pub(super) fn forget_kills(&mut self) {
        for k in self.killed.drain(..) {
            k.held.abort();
        }
    }
}
