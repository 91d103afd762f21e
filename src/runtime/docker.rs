//! Docker runtime: the chain backend and the nodes in containers of a Docker engine
//! (bollard), one user-defined bridge network per run. Container hostnames are the node
//! names (the chain is `chain`), so peers reach each other at `bob:9735` and nodes reach
//! the chain at `chain:<its RPC port>`; ports and command lines come from the drivers. Ports are published on 127.0.0.1 only, on ephemeral host ports read
//! back by inspect. Node data stays in the container's writable layer (its size is
//! the data-dir size); credentials are copied out into the run directory (0600); each
//! container's log is followed into `<run dir>/<name>.log`. Everything carries the
//! labels `lnbench.run`, `lnbench.scenario`, `lnbench.node`, so `lnbench-tui down`
//! finds what a killed run left.

mod cleanup;
mod containers;
mod creds;
mod engine;
mod envelopes;
pub mod etcd;
pub(crate) mod images;
pub mod postgres;
mod prepare;
mod probe;
mod restart;
pub mod snapshot;
mod spec;
pub mod stats;
pub mod toxiproxy;

// Where the compose files' tests (tests/compose.rs) look for the containers' commands.
pub use super::shared::container::{chain_access, chain_command, node_command};
pub use images::RunImages;

use super::shared::container::{CHAIN_CERT_IN_NODE, DATA};
use super::shared::{self, new_password, write_private};
use super::{ChainEndpoint, NodeEndpoint, Restarted, Runtime, RuntimeError};
use crate::chain::{CHAIN_NAME, ConfigFile};
use crate::metrics::ResourceReading;
use crate::scenario::{Capabilities, ChainSpec, NodeSpec, Scenario, Support};
use async_trait::async_trait;
use bollard::Docker;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// What the docker runtime runs: no fault proxy or node signals in containers yet.
pub const CAPABILITIES: Capabilities = Capabilities {
    name: "docker",
    faults: Support::Runs,
    links: Support::Runs,
    starts_nodes: true,
    settings: None,
    node_sockets: false,
};

pub(super) const REGISTRATION: super::Registration = super::Registration {
    capabilities: &CAPABILITIES,
    prepare: prepare::prepare,
    preflight: prepare::preflight_images,
    leftovers: Some(&LEFTOVERS),
};

/// Containers, networks and volumes labelled with a run, on the engine that answers.
const LEFTOVERS: super::Leftovers = super::Leftovers {
    down: |all, only| Box::pin(async move { cleanup::down_all(all, only).await.map(Some) }),
    not_looked: |e| match e {
        RuntimeError::NoEngine { detail } => Some(format!(
            "no Docker engine answers ({detail}), so no container, network or volume was \
             looked for; start the engine and run `lnbench-tui down` again if docker runs \
             were left behind"
        )),
        _ => None,
    },
    not_checked: None,
};
pub(super) use prepare::prepare_for;

pub const LABEL_RUN: &str = "lnbench.run";
pub const LABEL_SCENARIO: &str = "lnbench.scenario";
pub const LABEL_NODE: &str = "lnbench.node";
/// `<hostname>/<pid>` of the lnbench-tui that created it: `down` leaves the things of a
/// run whose tool still runs on this host alone.
pub const LABEL_OWNER: &str = "lnbench.owner";
/// The uid of the user whose lnbench-tui made it.
pub const LABEL_USER: &str = "lnbench.user";
/// The token whose lock the run's lnbench-tui holds while it lives (see
/// `leftovers::lock`): `down` judges the run by that lock, not by the pid.
pub const LABEL_TOKEN: &str = "lnbench.token";

/// How long the engine may take to answer a ping.
const PING_TIMEOUT: Duration = Duration::from_secs(2);
/// How long the chain backend may take until its RPC serves (generous: it only delays
/// a chain that never serves, and a loaded machine is slow).
const CHAIN_READY_TIMEOUT: Duration = Duration::from_secs(60);
/// Seconds a container gets to stop on SIGTERM before the engine kills it.
const STOP_SECS: i32 = 5;
const POLL: Duration = Duration::from_millis(200);

/// Connects to the engine `DOCKER_HOST` names (else the local socket), checks that it
/// answers within 2 s, and settles on the API version both sides speak.
pub async fn connect() -> Result<Docker, RuntimeError> {
    let no_engine = |detail: String| RuntimeError::NoEngine { detail };
    let docker = Docker::connect_with_defaults().map_err(|e| no_engine(e.to_string()))?;
    match tokio::time::timeout(PING_TIMEOUT, docker.ping()).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => return Err(no_engine(e.to_string())),
        Err(_) => {
            return Err(no_engine(format!(
                "no answer in {} s",
                PING_TIMEOUT.as_secs()
            )));
        }
    }
    tokio::time::timeout(PING_TIMEOUT * 2, docker.negotiate_version())
        .await
        .map_err(|_| no_engine("version negotiation timed out".into()))?
        .map_err(|e| no_engine(e.to_string()))
}

/// Checks the engine and chooses (and, as the pull policy allows, pulls) every image
/// of `scenario`. Returns the connection and the images to run.
pub async fn preflight(scenario: &Scenario) -> Result<(Docker, RunImages), RuntimeError> {
    let docker = connect().await?;
    let (run_images, to_pull) = images::plan(&docker, scenario).await?;
    for image in &to_pull {
        crate::lines::errln!("pulling {image} ...");
        images::pull(&docker, image).await?;
    }
    Ok((docker, run_images))
}

/// A tar archive for [`creds::upload`]: the config files (under [`DATA`]) readable by
/// the owner only, and `extra` as given.
fn config_archive(
    configs: &[ConfigFile],
    extra: &[(&str, &[u8], u32)],
) -> std::io::Result<Vec<u8>> {
    let paths: Vec<String> = configs
        .iter()
        .map(|c| format!("{}/{}", DATA.trim_start_matches('/'), c.path))
        .collect();
    let mut files: Vec<(&str, &[u8], u32)> = paths
        .iter()
        .zip(configs)
        .map(|(p, c)| (p.as_str(), c.content.as_bytes(), 0o600))
        .collect();
    files.extend_from_slice(extra);
    creds::pack(&files)
}

/// One container of the run.
#[derive(Debug)]
struct Started {
    /// Node name, or `chain`.
    name: String,
    id: String,
}

/// What the background tasks share with the runtime. Never locked across an await.
#[derive(Default)]
struct Shared {
    latest: stats::Latest,
    exited: probe::Exits,
    engine: std::sync::Mutex<engine::EngineCpu>,
}

pub struct DockerRuntime {
    docker: Docker,
    run_id: String,
    scenario: String,
    run_dir: PathBuf,
    keep: bool,
    images: RunImages,
    network: Option<String>,
    containers: Vec<Started>,
    shared: Arc<Shared>,
    /// Stats, size and exit watchers: aborted at teardown.
    watchers: Vec<JoinHandle<()>>,
    /// Log followers: they end by themselves when their container stops.
    loggers: Vec<JoinHandle<()>>,
    /// The chain's RPC certificate (PEM), given to every node container, when its RPC
    /// speaks TLS.
    chain_cert: Option<String>,
    /// Every started node's endpoint, to give back (with new ports) on a restart.
    endpoints: Vec<NodeEndpoint>,
    /// True while nothing of the run may exist in the engine: before the first create,
    /// and after a teardown that removed everything. `Drop` sweeps by label otherwise.
    clean: bool,
    /// An object of this run's name existed already (another run has the id): teardown
    /// removes only what this run created, not everything with its run label.
    not_ours: bool,
    /// Members of the etcd started for nodes on `--db.backend=etcd`, and its image once
    /// started.
    etcd_members: u32,
    etcd_image: Option<String>,
    /// The password of etcd's user (its auth is on), once started.
    etcd_password: Option<String>,
    /// The password of PostgreSQL's user (every TCP client needs it), once started.
    postgres_password: Option<String>,
    /// The database servers started for the nodes, for the report.
    services: Vec<super::Service>,
    /// `resources:` of each node and the chain by name (None: not limited), and of
    /// every other container (the database servers).
    envelopes: Vec<(String, Option<crate::scenario::Envelope>)>,
    database_envelope: Option<crate::scenario::Envelope>,
}

impl std::fmt::Debug for DockerRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DockerRuntime")
            .field("run_id", &self.run_id)
            .field("network", &self.network)
            .field("containers", &self.containers)
            .finish_non_exhaustive()
    }
}

impl DockerRuntime {
    /// A runtime for one run; `images` from [`preflight`]. `run_dir` holds logs and
    /// credentials and is removed by `down` unless `keep`.
    pub fn new(
        docker: Docker,
        images: RunImages,
        run_id: &str,
        scenario: &str,
        run_dir: PathBuf,
        keep: bool,
    ) -> DockerRuntime {
        DockerRuntime {
            docker,
            run_id: run_id.to_string(),
            scenario: scenario.to_string(),
            run_dir,
            keep,
            images,
            network: None,
            containers: Vec::new(),
            shared: Arc::default(),
            watchers: Vec::new(),
            loggers: Vec::new(),
            chain_cert: None,
            endpoints: Vec::new(),
            clean: true,
            not_ours: false,
            etcd_members: 1,
            etcd_image: None,
            etcd_password: None,
            postgres_password: None,
            services: Vec::new(),
            envelopes: Vec::new(),
            database_envelope: None,
        }
    }

    fn object_name(&self, suffix: Option<&str>) -> String {
        spec::object_name(&self.run_id, suffix)
    }

    fn labels(&self, node: Option<&str>) -> HashMap<String, String> {
        spec::labels(&self.run_id, &self.scenario, node)
    }

    fn err(what: impl Into<String>) -> impl FnOnce(bollard::errors::Error) -> RuntimeError {
        let what = what.into();
        move |source| RuntimeError::Docker { what, source }
    }

    /// Copies a node's config files and the chain's certificate (if the chain has
    /// one) into its created container, then starts it.
    async fn configure_and_start(
        &mut self,
        name: &str,
        id: &str,
        configs: &[ConfigFile],
        dir: &Path,
    ) -> Result<(), RuntimeError> {
        let cert_path = CHAIN_CERT_IN_NODE.trim_start_matches('/');
        let cert: Vec<(&str, &[u8], u32)> = (self.chain_cert.iter())
            .map(|c| (cert_path, c.as_bytes(), 0o644))
            .collect();
        let archive = config_archive(configs, &cert).map_err(Self::io_err(dir))?;
        creds::upload(&self.docker, id, archive)
            .await
            .map_err(Self::err(format!(
                "copying the config into the container of {name}"
            )))?;
        self.start(name, id).await
    }

    fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> RuntimeError + '_ {
        move |source| RuntimeError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// Where a node's (or the chain's) log is saved.
    fn log_path(&self, name: &str) -> PathBuf {
        self.run_dir.join(format!("{name}.log"))
    }

    /// A private directory in the run dir for a node's credentials.
    fn cred_dir(&self, name: &str) -> Result<PathBuf, RuntimeError> {
        shared::private_dir(&self.run_dir, name)
    }
}

#[async_trait]
impl super::Starts for DockerRuntime {
    async fn start_chain(
        &mut self,
        spec: &ChainSpec,
        mining_addr: &str,
    ) -> Result<ChainEndpoint, RuntimeError> {
        let driver = crate::chain::driver(spec.kind);
        let what = format!("the chain ({})", driver.binary());
        let image = self.images.chain.clone();
        std::fs::create_dir_all(&self.run_dir).map_err(Self::io_err(&self.run_dir))?;
        let dir = self.cred_dir(CHAIN_NAME)?;
        let (user, pass) = ("lnbench".to_string(), new_password());
        let (mut cmd, configs) = chain_command(spec.kind, &user, &pass, mining_addr);
        cmd.extend(spec.args.iter().cloned());
        let ports = driver.ports();
        let id = self.create(CHAIN_NAME, &image, cmd, &[ports.rpc]).await?;
        let archive = config_archive(&configs, &[]).map_err(Self::io_err(&dir))?;
        creds::upload(&self.docker, &id, archive)
            .await
            .map_err(Self::err("copying the config into the chain's container"))?;
        let rpc_cert = if driver.rpc_tls() {
            let (cert, key) = crate::tls::self_signed_pem(&[CHAIN_NAME, "localhost", "127.0.0.1"])
                .map_err(|e| RuntimeError::Io {
                    path: dir.clone(),
                    source: std::io::Error::other(e),
                })?;
            let rpc_cert = dir.join("rpc.cert");
            write_private(&rpc_cert, cert.as_bytes()).map_err(Self::io_err(&rpc_cert))?;
            let archive = creds::pack(&[
                ("data/rpc.cert", cert.as_bytes(), 0o644),
                ("data/rpc.key", key.as_bytes(), 0o600),
            ])
            .map_err(Self::io_err(&dir))?;
            creds::upload(&self.docker, &id, archive)
                .await
                .map_err(Self::err(
                    "copying the RPC certificate into the chain's container",
                ))?;
            self.chain_cert = Some(cert);
            Some(rpc_cert)
        } else {
            None
        };
        self.start(CHAIN_NAME, &id).await?;
        let rpc_addr = self.host_addr(&what, CHAIN_NAME, &id, ports.rpc).await?;
        let stated =
            probe::exec_first_line(&self.docker, &id, &[driver.binary(), "--version"]).await;
        let source = images::source_label(&self.docker, &image).await;
        let version = match (stated.is_empty(), source) {
            (true, _) => format!("{} ({image})", driver.binary()),
            (false, Some(commit)) => format!("{stated} (source {commit}; {image})"),
            (false, None) => format!("{stated} ({image})"),
        };
        let mut access = chain_access(spec.kind, &user, &pass);
        // ldk-server takes the chain's RPC address as an IP socket address only (no
        // host names): nodes get the chain's address on the run's network. A TLS RPC
        // (btcd) keeps the name its certificate carries.
        if !driver.rpc_tls()
            && let Some(ip) = self.network_ip(&id).await
        {
            access.rpc_addr = format!("{ip}:{}", ports.rpc);
        }
        let endpoint = ChainEndpoint {
            kind: spec.kind,
            rpc_addr,
            access,
            rpc_user: user,
            rpc_pass: pass,
            rpc_cert,
            version,
        };

        let deadline = Instant::now() + CHAIN_READY_TIMEOUT;
        loop {
            if let Some(status) = self.exit_of(CHAIN_NAME) {
                return Err(RuntimeError::exited(
                    what,
                    status,
                    &self.log_path(CHAIN_NAME),
                ));
            }
            if driver.ready(&endpoint).await {
                return Ok(endpoint);
            }
            if Instant::now() >= deadline {
                return Err(RuntimeError::not_ready(
                    what,
                    CHAIN_READY_TIMEOUT,
                    &self.log_path(CHAIN_NAME),
                ));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    async fn start_nodes(
        &mut self,
        nodes: &[NodeSpec],
        chain: &ChainEndpoint,
    ) -> Result<Vec<NodeEndpoint>, RuntimeError> {
        let wants_db = shared::postgres::wants;
        if shared::postgres::wanted_by(nodes) {
            self.start_postgres().await?;
        }
        let etcd_members = if shared::etcd::wanted_by(nodes) {
            Some(self.start_etcd().await?)
        } else {
            None
        };
        let mut etcd_nodes = 0;
        // Start all, then wait for all: node start-up is mostly waiting.
        let mut started = Vec::with_capacity(nodes.len());
        for spec in nodes {
            let image = self
                .images
                .node(&spec.name)
                .ok_or_else(|| RuntimeError::Image {
                    what: format!("node {}", spec.name),
                    detail: "no image was chosen for it".into(),
                })?
                .to_string();
            let driver = crate::node::driver(spec.implementation);
            let ports = driver.ports();
            let dir = self.cred_dir(&spec.name)?;
            let (mut cmd, mut configs) =
                node_command(spec.implementation, &spec.name, &chain.access);
            self.add_etcd_config(spec, &mut configs);
            cmd.extend(spec.args.iter().cloned());
            if wants_db(spec) {
                let dsn = self.database_for(&spec.name).await?;
                postgres::point_at(spec.implementation, &dsn, &mut configs)?;
            }
            if let Some((members, backend)) =
                (etcd_members.as_deref()).zip(shared::etcd::backend(spec))
            {
                let host = shared::etcd::host_for(members, etcd_nodes);
                etcd_nodes += 1;
                cmd.extend(backend.args_for(&host, &spec.name));
            }
            super::create_chain_wallet(spec, chain).await?;
            let id = self.create(&spec.name, &image, cmd, &[ports.rpc]).await?;
            self.configure_and_start(&spec.name, &id, &configs, &dir)
                .await?;
            let what = format!("node {}", spec.name);
            let rpc_addr = self.host_addr(&what, &spec.name, &id, ports.rpc).await?;
            // Credential files are copied out flat into the node's private directory.
            let credentials = driver.credentials(&|file| {
                dir.join(std::path::Path::new(file).file_name().unwrap_or_default())
            });
            started.push((
                id,
                NodeEndpoint {
                    name: spec.name.clone(),
                    implementation: spec.implementation,
                    rpc_addr,
                    p2p_addr: format!("{}:{}", spec.name, ports.p2p),
                    credentials,
                    data_dir: dir,
                    binary: PathBuf::from(image),
                    pid: None,
                    payment_engine: spec.payment_engine,
                },
            ));
        }

        let this = &*self;
        let started_ref = &started;
        super::wait_nodes_ready(
            super::NODE_READY_TIMEOUT,
            started.len(),
            POLL,
            |i| this.exit_of(&started_ref[i].1.name),
            |i| async move {
                let (id, ep) = &started_ref[i];
                this.copy_credentials(id, ep).await?;
                crate::node::driver(ep.implementation).ready(ep).await
            },
            |i| {
                let name = started_ref[i].1.name.clone();
                let log = this.log_path(&name);
                (name, log)
            },
        )
        .await?;
        let endpoints: Vec<NodeEndpoint> = started.into_iter().map(|(_, ep)| ep).collect();
        self.endpoints.extend(endpoints.iter().cloned());
        Ok(endpoints)
    }

    /// Stops and starts the node's container (its data stays in the writable layer),
    /// then reads back its RPC host port, which the engine may have changed.
    async fn restart_node(&mut self, name: &str) -> Result<Restarted, RuntimeError> {
        self.restart(name).await
    }
}

#[async_trait]
impl Runtime for DockerRuntime {
    fn starts(&mut self) -> Option<&mut dyn super::Starts> {
        Some(self)
    }

    fn log_tail(&self, name: &str, lines: usize) -> String {
        shared::tail(&self.log_path(name), lines)
    }

    fn exited(&mut self) -> Option<(String, String)> {
        let exited = self.shared.exited.lock().unwrap_or_else(|e| e.into_inner());
        exited.first().cloned()
    }

    fn snapshots(&self) -> Option<&'static dyn super::Snapshots> {
        Some(&snapshot::DockerSnapshots)
    }

    fn describe(&self) -> String {
        format!("docker ({})", self.images.names(self.etcd_image.as_deref()))
    }

    async fn down(&mut self) -> Result<(), RuntimeError> {
        let removed = self.remove_all().await;
        if !self.keep {
            shared::remove_run_dir(&self.run_dir).await?;
        }
        removed
    }

    fn faults(&mut self) -> Option<&mut dyn super::Faults> {
        Some(self)
    }

    fn measures(&mut self) -> Option<&mut dyn super::Measures> {
        Some(self)
    }

    fn servers(&mut self) -> Option<&mut dyn super::Servers> {
        Some(self)
    }

    fn profiling(&mut self) -> Option<&mut dyn super::Profiling> {
        Some(self)
    }

    fn patient_down(&mut self) -> Option<&mut dyn super::PatientDown> {
        Some(self)
    }
}

#[async_trait]
impl super::Faults for DockerRuntime {
    async fn kill_node(&mut self, name: &str) -> Result<(), RuntimeError> {
        self.kill(name).await
    }

    async fn start_node(&mut self, name: &str) -> Result<Restarted, RuntimeError> {
        self.start_killed(name).await
    }

    async fn pause_node(&mut self, name: &str, paused: bool) -> Result<(), RuntimeError> {
        self.pause(name, paused).await
    }

    async fn stop_chain(&mut self, kill: bool) -> Result<Duration, RuntimeError> {
        self.stop_chain_container(kill).await
    }

    async fn start_chain_again(&mut self) -> Result<Instant, RuntimeError> {
        self.start_chain_container().await
    }
}

#[async_trait]
impl super::Measures for DockerRuntime {
    async fn resources(&mut self) -> Vec<ResourceReading> {
        let latest = self.shared.latest.lock().unwrap_or_else(|e| e.into_inner());
        self.containers
            .iter()
            .filter_map(|c| latest.get(&c.name).cloned())
            .collect()
    }

    /// dockerd, containerd and the run's shims and proxies, from `/proc` (see [`engine`]).
    async fn engine_cpu_pct(&mut self) -> Option<f64> {
        self.engine_cpu().await
    }

    async fn envelopes(&mut self) -> Vec<crate::metrics::EnvelopeReading> {
        self.envelope_readings().await
    }
}

#[async_trait]
impl super::Servers for DockerRuntime {
    async fn start_link_proxy(&mut self, ports: usize) -> Result<super::ProxyHost, RuntimeError> {
        self.start_toxiproxy(ports).await
    }

    fn set_etcd_members(&mut self, members: u32) {
        self.etcd_members = members.max(1);
    }

    fn services(&self) -> Vec<super::Service> {
        self.services.clone()
    }
}

#[async_trait]
impl super::Profiling for DockerRuntime {
    /// The container's main process as the host sees it (the engine's `State.Pid`).
    async fn host_pid(&mut self, name: &str) -> Option<u32> {
        let id = &self.containers.iter().find(|c| c.name == name)?.id;
        let info = self.docker.inspect_container(id, None).await.ok()?;
        let pid = info.state?.pid?;
        u32::try_from(pid).ok().filter(|&p| p > 0)
    }

    /// A container's loopback is its own.
    fn loopback_port(&self) -> Option<u16> {
        None
    }
}

#[async_trait]
impl super::PatientDown for DockerRuntime {
    async fn down_for_snapshot(&mut self, limit: Duration) -> Result<Vec<String>, RuntimeError> {
        let kept = self.stop_and_copy_out(limit).await;
        let down = self.down().await;
        let killed = kept?;
        down.map(|()| killed)
    }

    /// The engine kills what does not stop in time and does not say.
    fn killed_at_down(&self) -> Vec<String> {
        Vec::new()
    }
}

impl Drop for DockerRuntime {
    /// A backstop for panics and early returns, which skip `down`: remove the run's
    /// containers and network from a thread of its own (Drop cannot await).
    fn drop(&mut self) {
        for w in self.watchers.drain(..).chain(self.loggers.drain(..)) {
            w.abort();
        }
        if self.clean {
            return;
        }
        self.containers.clear();
        self.network = None;
        if !self.not_ours {
            cleanup::remove_run_blocking(self.run_id.clone(), Duration::from_secs(30));
        }
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.run_dir);
        }
    }
}
