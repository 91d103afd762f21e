//! A runtime that starts nothing: it hands out in-process fake nodes
//! ([`crate::node::fake::FakeNode`]) as a network already set up, and can be told to
//! fail setup, let a node die during the load, or call a hook (a test's "signal") at
//! setup, load or teardown. It lets the orchestration (plans, networks, points,
//! teardown, reports) be tested in seconds, without processes. A test double: the
//! real runtimes are tested end to end with real nodes.

use super::{ReadyClient, Restarted, Runtime, RuntimeError};
use crate::chain::ChainEndpoint;
use crate::node::fake::{FakeConfig, FakeLatency, FakeNetwork, FakeNode};
use crate::node::{LightningNode, NodeEndpoint};
use crate::scenario::ChainSpec;
use crate::scenario::NodeSpec;
use async_trait::async_trait;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
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
    /// This node's ledger leaves out this many payments it received (a mismatch
    /// for reconciliation to find).
    pub unrecorded_receipts: Option<(String, u64)>,
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
    /// When the nodes were handed out.
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
        }
        self.load_started.map_or(Duration::ZERO, |t| t.elapsed())
    }
}

fn nothing_started(what: &str) -> RuntimeError {
    RuntimeError::Scripted(format!(
        "the fake runtime starts no {what}: it hands out ready nodes"
    ))
}

#[async_trait]
impl Runtime for FakeRuntime {
    async fn start_chain(
        &mut self,
        _spec: &ChainSpec,
        _mining_addr: &str,
    ) -> Result<ChainEndpoint, RuntimeError> {
        Err(nothing_started("chain"))
    }

    async fn start_nodes(
        &mut self,
        _nodes: &[NodeSpec],
        _chain: &ChainEndpoint,
    ) -> Result<Vec<NodeEndpoint>, RuntimeError> {
        Err(nothing_started("node processes"))
    }

    async fn ready_nodes(
        &mut self,
        nodes: &[NodeSpec],
    ) -> Option<Result<Vec<ReadyClient>, RuntimeError>> {
        self.hook(Phase::Setup);
        tokio::time::sleep(self.script.setup_delay).await;
        if let Some(why) = &self.script.setup_error {
            return Some(Err(RuntimeError::Scripted(why.clone())));
        }
        let mut ready = Vec::new();
        let network = FakeNetwork::default();
        for (i, spec) in nodes.iter().enumerate() {
            let lost = (self.script.unrecorded_receipts.as_ref())
                .filter(|(name, _)| *name == spec.name)
                .map_or(0, |(_, n)| *n);
            let node = FakeNode::new(FakeConfig {
                seed: i as u64 + 1,
                latency: match self.script.latency {
                    Duration::ZERO => FakeLatency::Zero,
                    d => FakeLatency::Fixed(d),
                },
                network: Some(network.clone()),
                unrecorded_receipts: lost,
                ..FakeConfig::instant(&spec.name)
            });
            ready.push(Arc::new(node) as Arc<dyn LightningNode>);
        }
        self.handed_out = Some(Instant::now());
        Some(Ok(ready))
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

    async fn restart_node(&mut self, name: &str) -> Result<Restarted, RuntimeError> {
        Err(RuntimeError::Scripted(format!(
            "the fake runtime does not restart {name}"
        )))
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

    fn measures_resources(&self) -> bool {
        false
    }

    fn describe(&self) -> String {
        "fake".into()
    }

    async fn down(&mut self) -> Result<(), RuntimeError> {
        self.hook(Phase::Teardown);
        self.script.downs.fetch_add(1, Ordering::SeqCst);
        super::shared::remove_run_dir(&self.run_dir).await
    }
}
