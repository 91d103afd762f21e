//! The `faults:` timeline during the load: kills, restarts and pauses of nodes
//! through the runtime, link faults through the fault proxy (`crate::links`), bursts
//! of blocks through the tool's chain client. `run.rs` steps the runner from the
//! same loop that watches the processes (it holds the runtime), about ten times a
//! second; each fault is marked in the run's events (`fault_began` / `fault_ended`),
//! so every time chart shows it, and [`windows`] turns the run's samples into what
//! the report says about each fault.

mod chain_back;
mod mining;
mod node_back;
mod outcome;
mod samples;

/// Restarts node `name` on a runtime that starts its nodes.
async fn restart_node(
    runtime: &mut dyn Runtime,
    name: &str,
) -> Result<crate::runtime::Restarted, crate::runtime::RuntimeError> {
    let what = format!("restarting node {name}");
    crate::runtime::starter(runtime, &what)?
        .restart_node(name)
        .await
}

#[cfg(test)]
mod tests;
pub mod windows;

pub use chain_back::ChainBack;
pub use node_back::NodeBack;
pub use outcome::{NodeHealth, channel_health, describe};

use crate::chain::CHAIN_NAME;
use crate::links::LinkProxies;
use crate::metrics::{EventKind, LoadSetting, Recorder, RecorderEvents, Snapshot};
use crate::node::LightningNode;
use crate::restart::Link;
use crate::runtime::Runtime;
use crate::scenario::{Fault, FaultAction, FaultTrigger, LinkChange};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use windows::Sample;

/// How long a node started again after a fault may take until its channels are back.
const BACK_TIMEOUT: Duration = Duration::from_secs(120);

/// One fault as it happened, for the report (`faults[]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FaultRecord {
    /// `kill bob`, `partition alice–bob`.
    pub label: String,
    /// `kill`, `restart`, `pause`, `latency`, `bandwidth`, `partition`, `reset`, `mine`.
    pub kind: String,
    /// The node, the link (`alice–bob`, `alice–*`) or `chain`.
    pub target: String,
    /// When it began and when it was lifted, on the run's clock (seconds); None: it
    /// never began (the load ended first) / was not lifted before the load ended.
    pub began_s: Option<f64>,
    pub ended_s: Option<f64>,
    /// Links of the fault proxy it changed (link faults).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<usize>,
    /// Kill with restart_after / restart: the node's way back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_back: Option<NodeBack>,
    /// `kill: chain` with restart_after / `restart: chain`: the network's way back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chain_back: Option<ChainBack>,
    /// `mine` and `mining` faults: the chain's height once it was done (a burst
    /// mined; background mining stopped after its last block, or resumed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chain_height: Option<u64>,
    /// What went wrong doing or lifting it (the run goes on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Before, during and after, and the time to recover: see [`windows`].
    #[serde(flatten)]
    pub windows: windows::FaultWindows,
}

#[derive(Debug)]
enum State {
    Pending,
    /// Begun; lifted at `lift_at` (None: at the end of the load, or a node's way
    /// back ends it).
    Active {
        lift_at: Option<Instant>,
    },
    Done,
}

/// What the runner needs from the network.
pub struct FaultNetwork {
    pub links: Option<LinkProxies>,
    pub chain: Option<Arc<dyn crate::chain::ChainBackend>>,
    /// Setup's clients, by node name.
    pub clients: HashMap<String, Arc<dyn LightningNode>>,
    /// The peer connections as setup dialled them (a node started again is dialled
    /// again, as after `after_load: restart`).
    pub peer_links: Vec<Link>,
    /// `mining: { every }`: a block this often during the load.
    pub mining: Option<Duration>,
}

/// Steps the scenario's faults as the load goes.
pub struct FaultRunner {
    faults: Vec<Fault>,
    state: Vec<State>,
    records: Vec<FaultRecord>,
    events: RecorderEvents,
    /// The run's clock (seconds) when `started` was taken.
    clock_at_start: f64,
    snapshots: tokio::sync::watch::Receiver<Snapshot>,
    net: FaultNetwork,
    started: Instant,
    /// Once a second: the cumulative counts, for the windows.
    samples: samples::Samples,
    last_sample: Option<Instant>,
    backs: tokio::task::JoinSet<(usize, anyhow::Result<NodeBack>)>,
    chain_backs: tokio::task::JoinSet<(usize, anyhow::Result<ChainBack>)>,
    /// The chain's height before a fault stopped it, by fault.
    chain_before: Vec<Option<u64>>,
    /// Paused nodes, to resume whatever happens.
    paused: Vec<String>,
    /// By fault: it was due while another fault held its process (said once).
    waited: Vec<bool>,
    /// Background mining (`mining:`).
    miner: Option<mining::Miner>,
}

impl FaultRunner {
    pub fn new(
        faults: Vec<Fault>,
        recorder: &Recorder,
        snapshots: tokio::sync::watch::Receiver<Snapshot>,
        net: FaultNetwork,
    ) -> FaultRunner {
        let records = faults.iter().map(record_of).collect();
        let faults_len = faults.len();
        let miner = (net.mining)
            .zip(net.chain.clone())
            .map(|(every, chain)| mining::Miner::new(chain, every));
        FaultRunner {
            miner,
            state: faults.iter().map(|_| State::Pending).collect(),
            faults,
            records,
            events: recorder.events(),
            clock_at_start: recorder.elapsed_s(),
            snapshots,
            net,
            started: Instant::now(),
            samples: samples::Samples::default(),
            last_sample: None,
            backs: tokio::task::JoinSet::new(),
            chain_backs: tokio::task::JoinSet::new(),
            chain_before: vec![None; faults_len],
            paused: Vec::new(),
            waited: vec![false; faults_len],
        }
    }

    /// Now on the run's clock.
    fn now_s(&self) -> f64 {
        self.clock_at_start + self.started.elapsed().as_secs_f64()
    }

    fn sample(&mut self) {
        let due = self
            .last_sample
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(1));
        if !due {
            return;
        }
        self.sample_now(false);
    }

    /// Samples whatever the time since the last one (at a fault's edges: the
    /// recorder has just published fresh counts with the event).
    fn sample_now(&mut self, edge: bool) {
        self.last_sample = Some(Instant::now());
        let snap = self.snapshots.borrow();
        let failures: BTreeMap<String, u64> = (snap.failures.iter())
            .map(|(kind, n)| (kind.as_str().to_string(), *n))
            .collect();
        let (ok, failed) = (snap.ok, snap.failed);
        let scheduled = match snap.load {
            LoadSetting::Open { rate } => Some(rate),
            LoadSetting::Closed { .. } => None,
        };
        drop(snap);
        let at_s = self.now_s();
        let sample = Sample {
            at_s,
            ok,
            failed,
            failures,
            scheduled,
        };
        self.samples.push(sample, edge);
    }

    /// Begins the faults that are due and lifts those whose time is up. Errors of one
    /// fault are kept in its record; the load goes on.
    pub async fn step(&mut self, runtime: &mut dyn Runtime) {
        self.sample();
        if let Some(miner) = &mut self.miner {
            miner.step().await;
        }
        while let Some(Ok((i, back))) = self.backs.try_join_next() {
            self.node_back(i, back);
        }
        while let Some(Ok((i, back))) = self.chain_backs.try_join_next() {
            self.chain_back(i, back);
        }
        let done = {
            let s = self.snapshots.borrow();
            s.ok + s.failed
        };
        let into = self.started.elapsed();
        for i in 0..self.faults.len() {
            match self.state[i] {
                State::Pending => {
                    let due = match self.faults[i].trigger {
                        FaultTrigger::At(at) => into >= at,
                        FaultTrigger::AfterPayments(n) => done >= n,
                    };
                    if due && !self.held(i) {
                        self.begin(i, runtime).await;
                    }
                }
                State::Active { lift_at: Some(at) } if Instant::now() >= at => {
                    self.lift(i, runtime).await
                }
                _ => {}
            }
        }
    }

    /// True while another kill, restart or pause of fault `i`'s node (or chain) is
    /// still under way (a restart until its way back is over): `i` begins after it,
    /// so two faults never act on one process at once. Said once, when it first waits.
    fn held(&mut self, i: usize) -> bool {
        let Some(target) = process_target(&self.faults[i].action) else {
            return false;
        };
        let by = (0..self.faults.len()).find(|&j| {
            j != i
                && matches!(self.state[j], State::Active { .. })
                && process_target(&self.faults[j].action) == Some(target)
        });
        if let Some(j) = by
            && !std::mem::replace(&mut self.waited[i], true)
        {
            tracing::warn!(
                fault = %self.records[i].label,
                "due, but waits until {} is over",
                self.records[j].label
            );
        }
        by.is_some()
    }

    fn mark(&mut self, i: usize, began: bool) {
        let fault = self.records[i].label.clone();
        let kind = if began {
            EventKind::FaultBegan { fault }
        } else {
            EventKind::FaultEnded { fault }
        };
        let at = self.events.event(kind).unwrap_or_else(|| self.now_s());
        self.sample_now(true);
        if began {
            self.records[i].began_s = Some(at);
        } else {
            self.records[i].ended_s = Some(at);
        }
    }

    fn failed(&mut self, i: usize, what: &str, e: impl std::fmt::Display) {
        // The warning line and the record quote the runtime's error (a log tail).
        let msg = crate::redact::redact_text(&format!("{what}: {e:#}"));
        tracing::warn!(fault = %self.records[i].label, "{msg}");
        let r = &mut self.records[i];
        r.error = Some(match r.error.take() {
            Some(before) => format!("{before}; {msg}"),
            None => msg,
        });
    }

    async fn begin(&mut self, i: usize, runtime: &mut dyn Runtime) {
        let action = self.faults[i].action.clone();
        // A pause begins once its node is frozen (the signal may take a while to reach
        // a pod); every other fault when it is asked for.
        if !matches!(action, FaultAction::Pause { .. }) {
            self.mark(i, true);
        }
        let mut now = Instant::now();
        let mut lift_at = None;
        let mut instant = false;
        match &action {
            FaultAction::Kill {
                node,
                restart_after,
            } => {
                let killed = if node == CHAIN_NAME {
                    self.chain_before[i] = self.chain_now().await;
                    match crate::runtime::chain_faults(runtime) {
                        Ok(f) => f.stop_chain(true).await.map(|_| ()),
                        Err(e) => Err(e),
                    }
                } else {
                    match crate::runtime::node_faults(runtime, node, "kill") {
                        Ok(f) => f.kill_node(node).await,
                        Err(e) => Err(e),
                    }
                };
                if let Err(e) = killed {
                    self.failed(i, "kill", e);
                    instant = true;
                }
                lift_at = restart_after.map(|d| now + d);
            }
            // Its way back ends it; a stop or start that fails ends it at once, so a
            // fault waiting on the process goes on.
            FaultAction::Restart { node } if node == CHAIN_NAME => {
                instant = !self.restart_chain(i, runtime).await;
            }
            FaultAction::Restart { node } => match restart_node(runtime, node).await {
                Ok(r) => self.await_back(i, &r, Some(r.stop), runtime.node_connector()),
                Err(e) => {
                    self.failed(i, "restart", e);
                    instant = true;
                }
            },
            FaultAction::Pause { node, duration } => {
                let paused = match crate::runtime::node_faults(runtime, node, "pause") {
                    Ok(f) => f.pause_node(node, true).await,
                    Err(e) => Err(e),
                };
                match paused {
                    Ok(()) => self.paused.push(node.clone()),
                    Err(e) => self.failed(i, "pause", e),
                }
                self.mark(i, true);
                now = Instant::now();
                lift_at = Some(now + *duration);
            }
            FaultAction::Link {
                pair,
                change,
                duration,
            } => {
                let result = match &self.net.links {
                    Some(links) => links.apply(pair, *change).await,
                    None => Err(anyhow::anyhow!("no link goes through the fault proxy")),
                };
                match result {
                    Ok(n) => self.records[i].links = Some(n),
                    Err(e) => self.failed(i, "changing the link", e),
                }
                instant = matches!(change, LinkChange::Reset);
                lift_at = duration.map(|d| now + d);
            }
            FaultAction::Mine { blocks } => {
                let result = match &self.net.chain {
                    Some(chain) => chain.mine(*blocks).await.map_err(anyhow::Error::from),
                    None => Err(anyhow::anyhow!("no chain client")),
                };
                if let Err(e) = result {
                    self.failed(i, "mining", e);
                }
                self.chain_height(i).await;
                instant = true;
            }
            FaultAction::Mining { on } => {
                match &mut self.miner {
                    Some(miner) => miner.switch(*on).await,
                    None => self.failed(i, "mining", "no background mining (mining:)"),
                }
                self.chain_height(i).await;
                instant = true;
            }
        }
        if instant {
            self.mark(i, false);
            self.state[i] = State::Done;
        } else {
            self.state[i] = State::Active { lift_at };
        }
    }

    async fn lift(&mut self, i: usize, runtime: &mut dyn Runtime) {
        let action = self.faults[i].action.clone();
        match &action {
            FaultAction::Kill { node, .. } if node == CHAIN_NAME => {
                let started = match crate::runtime::chain_faults(runtime) {
                    Ok(f) => f.start_chain_again().await,
                    Err(e) => Err(e),
                };
                match started {
                    Ok(started_at) => {
                        self.mark(i, false);
                        // The kill ends here whether or not a way back is awaited.
                        let _ = self.await_chain_back(i, started_at, None);
                        self.state[i] = State::Done;
                        return;
                    }
                    Err(e) => self.failed(i, "starting the chain again", e),
                }
            }
            FaultAction::Kill { node, .. } => match start_node(runtime, node).await {
                Ok(r) => {
                    self.mark(i, false);
                    self.await_back(i, &r, None, runtime.node_connector());
                    // Its way back is timed from here; the fault itself ended.
                    self.state[i] = State::Done;
                    return;
                }
                Err(e) => self.failed(i, "starting it again", e),
            },
            // It ends as its node is thawed: what the thaw releases counts after it.
            FaultAction::Pause { node, .. } => {
                self.mark(i, false);
                if let Err(e) = resume_node(runtime, node).await {
                    self.failed(i, "resuming", e);
                }
                self.paused.retain(|p| p != node);
                self.state[i] = State::Done;
                return;
            }
            FaultAction::Link { pair, change, .. } => {
                if let Some(links) = &self.net.links
                    && let Err(e) = links.restore(pair, *change).await
                {
                    self.failed(i, "restoring the link", e);
                }
            }
            FaultAction::Restart { .. } | FaultAction::Mine { .. } | FaultAction::Mining { .. } => {
            }
        }
        self.mark(i, false);
        self.state[i] = State::Done;
    }

    /// Notes the chain's height in the record of fault `i`.
    async fn chain_height(&mut self, i: usize) {
        let Some(chain) = self.net.chain.clone() else {
            return;
        };
        match chain.height().await {
            Ok(h) => self.records[i].chain_height = Some(h),
            Err(e) => self.failed(i, "reading the chain's height", e),
        }
    }

    /// Once the load has ended: resumes paused nodes and restores links (so teardown
    /// finds nodes that answer), waits a moment for nodes on their way back, and
    /// computes each fault's windows from the samples.
    pub async fn finish(mut self, runtime: &mut dyn Runtime) -> Vec<FaultRecord> {
        self.last_sample = None;
        self.sample();
        let end_s = self.now_s();
        if let Some(miner) = &mut self.miner {
            miner.finish().await;
            tracing::info!("background mining: {} blocks", miner.mined);
            if let Some(e) = &miner.error {
                tracing::warn!("background mining: {e}");
            }
        }
        for node in std::mem::take(&mut self.paused) {
            let _ = resume_node(runtime, &node).await;
        }
        for i in 0..self.faults.len() {
            if let (State::Active { .. }, FaultAction::Link { pair, change, .. }) =
                (&self.state[i], &self.faults[i].action)
                && let Some(links) = &self.net.links
            {
                let _ = links.restore(pair, *change).await;
            }
        }
        // A node still on its way back: a few seconds more, then it is reported as such.
        let wait = tokio::time::timeout(Duration::from_secs(10), async {
            let mut out = Vec::new();
            while let Some(Ok(x)) = self.backs.join_next().await {
                out.push(x);
            }
            out
        })
        .await;
        for (i, back) in wait.unwrap_or_default() {
            self.node_back(i, back);
        }
        self.backs.abort_all();
        let wait = tokio::time::timeout(Duration::from_secs(10), async {
            let mut out = Vec::new();
            while let Some(Ok(x)) = self.chain_backs.join_next().await {
                out.push(x);
            }
            out
        })
        .await;
        for (i, back) in wait.unwrap_or_default() {
            self.chain_back(i, back);
        }
        self.chain_backs.abort_all();
        let mut records = self.records;
        windows::fill(&mut records, self.samples.as_slice(), end_s);
        records
    }
}

/// The node (or `chain`) whose process a kill, restart or pause acts on.
fn process_target(action: &FaultAction) -> Option<&str> {
    match action {
        FaultAction::Kill { node, .. }
        | FaultAction::Restart { node }
        | FaultAction::Pause { node, .. } => Some(node),
        _ => None,
    }
}

fn record_of(f: &Fault) -> FaultRecord {
    let label = f.label();
    let (kind, target) = match &f.action {
        FaultAction::Kill { node, .. } => ("kill", node.clone()),
        FaultAction::Restart { node } => ("restart", node.clone()),
        FaultAction::Pause { node, .. } => ("pause", node.clone()),
        FaultAction::Link { pair, .. } => (label.split(' ').next().unwrap_or("link"), pair.label()),
        FaultAction::Mine { .. } => ("mine", "chain".to_string()),
        FaultAction::Mining { .. } => ("mining", "chain".to_string()),
    };
    FaultRecord {
        kind: kind.to_string(),
        target,
        label,
        began_s: None,
        ended_s: None,
        links: None,
        node_back: None,
        chain_back: None,
        chain_height: None,
        error: None,
        windows: windows::FaultWindows::default(),
    }
}

/// Starts a node a kill fault killed, where the runtime can.
async fn start_node(
    runtime: &mut dyn Runtime,
    node: &str,
) -> Result<crate::runtime::Restarted, crate::runtime::RuntimeError> {
    crate::runtime::node_faults(runtime, node, "start")?
        .start_node(node)
        .await
}

/// Resumes a node a pause fault froze, where the runtime can.
async fn resume_node(
    runtime: &mut dyn Runtime,
    node: &str,
) -> Result<(), crate::runtime::RuntimeError> {
    crate::runtime::node_faults(runtime, node, "pause")?
        .pause_node(node, false)
        .await
}
