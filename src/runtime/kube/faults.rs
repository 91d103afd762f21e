//! A node's kill, start and pause, and the chain's stop and start, in the kubernetes
//! runtime, as signals to the pod's process sent from its `files` container (which
//! shares the pod's process namespace; `restart`). The kubelet starts a killed
//! container again by itself (restartPolicy Always), on the same data volume; to keep
//! it down until its start, the kill (or the chain's clean stop) holds the new
//! container's process frozen (SIGSTOP) as soon as it appears, and the start thaws it
//! (SIGCONT). A pause is SIGSTOP, its end SIGCONT.

use super::objects::FILES_CONTAINER;
use super::restart::{self, Signal};
use super::{KubeRuntime, pods, watch};
use crate::chain::CHAIN_NAME;
use crate::runtime::{NodeEndpoint, RESTART_STOP_DEADLINE, Restarted, RuntimeError};
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// A node (or the chain) killed or stopped and not started yet: the exec that
/// signalled it and waits to freeze the process the kubelet starts next (what it
/// printed, or why not).
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

    /// Signals the process of pod `name` with `command` (a hold command of `restart`),
    /// counting the restart the kubelet makes as asked, so the exit watcher does not
    /// take it for a death. Returns at once: a task of its own waits (at most
    /// `within`) for the new container's process and freezes it.
    fn hold(
        &mut self,
        name: &str,
        command: Vec<String>,
        within: Duration,
    ) -> Result<(), RuntimeError> {
        if self.killed.iter().any(|k| k.name == name) {
            return Err(self.signal_failed(name, "a kill", "it was killed already".into()));
        }
        self.shared.ask_restart(name);
        let held = tokio::spawn(pods::exec_in(
            self.api(),
            name.into(),
            FILES_CONTAINER.into(),
            command,
            within + SIGNAL_WITHIN,
        ));
        self.killed.push(Killed {
            name: name.into(),
            held,
        });
        Ok(())
    }

    /// SIGKILL to the node's process, the next one held frozen until its start.
    pub(super) async fn kill(&mut self, name: &str) -> Result<(), RuntimeError> {
        self.node_endpoint(name)?;
        let within = restart::STARTED_AGAIN_WITHIN;
        self.hold(name, restart::kill_hold_command(within), within)
    }

    /// Thaws the process the kubelet started after the kill (waiting for it if it is
    /// not there yet) and follows its log anew. The way back counts from the thaw.
    pub(super) async fn start_killed(&mut self, name: &str) -> Result<Restarted, RuntimeError> {
        let endpoint = self.node_endpoint(name)?;
        let started_at = self.thaw(name).await?;
        Ok(Restarted {
            stop: Duration::ZERO,
            started_at,
            endpoint,
        })
    }

    /// Kills the chain's process (SIGKILL), or stops it (SIGTERM, SIGKILL at the
    /// restart deadline), and holds the next one frozen until [`Self::start_chain`].
    /// A kill returns at once; a stop once the kubelet has started the container
    /// again (its first restart is at once, later ones back off), with how long the
    /// old process took to be gone.
    pub(super) async fn stop_chain_pod(&mut self, kill: bool) -> Result<Duration, RuntimeError> {
        if !self.pods.iter().any(|p| p == CHAIN_NAME) {
            return Err(RuntimeError::UnknownNode {
                name: CHAIN_NAME.into(),
            });
        }
        let within = restart::STARTED_AGAIN_WITHIN;
        if kill {
            self.hold(CHAIN_NAME, restart::kill_hold_command(within), within)?;
            return Ok(Duration::ZERO);
        }
        let command = restart::stop_hold_command(RESTART_STOP_DEADLINE, within);
        self.hold(CHAIN_NAME, command, RESTART_STOP_DEADLINE + within)?;
        let killed = self.killed.pop().expect("held just now");
        let printed = match killed.held.await {
            Ok(Ok(printed)) => printed,
            Ok(Err(why)) => return Err(self.signal_failed(CHAIN_NAME, "the stop", why)),
            Err(e) => return Err(self.signal_failed(CHAIN_NAME, "the stop", e.to_string())),
        };
        let stop = restart::stopped_in(&printed).unwrap_or_default();
        self.killed.push(Killed {
            name: CHAIN_NAME.into(),
            held: tokio::spawn(async move { Ok(printed) }),
        });
        Ok(stop)
    }

    /// Thaws the chain's process held since [`Self::stop_chain_pod`].
    pub(super) async fn start_chain(&mut self) -> Result<Instant, RuntimeError> {
        self.thaw(CHAIN_NAME).await
    }

    /// Thaws the process the kubelet started after the kill or stop of pod `name`
    /// (waiting for it if it is not there yet) and follows its log anew; when.
    async fn thaw(&mut self, name: &str) -> Result<Instant, RuntimeError> {
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
        self.signal(name, false).await?;
        let log = self.log_path(name);
        (self.loggers).push(tokio::spawn(watch::follow_log(
            self.api(),
            name.into(),
            log,
        )));
        Ok(started_at)
    }

    /// SIGSTOP (or SIGCONT) to the node's process.
    pub(super) async fn pause(&mut self, name: &str, paused: bool) -> Result<(), RuntimeError> {
        self.node_endpoint(name)?;
        self.signal(name, paused).await
    }

    /// SIGSTOP (or SIGCONT) to the process of pod `name`.
    async fn signal(&self, name: &str, paused: bool) -> Result<(), RuntimeError> {
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
