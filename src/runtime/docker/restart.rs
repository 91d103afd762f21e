//! A node's restart in the docker runtime: its container stopped and started again
//! (its data stays in the writable layer), its log, exit and stats followed anew.

use super::{DockerRuntime, probe, stats};
use crate::chain::CHAIN_NAME;
use crate::runtime::{NodeEndpoint, Restarted, RuntimeError};
use bollard::query_parameters::StopContainerOptionsBuilder;
use std::time::Duration;
use tokio::time::Instant;

impl DockerRuntime {
    /// Stops and starts the node's container (its data stays in the writable layer),
    /// then reads back its RPC host port, which the engine may have changed.
    pub(super) async fn restart(&mut self, name: &str) -> Result<Restarted, RuntimeError> {
        let unknown = || RuntimeError::UnknownNode { name: name.into() };
        let id = (self.containers.iter())
            .find(|c| c.name == name && c.name != CHAIN_NAME)
            .map(|c| c.id.clone())
            .ok_or_else(unknown)?;
        let endpoint = (self.endpoints.iter())
            .find(|e| e.name == name)
            .cloned()
            .ok_or_else(unknown)?;
        let asked = Instant::now();
        let secs =
            i32::try_from(crate::runtime::RESTART_STOP_DEADLINE.as_secs()).unwrap_or(i32::MAX);
        let stop = StopContainerOptionsBuilder::default().t(secs).build();
        self.docker
            .stop_container(&id, Some(stop))
            .await
            .map_err(Self::err(format!("stopping the container of {name}")))?;
        let stop = asked.elapsed();
        // The exit watcher records the deliberate stop; wait for it (it ends then) and
        // forget it, so the run does not take it for a death.
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.exit_of(name).is_none() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        (self.shared.exited.lock().unwrap_or_else(|e| e.into_inner())).retain(|(n, _)| n != name);
        let since = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i32::try_from(d.as_secs()).unwrap_or(0));
        let started_at = Instant::now();
        self.docker
            .start_container(&id, None)
            .await
            .map_err(Self::err(format!("starting the container of {name} again")))?;
        self.loggers.push(tokio::spawn(probe::follow_log_since(
            self.docker.clone(),
            id.clone(),
            self.log_path(name),
            since,
        )));
        self.watchers.push(tokio::spawn(probe::watch_exit(
            self.docker.clone(),
            id.clone(),
            name.to_string(),
            self.shared.exited.clone(),
        )));
        self.watchers.push(tokio::spawn(stats::follow(
            self.docker.clone(),
            id.clone(),
            name.to_string(),
            self.shared.latest.clone(),
        )));
        let rpc_port = crate::node::driver(endpoint.implementation).ports().rpc;
        let rpc_addr = self.host_addr(&id, rpc_port).await?;
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
}
