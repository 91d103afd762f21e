//! Kubernetes runtime: the chain backend and the nodes as pods of a cluster a
//! kubeconfig names (kube-rs), in a namespace of the run's own. Each pod runs the same
//! image and command line as the docker runtime's container (`objects`), with a
//! ClusterIP Service in front: nodes reach the chain and each other at Service
//! addresses (no cluster DNS is needed). The tool reaches RPC ports from outside the
//! cluster by port-forwarding through the API server (`forward`), reads the
//! credentials the nodes write through a small reader container in the pod (exec;
//! each pod's objects, forwards and execs are `pods`),
//! follows logs into `<run dir>/<name>.log`, and reads CPU, memory, network and the
//! data volume's size from the kubelet's summary API (`watch`). Teardown deletes the
//! node pods, then the namespace, and waits until it is gone; the namespace carries
//! the run id, owner and user, so `lnbench-tui down` finds what a killed run left.
//! A restart stops the node's process from inside its pod and lets the kubelet start
//! its container again on the same data (`restart`); a kill and a pause signal it
//! from there too (`faults`). Links go through a Toxiproxy pod (`toxiproxy`).

mod cleanup;
mod cluster;
mod faults;
mod forward;
pub mod objects;
mod pods;
mod restart;
mod toxiproxy;
mod watch;

pub use cluster::{Prepared, configured, connect, preflight};

use super::shared::container::{chain_access, chain_command, node_command};
use super::shared::images::RunImages;
use super::shared::{self, new_password, write_private};
use super::{ChainEndpoint, NodeEndpoint, ProxyHost, Restarted, Runtime, RuntimeError, Service};
use crate::chain::{CHAIN_NAME, ConfigFile};
use crate::metrics::ResourceReading;
use crate::scenario::{Capabilities, ChainSpec, KubeSettings, NodeSpec, Support};
use async_trait::async_trait;
use k8s_openapi::api::core::v1::{Namespace, Pod, ServiceAccount};
use kube::Api;
use kube::api::{DeleteParams, ListParams, PostParams};
use objects::{FILES_CONTAINER, NODE_CONTAINER};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// What the kubernetes runtime runs: node faults as signals in the pods, links through
/// a Toxiproxy pod.
pub const CAPABILITIES: Capabilities = Capabilities {
    name: "kubernetes",
    faults: Support::Runs,
    links: Support::Runs,
    starts_nodes: true,
    settings: Some("kubernetes"),
    node_sockets: false,
};

pub(super) const REGISTRATION: super::Registration = super::Registration {
    capabilities: &CAPABILITIES,
    prepare: cluster::prepare,
    preflight: super::registry::no_preflight,
    leftovers: Some(&LEFTOVERS),
};

/// Namespaces labelled with a run, on the cluster the kubeconfig names.
const LEFTOVERS: super::Leftovers = super::Leftovers {
    down: |all, only| Box::pin(cleanup::down_all(all, only)),
    not_looked: |e| match e {
        RuntimeError::NoCluster { detail } => Some(format!(
            "no Kubernetes cluster answers ({detail}), so no namespace was looked for"
        )),
        _ => None,
    },
    not_checked: Some("kubernetes namespaces"),
};

/// Pods are scheduled and their containers created before the daemons start: more
/// than the docker runtime's waits.
const CHAIN_READY_TIMEOUT: Duration = Duration::from_secs(120);
const POLL: Duration = Duration::from_millis(250);
/// One exec (a credential file read, a version) at most.
const EXEC_TIMEOUT: Duration = Duration::from_secs(15);

fn kube_err(what: impl Into<String>) -> impl FnOnce(kube::Error) -> RuntimeError {
    let what = what.into();
    move |source| RuntimeError::Kube {
        what,
        source: Box::new(source),
    }
}

pub struct KubeRuntime {
    client: kube::Client,
    cluster: String,
    images: RunImages,
    settings: KubeSettings,
    pull: &'static str,
    run_id: String,
    scenario: String,
    run_dir: PathBuf,
    keep: bool,
    namespace: String,
    /// True while nothing of the run may exist on the cluster: before the namespace
    /// is created, and after a teardown that removed it. `Drop` deletes it otherwise.
    clean: bool,
    /// Pods started, in start order (the chain first).
    pods: Vec<String>,
    /// The nodes started, as `start_nodes` returned them.
    endpoints: Vec<NodeEndpoint>,
    shared: Arc<watch::Shared>,
    poller: Option<JoinHandle<()>>,
    forwards: Vec<JoinHandle<()>>,
    loggers: Vec<JoinHandle<()>>,
    /// The chain's RPC certificate (PEM), given to every node, when its RPC speaks TLS.
    chain_cert: Option<String>,
    /// `resources:` of each node and the chain, by name.
    envelopes: Vec<(String, crate::scenario::Envelope)>,
    /// Nodes (or the chain) killed or stopped and not started yet.
    killed: Vec<faults::Killed>,
    /// The fault proxy, once started.
    services: Vec<Service>,
}

impl std::fmt::Debug for KubeRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeRuntime")
            .field("namespace", &self.namespace)
            .field("pods", &self.pods)
            .finish_non_exhaustive()
    }
}

impl KubeRuntime {
    pub fn new(
        prepared: Prepared,
        run_id: &str,
        scenario: &str,
        run_dir: PathBuf,
        keep: bool,
    ) -> KubeRuntime {
        KubeRuntime {
            client: prepared.client,
            cluster: prepared.cluster,
            images: prepared.images,
            settings: prepared.settings,
            pull: prepared.pull,
            envelopes: prepared.envelopes,
            run_id: run_id.to_string(),
            scenario: scenario.to_string(),
            run_dir,
            keep,
            namespace: objects::namespace_for(run_id),
            clean: true,
            pods: Vec::new(),
            endpoints: Vec::new(),
            shared: Arc::default(),
            poller: None,
            forwards: Vec::new(),
            loggers: Vec::new(),
            chain_cert: None,
            killed: Vec::new(),
            services: Vec::new(),
        }
    }

    fn api<K>(&self) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        <K as kube::Resource>::DynamicType: Default,
    {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> RuntimeError + '_ {
        move |source| RuntimeError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    fn log_path(&self, name: &str) -> PathBuf {
        self.run_dir.join(format!("{name}.log"))
    }

    /// A private directory in the run dir for a node's credentials.
    fn cred_dir(&self, name: &str) -> Result<PathBuf, RuntimeError> {
        shared::private_dir(&self.run_dir, name)
    }

    /// Creates the run's namespace (once), waits for its default service account
    /// (pods are refused before it exists) and starts the poller.
    async fn ensure_namespace(&mut self) -> Result<(), RuntimeError> {
        if self.poller.is_some() {
            return Ok(());
        }
        // From here on the cluster may hold something of the run.
        self.clean = false;
        let owner = crate::leftovers::owner();
        let token = crate::leftovers::lock::token();
        let ns = objects::namespace(
            &self.namespace,
            &objects::Owner {
                run_id: &self.run_id,
                scenario: &self.scenario,
                owner: &owner,
                token: token.as_deref(),
                uid: crate::leftovers::uid(),
            },
        );
        let created = Api::<Namespace>::all(self.client.clone())
            .create(&PostParams::default(), &ns)
            .await;
        if let Err(e) = created {
            // Another run's namespace: nothing of this run is on the cluster, and
            // teardown must not delete what is there.
            self.clean = cleanup::already_exists(&e);
            return Err(kube_err(format!("creating namespace {}", self.namespace))(
                e,
            ));
        }
        let accounts: Api<ServiceAccount> = self.api();
        let deadline = Instant::now() + Duration::from_secs(60);
        while !matches!(accounts.get_opt("default").await, Ok(Some(_))) {
            if Instant::now() >= deadline {
                return Err(RuntimeError::Unsupported {
                    what: format!("namespace {}", self.namespace),
                    why: "its default service account did not appear within 60 s".into(),
                    hint: "is the cluster's controller manager running?".into(),
                });
            }
            tokio::time::sleep(POLL).await;
        }
        self.poller = Some(tokio::spawn(watch::poll(
            self.client.clone(),
            self.namespace.clone(),
            self.run_id.clone(),
            self.shared.clone(),
        )));
        Ok(())
    }

    /// Deletes the node pods (the chain's last: LND can hang while its chain is gone),
    /// then the namespace, and waits until it is gone.
    async fn remove_all(&mut self) -> Result<(), RuntimeError> {
        self.forget_kills();
        for task in self.forwards.drain(..).chain(self.poller.take()) {
            task.abort();
        }
        if self.clean {
            return Ok(());
        }
        let pods: Api<Pod> = self.api();
        let nodes = ListParams::default().labels(&format!(
            "{}={},{}!={CHAIN_NAME}",
            objects::LABEL_RUN,
            objects::label_value(&self.run_id),
            objects::LABEL_NODE
        ));
        let grace = DeleteParams {
            grace_period_seconds: Some(objects::GRACE_SECS as u32),
            ..DeleteParams::background()
        };
        if pods.delete_collection(&grace, &nodes).await.is_ok() {
            let deadline = Instant::now() + Duration::from_secs(30);
            while Instant::now() < deadline
                && pods.list(&nodes).await.is_ok_and(|l| !l.items.is_empty())
            {
                tokio::time::sleep(POLL).await;
            }
        }
        for logger in self.loggers.drain(..) {
            let abort = logger.abort_handle();
            if tokio::time::timeout(Duration::from_secs(5), logger)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
        cleanup::delete_namespace(&self.client, &self.namespace, cleanup::GONE_WITHIN).await?;
        self.clean = true;
        Ok(())
    }
}

#[async_trait]
impl super::Starts for KubeRuntime {
    async fn start_chain(
        &mut self,
        spec: &ChainSpec,
        mining_addr: &str,
    ) -> Result<ChainEndpoint, RuntimeError> {
        let driver = crate::chain::driver(spec.kind);
        let what = format!("the chain ({})", driver.binary());
        std::fs::create_dir_all(&self.run_dir).map_err(Self::io_err(&self.run_dir))?;
        let dir = self.cred_dir(CHAIN_NAME)?;
        self.ensure_namespace().await?;
        let ports = driver.ports();
        let mut listen = vec![ports.rpc, ports.p2p];
        listen.extend(ports.zmq.iter().flat_map(|&(b, t)| [b, t]));
        let ip = self.service(CHAIN_NAME, &listen).await?;
        let (user, pass) = ("lnbench".to_string(), new_password());
        let (mut args, mut files) = chain_command(spec.kind, &user, &pass, mining_addr);
        args.extend(spec.args.iter().cloned());
        let rpc_cert = if driver.rpc_tls() {
            let (cert, key) =
                crate::tls::self_signed_pem(&[CHAIN_NAME, "localhost", "127.0.0.1", &ip]).map_err(
                    |e| RuntimeError::Io {
                        path: dir.clone(),
                        source: std::io::Error::other(e),
                    },
                )?;
            let rpc_cert = dir.join("rpc.cert");
            write_private(&rpc_cert, cert.as_bytes()).map_err(Self::io_err(&rpc_cert))?;
            files.push(ConfigFile {
                path: "rpc.cert",
                content: cert.clone(),
            });
            files.push(ConfigFile {
                path: "rpc.key",
                content: key,
            });
            self.chain_cert = Some(cert);
            Some(rpc_cert)
        } else {
            None
        };
        let image = self.images.chain.clone();
        self.pod(CHAIN_NAME, &image, &args, &listen, &files).await?;
        let rpc_addr = self.forward(CHAIN_NAME, ports.rpc).await?;
        let mut access = chain_access(spec.kind, &user, &pass);
        access.rpc_addr = format!("{ip}:{}", ports.rpc);
        access.zmq_block = ports.zmq.map(|(b, _)| format!("tcp://{ip}:{b}"));
        access.zmq_tx = ports.zmq.map(|(_, t)| format!("tcp://{ip}:{t}"));
        let mut endpoint = ChainEndpoint {
            kind: spec.kind,
            rpc_addr,
            access,
            rpc_user: user,
            rpc_pass: pass,
            rpc_cert,
            version: format!("{} ({image})", driver.binary()),
        };
        let deadline = Instant::now() + CHAIN_READY_TIMEOUT;
        loop {
            if let Some(status) = self.shared.exit_of(CHAIN_NAME) {
                return Err(RuntimeError::exited(
                    what,
                    status,
                    &self.log_path(CHAIN_NAME),
                ));
            }
            if driver.ready(&endpoint).await {
                break;
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
        if let Some(out) = self
            .exec(CHAIN_NAME, NODE_CONTAINER, &[driver.binary(), "--version"])
            .await
        {
            let text = String::from_utf8_lossy(&out);
            if let Some(line) = text.lines().next().filter(|l| !l.trim().is_empty()) {
                endpoint.version = format!("{} ({image})", line.trim());
            }
        }
        Ok(endpoint)
    }

    async fn start_nodes(
        &mut self,
        nodes: &[NodeSpec],
        chain: &ChainEndpoint,
    ) -> Result<Vec<NodeEndpoint>, RuntimeError> {
        self.ensure_namespace().await?;
        let mut started = Vec::with_capacity(nodes.len());
        let mut written = Vec::with_capacity(nodes.len());
        for spec in nodes {
            let image = (self.images.node(&spec.name))
                .ok_or_else(|| RuntimeError::Image {
                    what: format!("node {}", spec.name),
                    detail: "no image was chosen for it".into(),
                })?
                .to_string();
            let driver = crate::node::driver(spec.implementation);
            let ports = driver.ports();
            let dir = self.cred_dir(&spec.name)?;
            let (mut args, mut files) =
                node_command(spec.implementation, &spec.name, &chain.access);
            args.extend(spec.args.iter().cloned());
            if let Some(cert) = &self.chain_cert {
                files.push(ConfigFile {
                    path: "chain-rpc.cert",
                    content: cert.clone(),
                });
            }
            super::create_chain_wallet(spec, chain).await?;
            let listen = [ports.rpc, ports.p2p];
            let ip = self.service(&spec.name, &listen).await?;
            self.pod(&spec.name, &image, &args, &listen, &files).await?;
            let rpc_addr = self.forward(&spec.name, ports.rpc).await?;
            let credentials = driver
                .credentials(&|file| dir.join(Path::new(file).file_name().unwrap_or_default()));
            written.push(pods::write_config_credentials(
                driver,
                &files,
                &credentials,
            )?);
            started.push(NodeEndpoint {
                name: spec.name.clone(),
                implementation: spec.implementation,
                rpc_addr,
                p2p_addr: format!("{ip}:{}", ports.p2p),
                credentials,
                data_dir: dir,
                binary: PathBuf::from(image),
                pid: None,
                payment_engine: spec.payment_engine,
            });
        }
        let this = &*self;
        let (started_ref, written) = (&started, &written);
        super::wait_nodes_ready(
            super::NODE_READY_TIMEOUT,
            started.len(),
            POLL,
            |i| this.shared.exit_of(&started_ref[i].name),
            |i| async move {
                let ep = &started_ref[i];
                this.copy_credentials(ep, &written[i]).await?;
                crate::node::driver(ep.implementation).ready(ep).await
            },
            |i| {
                let name = started_ref[i].name.clone();
                let log = this.log_path(&name);
                (name, log)
            },
        )
        .await?;
        self.endpoints.extend(started.iter().cloned());
        Ok(started)
    }

    /// Stops the node's process from the pod's files container (SIGTERM; SIGKILL at
    /// the deadline) and waits until the kubelet has started its container again, on
    /// the same data volume. `started_at` is when the process was gone: the kubelet
    /// starts the container by itself, at once for a pod's first restart.
    async fn restart_node(&mut self, name: &str) -> Result<Restarted, RuntimeError> {
        let endpoint = (self.endpoints.iter())
            .find(|e| e.name == name)
            .cloned()
            .ok_or_else(|| RuntimeError::UnknownNode { name: name.into() })?;
        let pods: Api<Pod> = self.api();
        let restarts = async |pods: &Api<Pod>| {
            let pod = (pods.get(name).await).map_err(kube_err(format!("reading pod {name}")))?;
            Ok::<_, RuntimeError>(watch::node_status(&pod).map_or(0, |c| c.restart_count))
        };
        let before = restarts(&pods).await?;
        self.shared.ask_restart(name);
        let asked = Instant::now();
        let limit = super::RESTART_STOP_DEADLINE;
        let command = restart::stop_command(limit);
        let command: Vec<&str> = command.iter().map(String::as_str).collect();
        let grace = Duration::from_secs(15);
        if let Err(why) = (self.exec_within(name, FILES_CONTAINER, &command, limit + grace)).await {
            return Err(RuntimeError::RestartFailed {
                name: name.into(),
                why: format!(
                    "its process could not be stopped from the pod's files container ({why})"
                ),
                hint: format!(
                    "look at the pod: kubectl -n {} describe pod {name}",
                    self.namespace
                ),
            });
        }
        let stop = asked.elapsed();
        let started_at = Instant::now();
        let log = self.log_path(name);
        while restarts(&pods).await? <= before {
            if let Some(status) = self.shared.exit_of(name) {
                return Err(RuntimeError::exited(format!("node {name}"), status, &log));
            }
            if started_at.elapsed() >= restart::STARTED_AGAIN_WITHIN {
                return Err(RuntimeError::not_ready(
                    format!("node {name}, started again by the kubelet,"),
                    restart::STARTED_AGAIN_WITHIN,
                    &log,
                ));
            }
            tokio::time::sleep(POLL).await;
        }
        // The follower of the stopped container has ended with it.
        (self.loggers).push(tokio::spawn(watch::follow_log(pods, name.into(), log)));
        Ok(Restarted {
            stop,
            started_at,
            endpoint,
        })
    }
}

#[async_trait]
impl Runtime for KubeRuntime {
    fn starts(&mut self) -> Option<&mut dyn super::Starts> {
        Some(self)
    }

    fn log_tail(&self, name: &str, lines: usize) -> String {
        shared::tail(&self.log_path(name), lines)
    }

    fn exited(&mut self) -> Option<(String, String)> {
        let exited = (self.shared.exited.lock()).unwrap_or_else(|e| e.into_inner());
        exited.first().cloned()
    }

    fn describe(&self) -> String {
        let mut images: Vec<&str> = std::iter::once(self.images.chain.as_str())
            .chain(self.images.nodes.iter().map(|(_, i)| i.as_str()))
            .collect();
        images.sort_unstable();
        images.dedup();
        format!(
            "kubernetes ({}; namespace {}; {})",
            self.cluster,
            self.namespace,
            images.join(", ")
        )
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
        if self.shared.unmeasured.load(Ordering::Relaxed) {
            None
        } else {
            Some(self)
        }
    }

    fn servers(&mut self) -> Option<&mut dyn super::Servers> {
        Some(self)
    }
}

#[async_trait]
impl super::Faults for KubeRuntime {
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
        self.stop_chain_pod(kill).await
    }

    async fn start_chain_again(&mut self) -> Result<Instant, RuntimeError> {
        self.start_chain().await
    }
}

#[async_trait]
impl super::Measures for KubeRuntime {
    async fn resources(&mut self) -> Vec<ResourceReading> {
        let latest = (self.shared.latest.lock()).unwrap_or_else(|e| e.into_inner());
        (self.pods.iter())
            .filter_map(|p| latest.get(p).cloned())
            .collect()
    }

    /// No engine of its own here: the cluster's runs elsewhere.
    async fn engine_cpu_pct(&mut self) -> Option<f64> {
        None
    }

    /// `resources:` sets no envelopes a cluster reports back.
    async fn envelopes(&mut self) -> Vec<crate::metrics::EnvelopeReading> {
        Vec::new()
    }
}

#[async_trait]
impl super::Servers for KubeRuntime {
    async fn start_link_proxy(&mut self, ports: usize) -> Result<ProxyHost, RuntimeError> {
        self.start_toxiproxy(ports).await
    }

    fn services(&self) -> Vec<Service> {
        self.services.clone()
    }

    /// Kubernetes starts no etcd (its preparation refuses nodes on etcd).
    fn set_etcd_members(&mut self, _members: u32) {}
}

impl Drop for KubeRuntime {
    /// A backstop for panics and early returns, which skip `down`: delete the run's
    /// namespace from a thread of its own (Drop cannot await).
    fn drop(&mut self) {
        for task in (self.forwards.drain(..))
            .chain(self.loggers.drain(..))
            .chain(self.poller.take())
        {
            task.abort();
        }
        if self.clean {
            return;
        }
        cleanup::delete_blocking(
            self.settings.context.clone(),
            self.namespace.clone(),
            Duration::from_secs(60),
        );
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.run_dir);
        }
    }
}
