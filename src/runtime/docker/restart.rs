//! A node's restart, kill, start and pause in the docker runtime: its container
//! stopped or killed and started again (its data stays in the writable layer), its
//! log, exit and stats followed anew; or frozen and thawed. The chain's container is
//! stopped and started the same way (`kill: chain`, `restart: chain`).

use super::{DockerRuntime, probe, stats};
use crate::chain::CHAIN_NAME;
use crate::runtime::{NodeEndpoint, Restarted, RuntimeError};
use bollard::query_parameters::{KillContainerOptionsBuilder, StopContainerOptionsBuilder};
use std::time::Duration;
use tokio::time::Instant;

impl DockerRuntime {
    /// Stops and starts the node's container (its data stays in the writable layer),
    /// then reads back its RPC address.
    pub(super) async fn restart(&mut self, name: &str) -> Result<Restarted, RuntimeError> {
        let (id, endpoint) = self.node_container(name)?;
        let asked = Instant::now();
        let secs =
            i32::try_from(crate::runtime::RESTART_STOP_DEADLINE.as_secs()).unwrap_or(i32::MAX);
        let stop = StopContainerOptionsBuilder::default().t(secs).build();
        self.docker
            .stop_container(&id, Some(stop))
            .await
            .map_err(Self::err(format!("stopping the container of {name}")))?;
        let stop = asked.elapsed();
        self.forget_exit(name).await;
        self.start_again(name, &id, endpoint, stop).await
    }

    /// Kills the node's container at once (SIGKILL); the exit is not taken for a
    /// death of the run.
    pub(super) async fn kill(&mut self, name: &str) -> Result<(), RuntimeError> {
        let (id, _) = self.node_container(name)?;
        let kill = KillContainerOptionsBuilder::default()
            .signal("KILL")
            .build();
        self.docker
            .kill_container(&id, Some(kill))
            .await
            .map_err(Self::err(format!("killing the container of {name}")))?;
        self.forget_exit(name).await;
        Ok(())
    }

    /// Starts a killed node's container again.
    pub(super) async fn start_killed(&mut self, name: &str) -> Result<Restarted, RuntimeError> {
        let (id, endpoint) = self.node_container(name)?;
        self.start_again(name, &id, endpoint, Duration::ZERO).await
    }

    /// Freezes the node's container (the engine's pause: every process in it
    /// stopped), or thaws it.
    pub(super) async fn pause(&mut self, name: &str, paused: bool) -> Result<(), RuntimeError> {
        let (id, _) = self.node_container(name)?;
        let result = if paused {
            self.docker.pause_container(&id).await
        } else {
            self.docker.unpause_container(&id).await
        };
        let what = if paused { "pausing" } else { "resuming" };
        result.map_err(Self::err(format!("{what} the container of {name}")))
    }

    /// The container and endpoint of node `name`.
    fn node_container(&self, name: &str) -> Result<(String, NodeEndpoint), RuntimeError> {
        let unknown = || RuntimeError::UnknownNode { name: name.into() };
        let id = (self.containers.iter())
            .find(|c| c.name == name && c.name != CHAIN_NAME)
            .map(|c| c.id.clone())
            .ok_or_else(unknown)?;
        let endpoint = (self.endpoints.iter())
            .find(|e| e.name == name)
            .cloned()
            .ok_or_else(unknown)?;
        Ok((id, endpoint))
    }

    /// The exit watcher records a deliberate stop or kill; waits for it (it ends
    /// then) and forgets it, so the run does not take it for a death.
    async fn forget_exit(&mut self, name: &str) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.exit_of(name).is_none() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        (self.shared.exited.lock().unwrap_or_else(|e| e.into_inner())).retain(|(n, _)| n != name);
    }

    /// Starts a stopped node container with its log, exit and stats followed anew,
    /// and reads back its RPC address (the same host port: it is fixed at creation).
    async fn start_again(
        &mut self,
        name: &str,
        id: &str,
        endpoint: NodeEndpoint,
        stop: Duration,
    ) -> Result<Restarted, RuntimeError> {
        let started_at = self.start_container_again(name, id).await?;
        let rpc_port = crate::node::driver(endpoint.implementation).ports().rpc;
        let what = format!("node {name}");
        let rpc_addr = self.host_addr(&what, name, id, rpc_port).await?;
        let endpoint = NodeEndpoint {
            rpc_addr,
            ..endpoint
        };
        if let Some(e) = self.endpoints.iter_mut().find(|e| e.name == name) {
            *e = endpoint.clone();
        }
        Ok(Restarted {
            stop,
            started_at,
            endpoint,
        })
    }

    /// Starts a stopped container (a node's or the chain's) with its log, exit and
    /// stats followed anew; returns when the engine started it.
    async fn start_container_again(
        &mut self,
        name: &str,
        id: &str,
    ) -> Result<Instant, RuntimeError> {
        let since = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i32::try_from(d.as_secs()).unwrap_or(0));
        let started_at = Instant::now();
        self.docker
            .start_container(id, None)
            .await
            .map_err(Self::err(format!("starting the container of {name} again")))?;
        self.loggers.push(tokio::spawn(probe::follow_log_since(
            self.docker.clone(),
            id.to_string(),
            self.log_path(name),
            since,
        )));
        self.watchers.push(tokio::spawn(probe::watch_exit(
            self.docker.clone(),
            id.to_string(),
            name.to_string(),
            self.shared.exited.clone(),
        )));
        self.watchers.push(tokio::spawn(stats::follow(
            self.docker.clone(),
            id.to_string(),
            name.to_string(),
            self.shared.latest.clone(),
        )));
        Ok(started_at)
    }

    /// Kills (SIGKILL) or stops (with the restart deadline) the chain's container and
    /// leaves it down; the exit is not taken for a death of the run. Its data stays
    /// in the writable layer, its host ports were fixed at creation.
    pub(super) async fn stop_chain_container(
        &mut self,
        kill: bool,
    ) -> Result<Duration, RuntimeError> {
        let id = self.chain_container()?;
        let asked = Instant::now();
        let result = if kill {
            let kill = KillContainerOptionsBuilder::default()
                .signal("KILL")
                .build();
            self.docker.kill_container(&id, Some(kill)).await
        } else {
            let secs =
                i32::try_from(crate::runtime::RESTART_STOP_DEADLINE.as_secs()).unwrap_or(i32::MAX);
            let stop = StopContainerOptionsBuilder::default().t(secs).build();
            self.docker.stop_container(&id, Some(stop)).await
        };
        result.map_err(Self::err("stopping the chain's container".to_string()))?;
        let took = asked.elapsed();
        self.forget_exit(CHAIN_NAME).await;
        Ok(took)
    }

    /// Starts the chain's container again.
    pub(super) async fn start_chain_container(&mut self) -> Result<Instant, RuntimeError> {
        let id = self.chain_container()?;
        self.start_container_again(CHAIN_NAME, &id).await
    }

    fn chain_container(&self) -> Result<String, RuntimeError> {
        (self.containers.iter())
            .find(|c| c.name == CHAIN_NAME)
            .map(|c| c.id.clone())
            .ok_or_else(|| RuntimeError::UnknownNode {
                name: CHAIN_NAME.into(),
            })
    }
}
