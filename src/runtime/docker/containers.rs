//! The runtime's own containers and network: create, start (with the log, exit and
//! stats followers), find their addresses, copy credentials out, and remove them all.

use super::shared::container::DATA;
use super::shared::write_private;
use super::{
    DockerRuntime, RuntimeError, STOP_SECS, Started, cleanup, creds, etcd, probe, spec, stats,
};
use crate::node::NodeEndpoint;
use bollard::models::NetworkCreateRequest;
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, RemoveContainerOptionsBuilder, StopContainerOptionsBuilder,
};
use std::time::Duration;

/// How long a container found exited is waited for, for its status and its log.
const EXIT_SEEN_WITHIN: Duration = Duration::from_secs(3);

impl DockerRuntime {
    pub(super) async fn ensure_network(&mut self) -> Result<String, RuntimeError> {
        if let Some(n) = &self.network {
            return Ok(n.clone());
        }
        let name = self.object_name(None);
        // From here on the engine may hold something of the run, even if this await is
        // cancelled half-way.
        self.clean = false;
        let request = NetworkCreateRequest {
            name: name.clone(),
            driver: Some("bridge".into()),
            labels: Some(self.labels(None)),
            ..Default::default()
        };
        let created = self.docker.create_network(request).await;
        created.map_err(|e| {
            self.not_ours |= cleanup::already_exists(&e);
            Self::err(format!("creating network {name}"))(e)
        })?;
        self.network = Some(name.clone());
        Ok(name)
    }

    /// Creates (not starts) the container of `name`, with a restored snapshot's data
    /// in it when the run has one; remembered at once, so teardown removes it whatever
    /// happens next.
    pub(super) async fn create(
        &mut self,
        name: &str,
        image: &str,
        cmd: Vec<String>,
        ports: &[u16],
    ) -> Result<String, RuntimeError> {
        let network = self.ensure_network().await?;
        let envelope = self.envelope_of(name);
        // Host ports fixed now, so a container stopped or killed and started again
        // (restart and kill faults) answers where the run's clients already connect:
        // the engine picks an "any free" port anew at each start.
        let ports: Vec<(u16, u16)> = (ports.iter())
            .map(|&p| Ok((p, free_loopback_port()?)))
            .collect::<std::io::Result<_>>()
            .map_err(|e| RuntimeError::Io {
                path: self.run_dir.clone(),
                source: std::io::Error::other(format!("choosing a host port: {e}")),
            })?;
        let body = spec::container_body(&spec::ContainerSpec {
            name,
            image,
            cmd,
            ports: &ports,
            network: &network,
            labels: self.labels(Some(name)),
            envelope: envelope.as_ref(),
        });
        let id = self.create_from(name, image, body).await?;
        self.copy_in_restored(name, &id).await?;
        Ok(id)
    }

    /// Creates (not starts) the container of `name` from a body made by
    /// [`spec::container_body`] (with whatever the caller added); remembered at once.
    pub(super) async fn create_from(
        &mut self,
        name: &str,
        image: &str,
        body: bollard::models::ContainerCreateBody,
    ) -> Result<String, RuntimeError> {
        let container_name = self.object_name(Some(name));
        let options = CreateContainerOptionsBuilder::default()
            .name(&container_name)
            .build();
        let created = self.docker.create_container(Some(options), body).await;
        let created = created.map_err(|e| {
            self.not_ours |= cleanup::already_exists(&e);
            Self::err(format!(
                "creating container {container_name} from image {image}"
            ))(e)
        })?;
        self.containers.push(Started {
            name: name.to_string(),
            id: created.id.clone(),
        });
        Ok(created.id)
    }

    /// Starts a created container and its log follower, exit watcher and stats tasks.
    pub(super) async fn start(&mut self, name: &str, id: &str) -> Result<(), RuntimeError> {
        self.docker
            .start_container(id, None)
            .await
            .map_err(Self::err(format!("starting the container of {name}")))?;
        self.loggers.push(tokio::spawn(probe::follow_log(
            self.docker.clone(),
            id.to_string(),
            self.log_path(name),
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
        self.watchers.push(tokio::spawn(stats::watch_size(
            self.docker.clone(),
            id.to_string(),
            name.to_string(),
            self.shared.latest.clone(),
        )));
        Ok(())
    }

    /// `127.0.0.1:<host port>` published for `port` of `name`'s container (`what` in
    /// errors). A container that has exited already has no published port: the error
    /// is then its exit, with its log's last lines, as when it exits while waited for.
    pub(super) async fn host_addr(
        &self,
        what: &str,
        name: &str,
        id: &str,
        port: u16,
    ) -> Result<String, RuntimeError> {
        let info = self
            .docker
            .inspect_container(id, None)
            .await
            .map_err(Self::err("inspecting a container for its ports"))?;
        let running = (info.state.as_ref()).and_then(|s| s.running) != Some(false);
        let host_port = info
            .network_settings
            .and_then(|n| n.ports)
            .and_then(|p| p.get(&format!("{port}/tcp")).cloned().flatten())
            .and_then(|b| b.into_iter().find_map(|b| b.host_port))
            .filter(|p| !p.is_empty());
        match host_port {
            Some(p) => Ok(format!("127.0.0.1:{p}")),
            None if !running => Err(self.exited_before_its_port(what, name).await),
            None => Err(RuntimeError::Io {
                path: self.run_dir.clone(),
                source: std::io::Error::other(format!(
                    "the engine published no host port for container port {port}"
                )),
            }),
        }
    }

    /// The exit of `name`'s container, found before its port was: its status as the
    /// exit watcher records it and its log as the follower writes it, each waited for
    /// a moment (both see the end a little after the engine does).
    async fn exited_before_its_port(&self, what: &str, name: &str) -> RuntimeError {
        let deadline = tokio::time::Instant::now() + EXIT_SEEN_WITHIN;
        let status = loop {
            if let Some(status) = self.exit_of(name) {
                break status;
            }
            if tokio::time::Instant::now() >= deadline {
                break "not running".to_string();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let log = self.log_path(name);
        while tokio::time::Instant::now() < deadline
            && !std::fs::metadata(&log).is_ok_and(|m| m.len() > 0)
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        RuntimeError::exited(what, status, &log)
    }

    /// The container's IP address on the run's network, if the engine tells it.
    pub(super) async fn network_ip(&self, id: &str) -> Option<String> {
        let network = self.network.as_deref()?;
        let info = self.docker.inspect_container(id, None).await.ok()?;
        let networks = info.network_settings?.networks?;
        let ip = networks.get(network)?.ip_address.clone()?;
        (!ip.is_empty()).then_some(ip)
    }

    pub(super) fn exit_of(&self, name: &str) -> Option<String> {
        let exited = self.shared.exited.lock().unwrap_or_else(|e| e.into_inner());
        exited
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s.clone())
    }

    /// Copies a node's credential files out once all exist, into its private
    /// directory. Err (which one) while the node has not written them all yet.
    pub(super) async fn copy_credentials(&self, id: &str, ep: &NodeEndpoint) -> Result<(), String> {
        let driver = crate::node::driver(ep.implementation);
        let files = driver.credential_files();
        let local = ep.credentials.files();
        for (inside, outside) in files.iter().zip(local) {
            let content = creds::download(&self.docker, id, &format!("{DATA}/{inside}"))
                .await
                .map_err(|e| format!("{inside} not readable in its container yet: {e}"))?;
            write_private(outside, &content)
                .map_err(|e| format!("writing {}: {e}", outside.display()))?;
        }
        Ok(())
    }

    /// Stops, saves the logs of, and removes every container, then the network.
    pub(super) async fn remove_all(&mut self) -> Result<(), RuntimeError> {
        for w in self.watchers.drain(..) {
            w.abort();
        }
        let containers = std::mem::take(&mut self.containers);
        // Nodes first (reverse start order): LND can hang while its chain is gone.
        let stop = StopContainerOptionsBuilder::default().t(STOP_SECS).build();
        let nodes: Vec<&Started> = containers
            .iter()
            .rev()
            .filter(|c| !etcd::stops_last(&c.name))
            .collect();
        futures::future::join_all(
            nodes
                .iter()
                .map(|c| self.docker.stop_container(&c.id, Some(stop.clone()))),
        )
        .await;
        for c in containers.iter().filter(|c| etcd::stops_last(&c.name)) {
            let _ = self.docker.stop_container(&c.id, Some(stop.clone())).await;
        }
        // The followers end with their containers; wait briefly for the logs' ends.
        for l in self.loggers.drain(..) {
            let abort = l.abort_handle();
            if tokio::time::timeout(Duration::from_secs(5), l)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
        let mut first_err = None;
        let remove = RemoveContainerOptionsBuilder::default()
            .force(true)
            .v(true)
            .build();
        for c in &containers {
            match self
                .docker
                .remove_container(&c.id, Some(remove.clone()))
                .await
            {
                Ok(()) => {}
                Err(bollard::errors::Error::DockerResponseServerError {
                    status_code: 404, ..
                }) => {}
                Err(source) => {
                    first_err.get_or_insert(RuntimeError::Docker {
                        what: format!("removing the container of {}", c.name),
                        source,
                    });
                }
            }
        }
        // Anything created while a cancelled start was awaiting the engine is not in
        // the list; the run label finds it.
        if !self.not_ours
            && let Err(e) = cleanup::remove_labelled(&self.docker, Some(&self.run_id)).await
        {
            first_err.get_or_insert(e);
        }
        if let Some(network) = self.network.take() {
            match self.docker.remove_network(&network).await {
                Ok(()) => {}
                Err(bollard::errors::Error::DockerResponseServerError {
                    status_code: 404, ..
                }) => {}
                Err(source) => {
                    first_err.get_or_insert(RuntimeError::Docker {
                        what: format!("removing network {network}"),
                        source,
                    });
                }
            }
        }
        self.clean = first_err.is_none();
        first_err.map_or(Ok(()), Err)
    }
}

/// A TCP port free on loopback now (the kernel's choice for a listener, closed at
/// once) and not handed out before by this process. Another program could take it
/// before the engine binds it; the start then fails with the engine's "address
/// already in use".
fn free_loopback_port() -> std::io::Result<u16> {
    static GIVEN: std::sync::Mutex<std::collections::BTreeSet<u16>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    for _ in 0..64 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        if given.insert(port) {
            return Ok(port);
        }
    }
    Err(std::io::Error::other(
        "no free loopback port not given out before",
    ))
}

#[cfg(test)]
mod port_tests {
    /// Ports handed out are distinct and free to bind at once.
    #[test]
    fn free_loopback_ports_differ_and_bind() {
        let ports: Vec<u16> = (0..50)
            .map(|_| super::free_loopback_port().unwrap())
            .collect();
        let distinct: std::collections::BTreeSet<_> = ports.iter().collect();
        assert_eq!(distinct.len(), ports.len(), "{ports:?}");
        for p in &ports[..5] {
            std::net::TcpListener::bind(("127.0.0.1", *p)).expect("free");
        }
    }
}
