//! The network's way back after the chain backend was killed or restarted
//! (`kill: chain` with `restart_after:`, `restart: chain`): its RPC answering again,
//! the blocks mined then reaching every node, and every node's channels active.

use super::{BACK_TIMEOUT, FaultAction, FaultRunner, State};
use crate::chain::ChainBackend;
use crate::node::LightningNode;
use crate::runtime::Runtime;
use anyhow::{Context, Result, bail};
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

const POLL: Duration = Duration::from_millis(200);

/// Each figure is seconds from the chain's start (after the stop, for a restart).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ChainBack {
    /// The clean stop (restart only).
    pub stop_s: Option<f64>,
    /// Until the chain's RPC answered.
    pub rpc_s: f64,
    /// Blocks the chain had before it stopped that it came back without (a kill can
    /// lose blocks not yet flushed to disk).
    pub lost_blocks: u64,
    /// The height the tool mined to once the RPC answered: one block past the
    /// highest a node had seen.
    pub height: u64,
    /// Until every node reported that block.
    pub synced_s: f64,
    /// Until every node had its channels active.
    pub channels_s: f64,
}

/// A node to watch: its name, setup's client, and how many channels it had active.
pub struct Watched {
    pub name: String,
    pub client: Arc<dyn LightningNode>,
    pub active: u32,
}

/// Waits for the chain started at `started_at` to answer, mines to one block past the
/// highest it had before it stopped (`before`) or any node has seen, then waits until every node has that height and its
/// channels active; each wait at most `timeout`.
pub async fn wait(
    chain: Arc<dyn ChainBackend>,
    nodes: Vec<Watched>,
    started_at: Instant,
    timeout: Duration,
    stop: Option<Duration>,
    before: Option<u64>,
) -> Result<ChainBack> {
    let deadline = started_at + timeout;
    let mut last_err = None;
    while chain
        .height()
        .await
        .map_err(|e| last_err = Some(e))
        .is_err()
    {
        if Instant::now() >= deadline {
            let why = last_err.map(|e| e.to_string()).unwrap_or_default();
            bail!(
                "the chain's RPC did not answer within {} s of its start: {why}",
                timeout.as_secs()
            );
        }
        tokio::time::sleep(POLL).await;
    }
    let rpc = started_at.elapsed();
    let answered = chain.height().await.context("reading the chain's height")?;
    // A killed chain may come back without its last blocks (not yet flushed): mine
    // past the highest block it had (`before`) or a node has seen, so that reaching it
    // means following the chain as it is now.
    let mut seen = before.unwrap_or(0);
    for n in &nodes {
        if let Ok(info) = n.client.get_info().await {
            seen = seen.max(u64::from(info.block_height));
        }
    }
    let blocks = (seen + 1).saturating_sub(answered).max(1);
    let blocks = u32::try_from(blocks).context("the nodes are far ahead of the chain")?;
    chain
        .mine(blocks)
        .await
        .context("mining once the chain answered")?;
    let height = chain.height().await.context("reading the chain's height")?;
    let deadline = Instant::now() + timeout;
    let synced = until_all(
        &nodes,
        deadline,
        started_at,
        "the block mined after the chain's start",
        |_, info| u64::from(info.block_height) >= height,
    )
    .await?;
    let channels = until_all(
        &nodes,
        deadline,
        started_at,
        "their channels active",
        |n, info| info.num_active_channels >= n.active,
    )
    .await?;
    Ok(ChainBack {
        stop_s: stop.map(|s| s.as_secs_f64()),
        rpc_s: rpc.as_secs_f64(),
        lost_blocks: before.unwrap_or(seen).saturating_sub(answered),
        height,
        synced_s: synced.as_secs_f64(),
        channels_s: channels.as_secs_f64(),
    })
}

/// Polls every node's GetInfo until `done` holds for each; the time since `since`.
async fn until_all(
    nodes: &[Watched],
    deadline: Instant,
    since: Instant,
    what: &str,
    done: impl Fn(&Watched, &crate::node::NodeInfo) -> bool,
) -> Result<Duration> {
    let mut pending: Vec<&Watched> = nodes.iter().collect();
    loop {
        let mut still = Vec::new();
        for n in pending {
            match n.client.get_info().await {
                Ok(info) if done(n, &info) => {}
                _ => still.push(n),
            }
        }
        if still.is_empty() {
            return Ok(since.elapsed());
        }
        if Instant::now() >= deadline {
            let names: Vec<&str> = still.iter().map(|n| n.name.as_str()).collect();
            bail!("{} did not have {what} in time", names.join(", "));
        }
        pending = still;
        tokio::time::sleep(POLL).await;
    }
}

/// The runner's side: stopping the chain, and its way back in a task of its own.
impl FaultRunner {
    /// `restart: chain`: a clean stop, a start, and the network's way back. False when
    /// a step failed and no way back is awaited (the caller ends the fault).
    pub(super) async fn restart_chain(&mut self, i: usize, runtime: &mut dyn Runtime) -> bool {
        self.chain_before[i] = self.chain_now().await;
        let faults = match crate::runtime::chain_faults(runtime) {
            Ok(f) => f,
            Err(e) => {
                self.failed(i, "stopping the chain", e);
                return false;
            }
        };
        let stop = match faults.stop_chain(false).await {
            Ok(stop) => stop,
            Err(e) => {
                self.failed(i, "stopping the chain", e);
                return false;
            }
        };
        match faults.start_chain_again().await {
            Ok(started_at) => self.await_chain_back(i, started_at, Some(stop)),
            Err(e) => {
                self.failed(i, "starting the chain again", e);
                false
            }
        }
    }

    /// The chain's height now, if it answers.
    pub(super) async fn chain_now(&self) -> Option<u64> {
        let chain = self.net.chain.as_ref()?;
        chain.height().await.ok()
    }

    /// Waits (in a task of its own) for the chain started at `started_at` to answer,
    /// for the blocks mined then to reach every node, and for their channels. False
    /// when there is nothing to wait with (no chain client).
    pub(super) fn await_chain_back(
        &mut self,
        i: usize,
        started_at: Instant,
        stop: Option<Duration>,
    ) -> bool {
        let Some(chain) = self.net.chain.clone() else {
            self.failed(i, "coming back", "no chain client");
            return false;
        };
        let before = self.chain_before[i];
        let nodes = (self.net.clients.iter())
            .map(|(name, client)| Watched {
                name: name.clone(),
                client: Arc::clone(client),
                active: self.expected_active(name),
            })
            .collect();
        self.chain_backs.spawn(async move {
            let back = wait(chain, nodes, started_at, BACK_TIMEOUT, stop, before).await;
            (i, back)
        });
        true
    }

    pub(super) fn chain_back(&mut self, i: usize, back: anyhow::Result<ChainBack>) {
        match back {
            Ok(b) => {
                self.records[i].chain_back = Some(b);
                self.records[i].chain_height = Some(b.height);
            }
            Err(e) => self.failed(i, "coming back", e),
        }
        if matches!(self.faults[i].action, FaultAction::Restart { .. }) {
            self.mark(i, false);
            self.state[i] = State::Done;
        }
    }
}
