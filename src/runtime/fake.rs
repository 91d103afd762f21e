//! A runtime that starts no process: its chain is an in-process fake
//! ([`crate::chain::fake::FakeChain`]) and its nodes in-process fake nodes
//! ([`crate::node::fake::FakeNode`]) on a network on that chain, so the run sets them
//! up as it sets up real ones: mining, funding, peers, channels confirmed and active,
//! route probes. It kills, starts, restarts and pauses its nodes and stops its chain
//! as faults ask, and can be told to fail setup, let a node die during the load, or
//! call a hook (a test's "signal") at setup, load or teardown. It lets the
//! orchestration (bring-up, plans, networks, points, faults, teardown, reports) be
//! tested in seconds, without processes. A test double: the real runtimes are tested
//! end to end with real nodes.

use super::{Restarted, Runtime, RuntimeError};
use crate::chain::fake::FakeChain;
use crate::chain::{ChainAccess, ChainBackend, ChainEndpoint, ChainError, MiningWallet};
use crate::node::fake::{FakeConfig, FakeLatency, FakeNetwork, FakeNode};
use crate::node::lnd::LndCredentials;
use crate::node::{Connector, Credentials, LightningNode, NodeEndpoint, NodeError};
use crate::scenario::ChainSpec;
use crate::scenario::NodeSpec;
use async_trait::async_trait;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// When a [`FakeScript`]'s hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Setup,
    /// This long into the load.
    Load(Duration),
    Teardown,
}

/// What a [`FakeRuntime`] does besides handing out nodes.
#[derive(Clone, Default)]
pub struct FakeScript {
    /// Each payment takes this long (a load needs some length to be interrupted).
    pub latency: Duration,
    /// Setup takes this long before the nodes are handed out.
    pub setup_delay: Duration,
    /// Setup fails with this error.
    pub setup_error: Option<String>,
    /// This node is reported exited this long into the load.
    pub dies: Option<(String, Duration)>,
    /// Called once at this phase (a test raises its signal here).
    pub hook: Option<(Phase, Arc<dyn Fn() + Send + Sync>)>,
    /// This node's ledger leaves out this many of the payments it receives once the
    /// load started (a mismatch for reconciliation to find).
    pub unrecorded_receipts: Option<(String, u64)>,
    /// This node's client cannot read its ledger once the load started (a node the
    /// reconciliation cannot check).
    pub unreadable_ledger: Option<String>,
    /// Counts the calls of `down`, so a test sees that teardown ran.
    pub downs: Arc<AtomicUsize>,
    /// A pause or its end takes this long to reach the node (a signal sent into a
    /// pod); None: the fake runtime pauses no node.
    pub pause_takes: Option<Duration>,
}

/// The fake runtime of one network.
pub struct FakeRuntime {
    script: FakeScript,
    /// Removed by `down`, as the real runtimes do.
    run_dir: std::path::PathBuf,
    chain: Option<FakeChain>,
    /// The nodes started, by name (shared with the connector it hands out).
    nodes: Arc<Mutex<HashMap<String, FakeNode>>>,
    endpoints: HashMap<String, NodeEndpoint>,
    /// When the nodes were started.
    handed_out: Option<Instant>,
    /// When the process watcher first asked after the nodes (the load began, after
    /// setup's last reading of the nodes): the load's timings count from here.
    load_started: Option<Instant>,
    hooked: bool,
}

impl FakeRuntime {
    pub fn new(script: FakeScript, run_dir: &std::path::Path) -> Self {
        FakeRuntime {
            script,
            run_dir: run_dir.to_path_buf(),
            chain: None,
            nodes: Arc::default(),
            endpoints: HashMap::new(),
            handed_out: None,
            load_started: None,
            hooked: false,
        }
    }

    fn hook(&mut self, now: Phase) {
        let Some((phase, hook)) = &self.script.hook else {
            return;
        };
        let due = match (phase, now) {
            (Phase::Load(after), Phase::Load(elapsed)) => elapsed >= *after,
            (want, now) => *want == now,
        };
        if due && !self.hooked {
            self.hooked = true;
            hook();
        }
    }

    fn time_into_load(&mut self) -> Duration {
        if self.handed_out.is_some() && self.load_started.is_none() {
            self.load_started = Some(Instant::now());
            if let Some((name, lost)) = &self.script.unrecorded_receipts {
                let nodes = self.nodes.lock().unwrap_or_else(|e| e.into_inner());
                nodes.get(name).inspect(|node| node.lose_receipts(*lost));
            }
            if let Some(name) = &self.script.unreadable_ledger {
                let nodes = self.nodes.lock().unwrap_or_else(|e| e.into_inner());
                nodes.get(name).inspect(|node| node.hide_ledger());
            }
        }
        self.load_started.map_or(Duration::ZERO, |t| t.elapsed())
    }
}

/// Where a fake process "listens": nowhere.
const IN_PROCESS: &str = "in-process";

impl FakeRuntime {
    fn node(&self, name: &str) -> Result<FakeNode, RuntimeError> {
        let nodes = self.nodes.lock().unwrap_or_else(|e| e.into_inner());
        (nodes.get(name).cloned())
            .ok_or_else(|| RuntimeError::Scripted(format!("the fake runtime has no node {name}")))
    }

    fn endpoint(&self, spec: &NodeSpec) -> NodeEndpoint {
        let data_dir = self.run_dir.join(&spec.name);
        NodeEndpoint {
            name: spec.name.clone(),
            implementation: spec.implementation,
            rpc_addr: IN_PROCESS.into(),
            p2p_addr: format!("{IN_PROCESS}:{}", spec.name),
            // Never read: the fake connector hands out the node itself.
            credentials: Credentials::Lnd(LndCredentials {
                tls_cert: data_dir.join("tls.cert"),
                macaroon: data_dir.join("admin.macaroon"),
            }),
            data_dir,
            binary: IN_PROCESS.into(),
            pid: None,
            payment_engine: Default::default(),
        }
    }

    /// Started again at once, with what the node held.
    fn restarted(&self, name: &str) -> Result<Restarted, RuntimeError> {
        self.node(name)?.set_down(false);
        Ok(Restarted {
            stop: Duration::ZERO,
            started_at: tokio::time::Instant::now(),
            endpoint: self.endpoints[name].clone(),
        })
    }
}

/// Hands out the fake runtime's nodes by name.
struct FakeConnector(Arc<Mutex<HashMap<String, FakeNode>>>);

#[async_trait]
impl Connector for FakeConnector {
    async fn connect(&self, endpoint: &NodeEndpoint) -> Result<Arc<dyn LightningNode>, NodeError> {
        let nodes = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let node = nodes.get(&endpoint.name).ok_or_else(|| NodeError::Rpc {
            node: endpoint.name.clone(),
            call: "connect",
            status: "the fake runtime started no such node".into(),
        })?;
        Ok(Arc::new(node.clone()))
    }
}

#[async_trait]
impl super::Starts for FakeRuntime {
    async fn start_chain(
        &mut self,
        spec: &ChainSpec,
        _mining_addr: &str,
    ) -> Result<ChainEndpoint, RuntimeError> {
        self.hook(Phase::Setup);
        tokio::time::sleep(self.script.setup_delay).await;
        if let Some(why) = &self.script.setup_error {
            return Err(RuntimeError::Scripted(why.clone()));
        }
        self.chain = Some(FakeChain::new());
        let kind = spec.kind;
        Ok(ChainEndpoint {
            kind,
            rpc_addr: IN_PROCESS.into(),
            rpc_user: String::new(),
            rpc_pass: String::new(),
            rpc_cert: None,
            version: "fake chain".into(),
            access: ChainAccess::unset(kind),
        })
    }

    async fn connect_chain(
        &mut self,
        _endpoint: &ChainEndpoint,
        _wallet: MiningWallet,
        _blocks: &[String],
    ) -> Result<Arc<dyn ChainBackend>, ChainError> {
        let chain = self.chain.clone().ok_or_else(|| ChainError::Setup {
            detail: "the fake runtime started no chain".into(),
        })?;
        Ok(Arc::new(chain))
    }

    async fn start_nodes(
        &mut self,
        nodes: &[NodeSpec],
        _chain: &ChainEndpoint,
    ) -> Result<Vec<NodeEndpoint>, RuntimeError> {
        let chain = (self.chain.clone())
            .ok_or_else(|| RuntimeError::Scripted("the fake runtime started no chain".into()))?;
        let network = FakeNetwork::on_chain(chain);
        let mut endpoints = Vec::new();
        for (i, spec) in nodes.iter().enumerate() {
            let node = FakeNode::new(FakeConfig {
                seed: i as u64 + 1,
                latency: match self.script.latency {
                    Duration::ZERO => FakeLatency::Zero,
                    d => FakeLatency::Fixed(d),
                },
                network: Some(network.clone()),
                ..FakeConfig::instant(&spec.name)
            });
            let mut started = self.nodes.lock().unwrap_or_else(|e| e.into_inner());
            started.insert(spec.name.clone(), node);
            drop(started);
            let endpoint = self.endpoint(spec);
            self.endpoints.insert(spec.name.clone(), endpoint.clone());
            endpoints.push(endpoint);
        }
        self.handed_out = Some(Instant::now());
        Ok(endpoints)
    }

    async fn restart_node(&mut self, name: &str) -> Result<Restarted, RuntimeError> {
        self.restarted(name)
    }
}

#[async_trait]
impl Runtime for FakeRuntime {
    fn starts(&mut self) -> Option<&mut dyn super::Starts> {
        Some(self)
    }

    fn node_connector(&self) -> Arc<dyn Connector> {
        Arc::new(FakeConnector(Arc::clone(&self.nodes)))
    }

    fn log_tail(&self, name: &str, _lines: usize) -> String {
        format!("(the fake node {name} keeps no log)")
    }

    fn exited(&mut self) -> Option<(String, String)> {
        let into = self.time_into_load();
        self.hook(Phase::Load(into));
        let (name, after) = self.script.dies.as_ref()?;
        (self.handed_out.is_some() && into >= *after).then(|| {
            (
                name.clone(),
                "killed by the fake runtime's script".to_string(),
            )
        })
    }

    fn describe(&self) -> String {
        "fake".into()
    }

    async fn down(&mut self) -> Result<(), RuntimeError> {
        self.hook(Phase::Teardown);
        self.script.downs.fetch_add(1, Ordering::SeqCst);
        super::shared::remove_run_dir(&self.run_dir).await
    }

    fn faults(&mut self) -> Option<&mut dyn super::Faults> {
        Some(self)
    }
}

#[async_trait]
impl super::Faults for FakeRuntime {
    async fn kill_node(&mut self, name: &str) -> Result<(), RuntimeError> {
        self.node(name)?.set_down(true);
        Ok(())
    }

    async fn start_node(&mut self, name: &str) -> Result<Restarted, RuntimeError> {
        self.restarted(name)
    }

    async fn stop_chain(&mut self, _kill: bool) -> Result<Duration, RuntimeError> {
        let chain = (self.chain.as_ref())
            .ok_or_else(|| RuntimeError::Scripted("the fake runtime started no chain".into()))?;
        chain.set_stopped(true);
        Ok(Duration::ZERO)
    }

    async fn start_chain_again(&mut self) -> Result<tokio::time::Instant, RuntimeError> {
        let chain = (self.chain.as_ref())
            .ok_or_else(|| RuntimeError::Scripted("the fake runtime started no chain".into()))?;
        chain.set_stopped(false);
        Ok(tokio::time::Instant::now())
    }

    async fn pause_node(&mut self, name: &str, _paused: bool) -> Result<(), RuntimeError> {
        let Some(takes) = self.script.pause_takes else {
            return Err(RuntimeError::Scripted(format!(
                "the fake runtime does not pause {name}"
            )));
        };
        tokio::time::sleep(takes).await;
        Ok(())
    }
}
