//! Runtimes start the chain backend and the nodes, and tear everything down.
//! `local` runs them as processes of this machine, `docker` as containers of a Docker
//! engine, `kube` as pods of a Kubernetes cluster. All take each one's command line, ports and readiness from its driver
//! (`crate::chain::driver`, `crate::node::driver`), so one scenario gives the same
//! flags wherever it runs; only directories and addresses differ.

mod auto;
pub mod docker;
pub mod external;
pub mod fake;
#[cfg(feature = "kubernetes")]
pub mod kube;
/// Stands in for the kubernetes runtime in a build without the `kubernetes` feature.
#[cfg(not(feature = "kubernetes"))]
#[path = "kube_absent.rs"]
pub mod kube;
pub mod local;
mod registry;
pub mod shared;

use crate::scenario::{ChainSpec, NodeSpec, RuntimeKind};
use async_trait::async_trait;
use std::path::PathBuf;

pub use crate::chain::ChainEndpoint;
pub use crate::node::NodeEndpoint;

pub use registry::{Leftovers, Place, Prepared, Registration};

/// The registered runtime of each kind: adding a runtime is its module plus one line
/// here.
pub fn registration(kind: RuntimeKind) -> &'static Registration {
    match kind {
        RuntimeKind::Auto => &auto::REGISTRATION,
        RuntimeKind::Local => &local::REGISTRATION,
        RuntimeKind::Docker => &docker::REGISTRATION,
        RuntimeKind::Kubernetes => &kube::REGISTRATION,
        RuntimeKind::External => &external::REGISTRATION,
    }
}

/// The places where runs leave objects, in the order `down` looks at them: the
/// cluster first (a missing Docker engine ends `down` with its error).
pub fn leftover_places() -> Vec<&'static Leftovers> {
    [
        RuntimeKind::Kubernetes,
        RuntimeKind::Docker,
        RuntimeKind::Local,
    ]
    .into_iter()
    .filter_map(|kind| registration(kind).leftovers)
    .collect()
}

/// What each runtime declares it can run, which scenario validation asks.
pub fn capabilities(kind: RuntimeKind) -> &'static crate::scenario::Capabilities {
    registration(kind).capabilities
}

/// How long a node being restarted may take to stop before it is killed: longer than
/// teardown's deadline, as the stop time is what a restart measures (LND can take tens
/// of seconds after a long run). Under the Docker client's 120 s request timeout.
pub const RESTART_STOP_DEADLINE: std::time::Duration = std::time::Duration::from_secs(90);

/// A node stopped and started again by [`Runtime::restart_node`].
#[derive(Debug, Clone)]
pub struct Restarted {
    /// From the stop request until the node had exited (or was killed at the deadline).
    pub stop: std::time::Duration,
    /// When the start was requested: RPC and channel readiness count from here.
    pub started_at: tokio::time::Instant,
    /// Where the node answers now (a container's host ports may have changed).
    pub endpoint: NodeEndpoint,
}

/// A Toxiproxy server a runtime started for the run's peer links (`links:`, link
/// faults): its API's socket and the listeners it may give proxies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyHost {
    /// The unix socket of its HTTP API (in a directory only this user can enter).
    pub api: std::path::PathBuf,
    pub ports: Vec<ProxyPort>,
}

/// One listener of the fault proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyPort {
    /// What the proxy binds (`127.0.0.1:<port>`).
    pub listen: String,
    /// What a node dials to reach it.
    pub dial: String,
}

/// A server a runtime started for the nodes (their database: PostgreSQL, etcd), for
/// the report; its resources are read under `name` like a node's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Service {
    pub name: String,
    /// `postgresql`, `etcd`.
    pub implementation: String,
    pub version: String,
}

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// A failure a test double was told to have (the fake runtime).
    #[error("{0}")]
    Scripted(String),
    #[error("no started node named {name} to restart")]
    UnknownNode { name: String },
    #[error(
        "no {binary} binary found for {what}: looked at {looked}; {hint}, or set `binary:` \
         in the scenario"
    )]
    BinaryNotFound {
        binary: String,
        what: String,
        looked: String,
        /// How to build it (the driver's words).
        hint: String,
    },
    #[error(
        "the binary given for {what} ({path}) does not exist or is not executable: fix \
         `binary:` in the scenario, or remove it to use the one `scripts/build-nodes.sh` builds"
    )]
    ExplicitBinaryMissing { what: String, path: PathBuf },
    #[error("cannot start {what} ({binary})")]
    Spawn {
        what: String,
        binary: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{what} did not become ready in {secs} s{}; last lines of its log ({log}):\n{tail}",
        last_look(.why)
    )]
    NotReady {
        what: String,
        secs: u64,
        /// What the last look found (empty when there is nothing to say).
        why: String,
        log: PathBuf,
        tail: String,
    },
    #[error("{what} exited early ({status}); last lines of its log ({log}):\n{tail}")]
    Exited {
        what: String,
        status: String,
        log: PathBuf,
        tail: String,
    },
    #[error(
        "no Docker engine answers ({detail}): start one (e.g. `sudo scripts/start-dockerd.sh`, \
         or `sudo systemctl start docker`), or set `runtime: local` in the scenario"
    )]
    NoEngine { detail: String },
    #[error(
        "no Kubernetes cluster answers ({detail}): bring one up (`sudo scripts/kube-cluster.sh up` \
         makes a local one) and point KUBECONFIG at its kubeconfig, or set another runtime: in \
         the scenario"
    )]
    NoCluster { detail: String },
    #[cfg(feature = "kubernetes")]
    #[error("kubernetes: {what}")]
    Kube {
        what: String,
        #[source]
        source: Box<::kube::Error>,
    },
    #[error("{what} cannot run here: {why}; {hint}")]
    Unsupported {
        what: String,
        why: String,
        hint: String,
    },
    #[error("node {name} could not be restarted: {why}; {hint}")]
    RestartFailed {
        name: String,
        why: String,
        hint: String,
    },
    #[error("cannot create the chain wallet of node {node}")]
    ChainWallet {
        node: String,
        #[source]
        source: crate::chain::ChainError,
    },
    #[error("docker: {what}")]
    Docker {
        what: String,
        #[source]
        source: bollard::errors::Error,
    },
    #[error("no image for {what}: {detail}")]
    Image { what: String, detail: String },
    #[error(transparent)]
    Cgroup(#[from] local::cgroup::CgroupError),
    #[error("run directory {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// How many lines of its log an error shows for what failed to start.
const FAILURE_TAIL_LINES: usize = 30;

impl RuntimeError {
    /// `what` exited (`status`) before it was ready; shows the end of its log.
    pub(crate) fn exited(what: impl Into<String>, status: String, log: &std::path::Path) -> Self {
        RuntimeError::Exited {
            what: what.into(),
            status,
            tail: shared::tail(log, FAILURE_TAIL_LINES),
            log: log.to_path_buf(),
        }
    }

    /// `what` was not ready within `limit`; shows the end of its log.
    pub(crate) fn not_ready(
        what: impl Into<String>,
        limit: std::time::Duration,
        log: &std::path::Path,
    ) -> Self {
        Self::not_ready_because(what, limit, String::new(), log)
    }

    /// [`RuntimeError::not_ready`], with what the last look at it found (`why`).
    pub(crate) fn not_ready_because(
        what: impl Into<String>,
        limit: std::time::Duration,
        why: String,
        log: &std::path::Path,
    ) -> Self {
        RuntimeError::NotReady {
            what: what.into(),
            secs: limit.as_secs(),
            why,
            tail: shared::tail(log, FAILURE_TAIL_LINES),
            log: log.to_path_buf(),
        }
    }
}

fn last_look(why: &str) -> String {
    if why.is_empty() {
        String::new()
    } else {
        format!(" (last look: {why})")
    }
}

/// How long the nodes of a start have to serve their RPC, from when the last was
/// started. Generous: Eclair's JVM took over a minute to start on a loaded 2-core machine.
pub(crate) const NODE_READY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(180);

/// The limit of one look at one node: a server that accepted the connection and does
/// not answer yet must not use up the time of the others.
const LOOK_LIMIT: std::time::Duration = std::time::Duration::from_secs(15);

/// Waits until each of the nodes `0..count` serves, looking every `poll`, for at most
/// `limit` (the runtimes give [`NODE_READY_TIMEOUT`]). `exited(i)` says whether node
/// `i`'s process or container has ended (with its status); `look(i)` whether it
/// serves, or why not yet. The pending nodes are looked at concurrently, each look
/// bounded. `named(i)` gives the node's name and log for the error: the first node
/// still pending at the limit, with what its last look found, or the first that exited.
pub(crate) async fn wait_nodes_ready<F>(
    limit: std::time::Duration,
    count: usize,
    poll: std::time::Duration,
    mut exited: impl FnMut(usize) -> Option<String>,
    look: impl Fn(usize) -> F,
    named: impl Fn(usize) -> (String, PathBuf),
) -> Result<(), RuntimeError>
where
    F: std::future::Future<Output = Result<(), String>>,
{
    let look = &look;
    let deadline = tokio::time::Instant::now() + limit;
    let mut why: Vec<String> = vec![String::new(); count];
    let mut pending: Vec<usize> = (0..count).collect();
    while !pending.is_empty() {
        for &i in &pending {
            if let Some(status) = exited(i) {
                let (name, log) = named(i);
                return Err(RuntimeError::exited(format!("node {name}"), status, &log));
            }
        }
        let looks = pending.iter().map(|&i| async move {
            let outcome = match tokio::time::timeout(LOOK_LIMIT, look(i)).await {
                Ok(outcome) => outcome,
                Err(_) => Err(format!("no answer within {} s", LOOK_LIMIT.as_secs())),
            };
            (i, outcome)
        });
        let mut still = Vec::new();
        for (i, outcome) in futures::future::join_all(looks).await {
            if let Err(e) = outcome {
                why[i] = e;
                still.push(i);
            }
        }
        pending = still;
        if let Some(&i) = pending.first()
            && tokio::time::Instant::now() >= deadline
        {
            let (name, log) = named(i);
            let why = std::mem::take(&mut why[i]);
            return Err(RuntimeError::not_ready_because(
                format!("node {name}"),
                limit,
                why,
                &log,
            ));
        }
        if !pending.is_empty() {
            tokio::time::sleep(poll).await;
        }
    }
    Ok(())
}

/// The runtime's [`Faults`] for `what` (`kill`, `start`, `pause`) on node `name`, or
/// the error saying it cannot signal its nodes.
pub fn node_faults<'a>(
    runtime: &'a mut dyn Runtime,
    name: &str,
    what: &str,
) -> Result<&'a mut dyn Faults, RuntimeError> {
    runtime.faults().ok_or_else(|| RuntimeError::Unsupported {
        what: format!("{what} of node {name}"),
        why: "this runtime cannot signal its nodes".into(),
        hint: "run the scenario with runtime: local".into(),
    })
}

/// The runtime's [`Faults`] for stopping and starting the chain, or the error saying
/// it cannot.
pub fn chain_faults(runtime: &mut dyn Runtime) -> Result<&mut dyn Faults, RuntimeError> {
    let described = runtime.describe();
    runtime.faults().ok_or_else(|| RuntimeError::Unsupported {
        what: "stopping the chain backend and starting it again".into(),
        why: format!("the {described} runtime cannot"),
        hint: "run the scenario with runtime: local or runtime: docker".into(),
    })
}

/// The runtime's [`Starts`] for restarting node `name`, or the error saying its
/// nodes run elsewhere.
pub fn starter<'a>(
    runtime: &'a mut dyn Runtime,
    what: &str,
) -> Result<&'a mut dyn Starts, RuntimeError> {
    let described = runtime.describe();
    runtime.starts().ok_or_else(|| RuntimeError::Unsupported {
        what: what.to_string(),
        why: format!("the {described} runtime starts and stops nothing"),
        hint: "use runtime: local or docker to have the tool run the nodes".into(),
    })
}

/// Starts the fault proxy of [`Servers::start_link_proxy`], or says the runtime
/// starts none.
pub async fn start_link_proxy(
    runtime: &mut dyn Runtime,
    ports: usize,
) -> Result<ProxyHost, RuntimeError> {
    let described = runtime.describe();
    match runtime.servers() {
        Some(servers) => servers.start_link_proxy(ports).await,
        None => Err(RuntimeError::Unsupported {
            what: "links: and link faults".into(),
            why: format!("the {described} runtime starts no fault proxy"),
            hint: "run the scenario with runtime: local".into(),
        }),
    }
}

/// The servers the runtime started for the nodes so far ([`Servers::services`]).
pub fn services(runtime: &mut dyn Runtime) -> Vec<Service> {
    runtime.servers().map_or_else(Vec::new, |s| s.services())
}

/// Creates the chain backend's wallet for a node whose driver keeps its funds there
/// (Eclair), before the node starts; nothing for others.
pub(crate) async fn create_chain_wallet(
    spec: &NodeSpec,
    chain: &ChainEndpoint,
) -> Result<(), RuntimeError> {
    if !crate::node::driver(spec.implementation)
        .chain_needs()
        .wallet
    {
        return Ok(());
    }
    crate::chain::driver(chain.kind)
        .create_wallet(chain, &spec.name)
        .await
        .map_err(|source| RuntimeError::ChainWallet {
            node: spec.name.clone(),
            source,
        })
}

/// Snapshots of a network (`snapshot save`, `--snapshot`): offered by the runtimes
/// that keep their nodes' data on this machine ([`Runtime::snapshots`]).
#[async_trait]
pub trait Snapshots: Send + Sync {
    /// The versions of what a run of `scenario` starts (binaries, images): `chain` and
    /// each node's name to its version, as a snapshot's manifest keeps them.
    async fn versions(
        &self,
        scenario: &crate::scenario::Scenario,
    ) -> Result<std::collections::BTreeMap<String, String>, RuntimeError>;
    /// Where the chain's and the nodes' data directories are under the run directory.
    fn data_root(&self, run_dir: &std::path::Path) -> PathBuf;
    /// The files the runtime writes at every start (with that run's passwords), as
    /// `<name>/<path>`: a snapshot leaves them out.
    fn written_at_start(&self, scenario: &crate::scenario::Scenario) -> Vec<String>;
}

/// Faults on the nodes and the chain a runtime started (`faults:`, `restart: chain`):
/// offered by the runtimes that can signal them ([`Runtime::faults`]).
#[async_trait]
pub trait Faults: Send {
    /// Kills node `name` at once (SIGKILL; a container kill). It stays down until
    /// [`Faults::start_node`]; the kill is not reported by [`Runtime::exited`].
    async fn kill_node(&mut self, name: &str) -> Result<(), RuntimeError>;
    /// Starts a node [`Faults::kill_node`] killed, with the same data and flags.
    /// Returns without waiting for its RPC.
    async fn start_node(&mut self, name: &str) -> Result<Restarted, RuntimeError>;
    /// Pauses node `name` (SIGSTOP to its process group; a container pause), or
    /// resumes it (SIGCONT).
    async fn pause_node(&mut self, name: &str, paused: bool) -> Result<(), RuntimeError>;
    /// Stops the chain backend (SIGKILL when `kill`, else a clean stop with a deadline)
    /// until [`Faults::start_chain_again`], unreported by [`Runtime::exited`].
    async fn stop_chain(&mut self, kill: bool) -> Result<std::time::Duration, RuntimeError>;
    /// Starts the chain [`Faults::stop_chain`] stopped, on its data, ports and
    /// credentials; returns when started, without waiting for its RPC.
    async fn start_chain_again(&mut self) -> Result<tokio::time::Instant, RuntimeError>;
}

/// Readings of the resources of what a runtime started: offered by the runtimes whose
/// nodes this machine can see ([`Runtime::measures`]).
#[async_trait]
pub trait Measures: Send {
    /// Resource use of every started node and the chain now. Called about once a
    /// second during a run.
    async fn resources(&mut self) -> Vec<crate::metrics::ResourceReading>;
    /// Like [`Measures::resources`], with every figure read now (nothing cached, such
    /// as a data-dir size walked a few seconds ago). Called once when the load ends, so
    /// the data-dir growth (and bytes per payment) covers the whole load.
    async fn resources_fresh(&mut self) -> Vec<crate::metrics::ResourceReading> {
        self.resources().await
    }
    /// CPU the runtime's own machinery spent working for the run since the previous
    /// call, percent of one core (the Docker engine: dockerd, containerd, the run's
    /// shims and proxies); `None` where there is none or it cannot be read. Called
    /// beside [`Measures::resources`]; the machine's outside load counts it as the run's.
    async fn engine_cpu_pct(&mut self) -> Option<f64>;
    /// The envelopes (`resources:`) applied, with what the kernel counted against
    /// each so far. Called once when the load ends, before teardown.
    async fn envelopes(&mut self) -> Vec<crate::metrics::EnvelopeReading>;
}

/// The servers a runtime starts beside the nodes: their databases (PostgreSQL, etcd)
/// and the fault proxy of their links ([`Runtime::servers`]).
#[async_trait]
pub trait Servers: Send {
    /// How many members the etcd this runtime starts for nodes on `--db.backend=etcd`
    /// has (`etcd: { members: N }`; 1 unless set). Called before `start_nodes`.
    fn set_etcd_members(&mut self, members: u32);
    /// Starts a Toxiproxy server for the run's peer links, with `ports` listeners for
    /// proxies, and waits until its API answers. It is stopped by `down`.
    async fn start_link_proxy(&mut self, ports: usize) -> Result<ProxyHost, RuntimeError>;
    /// The servers started for the nodes so far, in start order.
    fn services(&self) -> Vec<Service>;
}

/// What profiling asks of a runtime ([`Runtime::profiling`]).
#[async_trait]
pub trait Profiling: Send {
    /// The pid, as this host sees it, of a started node's (or `chain`'s) main process,
    /// for profiling with perf; None when the runtime cannot tell.
    async fn host_pid(&mut self, name: &str) -> Option<u32>;
    /// A free port of this host's loopback that a node may listen on, where the nodes'
    /// loopback is this host's (local processes), so that a listener bound to
    /// 127.0.0.1 (LND's profiling port) is reachable and private; None elsewhere.
    fn loopback_port(&self) -> Option<u16>;
}

/// A teardown that gives each node a deadline and names the nodes it had to kill
/// ([`Runtime::patient_down`]); elsewhere `down` names none.
#[async_trait]
pub trait PatientDown: Send {
    /// What [`Runtime::down`] had to kill because it did not exit on SIGTERM in time.
    fn killed_at_down(&self) -> Vec<String>;
    /// [`Runtime::down`] for a snapshot: each node gets up to `limit` to exit on
    /// SIGTERM (a node with a long history takes tens of seconds); returns the nodes
    /// that had to be killed, whose files a snapshot must not keep.
    async fn down_for_snapshot(
        &mut self,
        limit: std::time::Duration,
    ) -> Result<Vec<String>, RuntimeError>;
}

/// What a runtime that starts the network does: the chain, the nodes, a node again.
/// A runtime whose nodes run elsewhere (`external`) offers none of it.
#[async_trait]
pub trait Starts: Send {
    /// Start the chain backend, mining to `mining_addr`, and wait until its RPC answers.
    async fn start_chain(
        &mut self,
        spec: &ChainSpec,
        mining_addr: &str,
    ) -> Result<ChainEndpoint, RuntimeError>;
    /// Start the nodes against the chain and wait until their credentials exist and
    /// their RPC port accepts connections.
    async fn start_nodes(
        &mut self,
        nodes: &[NodeSpec],
        chain: &ChainEndpoint,
    ) -> Result<Vec<NodeEndpoint>, RuntimeError>;
    /// Stops node `name` as `down` would (SIGTERM or container stop, with a deadline,
    /// then kill), and starts it again with the same data and flags. Returns without
    /// waiting for its RPC. The deliberate stop is not reported by
    /// [`Runtime::exited`].
    async fn restart_node(&mut self, name: &str) -> Result<Restarted, RuntimeError>;
    /// The tool's client of the chain this runtime started, its mining wallet's coins
    /// mature (after `blocks`, a restored chain's, are submitted).
    async fn connect_chain(
        &mut self,
        endpoint: &ChainEndpoint,
        wallet: crate::chain::MiningWallet,
        blocks: &[String],
    ) -> Result<std::sync::Arc<dyn crate::chain::ChainBackend>, crate::chain::ChainError> {
        crate::chain::driver(endpoint.kind)
            .connect_with_blocks(endpoint, wallet, blocks)
            .await
    }
}

/// Starts processes or containers for one run and removes them again.
#[async_trait]
pub trait Runtime: Send {
    /// The last `lines` lines of a node's (or `chain`'s) log, for error messages.
    fn log_tail(&self, name: &str, lines: usize) -> String;
    /// The first started process (node or chain) found to have exited, as
    /// `(name, exit status)`. A run polls this to notice a node that died.
    fn exited(&mut self) -> Option<(String, String)>;
    /// Starting the chain and the nodes; None where they run elsewhere (the run then
    /// reaches them where they are).
    fn starts(&mut self) -> Option<&mut dyn Starts> {
        None
    }

    /// What the report and the live view call this runtime: `local`, or `docker`
    /// with the images used.
    fn describe(&self) -> String {
        "local".into()
    }
    /// Snapshots of this runtime's networks; None where it keeps no data here.
    fn snapshots(&self) -> Option<&'static dyn Snapshots> {
        None
    }
    /// How the tool reaches the nodes this runtime started: each implementation's
    /// driver connects (the fake runtime hands out its in-process nodes).
    fn node_connector(&self) -> std::sync::Arc<dyn crate::node::Connector> {
        std::sync::Arc::new(crate::node::driver::Drivers)
    }
    /// Stop everything this runtime started (nodes first, then the chain), waiting
    /// with a deadline and killing what does not stop. Safe to call more than once.
    async fn down(&mut self) -> Result<(), RuntimeError>;
    /// Faults on its nodes and its chain; None where it cannot signal them.
    fn faults(&mut self) -> Option<&mut dyn Faults> {
        None
    }
    /// The readings of its nodes' resources; None where it cannot read them (they
    /// run elsewhere): the report and the metrics then say "not measured".
    fn measures(&mut self) -> Option<&mut dyn Measures> {
        None
    }
    /// The servers it starts beside the nodes (databases, the fault proxy); None
    /// where it starts none.
    fn servers(&mut self) -> Option<&mut dyn Servers> {
        None
    }
    /// What profiling needs of it; None where it cannot tell.
    fn profiling(&mut self) -> Option<&mut dyn Profiling> {
        None
    }
    /// A teardown with a deadline per node that names the nodes it had to kill; None
    /// where `down` names none.
    fn patient_down(&mut self) -> Option<&mut dyn PatientDown> {
        None
    }
}

#[cfg(test)]
mod tests;
