//! A node's kill, start and pause in the kubernetes runtime, as signals to its process
//! sent from the pod's `files` container (which shares the pod's process namespace;
//! `restart`). A killed node's container is started again by the kubelet by itself
//! (restartPolicy Always), on the same data volume, at once for its first restart:
//! `start_node` waits for that start and times the way back from it. A pause is
//! SIGSTOP, its end SIGCONT, to the node's process.

use super::objects::FILES_CONTAINER;
use super::restart::{self, Signal};
use super::{KubeRuntime, POLL, kube_err, watch};
use crate::runtime::{NodeEndpoint, Restarted, RuntimeError};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use std::time::Duration;
use tokio::time::Instant;

/// A node killed and not started yet: its restart count before the kill, and when.
#[derive(Debug, Clone)]
pub struct Killed {
    pub name: String,
    pub restarts_before: i32,
    pub at: Instant,
}

impl KubeRuntime {
    fn node_endpoint(&self, name: &str) -> Result<NodeEndpoint, RuntimeError> {
        (self.endpoints.iter())
            .find(|e| e.name == name)
            .cloned()
            .ok_or_else(|| RuntimeError::UnknownNode { name: name.into() })
    }

    /// The node container's restart count and, when it runs, since when (the
    /// kubelet's time, to the second).
    async fn node_state(
        &self,
        name: &str,
    ) -> Result<(i32, Option<k8s_openapi::jiff::Timestamp>), RuntimeError> {
        let pods: Api<Pod> = self.api();
        let pod = (pods.get(name).await).map_err(kube_err(format!("reading pod {name}")))?;
        let status = watch::node_status(&pod);
        let running = (status.and_then(|c| c.state.as_ref()))
            .and_then(|s| s.running.as_ref())
            .and_then(|r| r.started_at.as_ref())
            .map(|t| t.0);
        Ok((status.map_or(0, |c| c.restart_count), running))
    }

    /// Sends `signal` to node `name`'s process from its pod's files container.
    async fn signal(&self, name: &str, signal: Signal) -> Result<(), RuntimeError> {
        let command = restart::signal_command(signal);
        let command: Vec<&str> = command.iter().map(String::as_str).collect();
        let limit = Duration::from_secs(15);
        (self.exec_within(name, FILES_CONTAINER, &command, limit).await)
            .map(|_| ())
            .map_err(|why| RuntimeError::RestartFailed {
                name: name.into(),
                why: format!("its process could not be signalled ({signal:?}) from the pod's files container ({why})"),
                hint: format!(
                    "look at the pod: kubectl -n {} describe pod {name}",
                    self.namespace
                ),
            })
    }

    /// SIGKILL to the node's process. The restart that follows is counted as asked
    /// first, so the exit watcher does not take it for a death.
    pub(super) async fn kill(&mut self, name: &str) -> Result<(), RuntimeError> {
        self.node_endpoint(name)?;
        let (restarts_before, _) = self.node_state(name).await?;
        self.shared.ask_restart(name);
        let at = Instant::now();
        if let Err(e) = self.signal(name, Signal::Kill).await {
            self.shared.forget_restart(name);
            return Err(e);
        }
        self.killed.retain(|k| k.name != name);
        self.killed.push(Killed {
            name: name.into(),
            restarts_before,
            at,
        });
        Ok(())
    }

    /// Waits until the kubelet has started the killed node's container again (it
    /// does so by itself) and follows its log anew. `started_at` is when that
    /// container started, to the kubelet's second, and never before the kill.
    pub(super) async fn start_killed(&mut self, name: &str) -> Result<Restarted, RuntimeError> {
        let endpoint = self.node_endpoint(name)?;
        let killed = (self.killed.iter().find(|k| k.name == name).cloned()).ok_or_else(|| {
            RuntimeError::RestartFailed {
                name: name.into(),
                why: "it was not killed".into(),
                hint: "a start follows a kill fault".into(),
            }
        })?;
        let log = self.log_path(name);
        let waiting = Instant::now();
        let started = loop {
            let (restarts, running) = self.node_state(name).await?;
            if restarts > killed.restarts_before
                && let Some(since) = running
            {
                break since;
            }
            if let Some(status) = self.shared.exit_of(name) {
                return Err(RuntimeError::exited(format!("node {name}"), status, &log));
            }
            if waiting.elapsed() >= restart::STARTED_AGAIN_WITHIN {
                return Err(RuntimeError::not_ready(
                    format!("node {name}, started again by the kubelet,"),
                    restart::STARTED_AGAIN_WITHIN,
                    &log,
                ));
            }
            tokio::time::sleep(POLL).await;
        };
        self.killed.retain(|k| k.name != name);
        let ago = since_ms(started).unwrap_or(0);
        let started_at = Instant::now()
            .checked_sub(Duration::from_millis(ago))
            .map_or(killed.at, |t| t.max(killed.at));
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
        let signal = if paused { Signal::Stop } else { Signal::Cont };
        self.signal(name, signal).await
    }
}

/// Milliseconds from `t` until now on this machine's clock; None when `t` is later.
fn since_ms(t: k8s_openapi::jiff::Timestamp) -> Option<u64> {
    let now = k8s_openapi::jiff::Timestamp::now().as_millisecond();
    u64::try_from(now - t.as_millisecond()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_in_the_past_is_counted_back_and_one_in_the_future_is_not() {
        let now = k8s_openapi::jiff::Timestamp::now();
        let earlier = now - k8s_openapi::jiff::SignedDuration::from_secs(3);
        let ago = since_ms(earlier).expect("in the past");
        assert!((3000..60_000).contains(&ago), "{ago}");
        let later = now + k8s_openapi::jiff::SignedDuration::from_secs(3600);
        assert_eq!(since_ms(later), None);
    }
}
