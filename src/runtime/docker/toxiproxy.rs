//! The fault proxy of a docker run (`links:`, link faults): Toxiproxy's server
//! (toxiproxy-unix, in `lnbench/toxiproxy`, built FROM scratch by
//! scripts/build-images.sh) in a container of the run's network with alias
//! `toxiproxy`. Its API is a unix socket in `<run dir>/toxiproxy/api/` (0700), the one
//! directory mounted into the container, which runs as this user: only this user can
//! change the run's proxies, and no API port is published. Nodes dial the proxies at
//! `toxiproxy:<port>` on the run's network; nothing else goes through it.

use super::spec::{self, ContainerSpec};
use super::{DockerRuntime, RuntimeError};
use crate::runtime::shared::proxy::{WHAT, api_socket};
use crate::runtime::{ProxyHost, ProxyPort, Service};
use std::time::Duration;
use tokio::time::Instant;

pub use crate::runtime::shared::proxy::IMAGE;
/// Its name in the run (container alias, directory, resources, services).
pub const NAME: &str = "toxiproxy";
/// Where the API directory is mounted in the container.
const API_IN_CONTAINER: &str = "/api";
/// The first proxy's port in the container; one port per directed link after it.
const FIRST_PORT: u16 = 20000;
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// What the container runs as: this process's user and group, so the server accepts
/// the mounted directory (it must be owned by its user) and the socket is this user's.
fn user() -> String {
    format!("{}:{}", nix::unistd::getuid(), nix::unistd::getgid())
}

impl DockerRuntime {
    /// Starts the proxy's container with `count` listeners and waits until its API
    /// answers through the mounted socket.
    pub(super) async fn start_toxiproxy(
        &mut self,
        count: usize,
    ) -> Result<ProxyHost, RuntimeError> {
        let dir = self.cred_dir(NAME)?;
        let api = api_socket(&dir)?;
        let api_dir = api.parent().unwrap_or(&dir).display().to_string();
        let network = self.ensure_network().await?;
        let mut body = spec::container_body(&ContainerSpec {
            name: NAME,
            image: IMAGE,
            cmd: vec!["-socket".into(), format!("{API_IN_CONTAINER}/api.sock")],
            ports: &[],
            network: &network,
            labels: self.labels(Some(NAME)),
            envelope: None,
        });
        body.user = Some(user());
        if let Some(host) = body.host_config.as_mut() {
            host.binds = Some(vec![format!("{api_dir}:{API_IN_CONTAINER}")]);
        }
        let id = self.create_from(NAME, IMAGE, body).await?;
        self.start(NAME, &id).await?;
        let client = crate::links::toxiproxy::Toxiproxy::new(&api).map_err(|e| {
            RuntimeError::Unsupported {
                what: WHAT.into(),
                why: format!("{e:#}"),
                hint: "report this".into(),
            }
        })?;
        let deadline = Instant::now() + READY_TIMEOUT;
        while !client.answers().await {
            if let Some(status) = self.exit_of(NAME) {
                return Err(RuntimeError::exited(WHAT, status, &self.log_path(NAME)));
            }
            if Instant::now() >= deadline {
                return Err(RuntimeError::not_ready(
                    WHAT,
                    READY_TIMEOUT,
                    &self.log_path(NAME),
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        self.services.push(Service {
            name: NAME.into(),
            implementation: NAME.into(),
            version: IMAGE.rsplit(':').next().unwrap_or_default().into(),
        });
        Ok(ProxyHost {
            api,
            ports: (FIRST_PORT..)
                .take(count)
                .map(|p| ProxyPort {
                    listen: format!("0.0.0.0:{p}"),
                    dial: format!("{NAME}:{p}"),
                })
                .collect(),
        })
    }
}
