//! A node's way back after a kill or restart (`kill:` with `restart_after:`,
//! `restart:`): its RPC answering again and its channels active, dialling its peer
//! links again meanwhile.

use super::{BACK_TIMEOUT, FaultAction, FaultRunner, State};
use crate::node::LightningNode;
use crate::restart::Link;
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// A node's way back after a kill or restart: from its start until its RPC answered
/// and until its channels were active again.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NodeBack {
    /// The clean stop (restart only).
    pub stop_s: Option<f64>,
    pub rpc_s: f64,
    pub channels_s: f64,
}

impl FaultRunner {
    /// Waits (in a task of its own) until the node started as `r` says answers and
    /// has its channels back, dialling its peer links again each second.
    pub(super) fn await_back(
        &mut self,
        i: usize,
        r: &crate::runtime::Restarted,
        stop: Option<Duration>,
        connector: Arc<dyn crate::node::Connector>,
    ) {
        let node = r.endpoint.name.clone();
        let endpoint = r.endpoint.clone();
        let started_at = r.started_at;
        // The other ends' setup clients; the node's own is made anew once it answers.
        let links: Vec<(Option<Arc<dyn LightningNode>>, Link)> = (self.net.peer_links.iter())
            .filter(|l| l.from == node || l.to == node)
            .map(|l| {
                let dialler = (l.from != node).then(|| self.net.clients.get(&l.from).cloned());
                (dialler.flatten(), l.clone())
            })
            .collect();
        let active = self.expected_active(&node);
        let links = Arc::new(links);
        let endpoint = Arc::new(endpoint);
        self.backs.spawn(async move {
            let driver = crate::node::driver(endpoint.implementation);
            let starting = |e: &crate::node::NodeError| driver.is_starting_up(e);
            let mut last_dial = None::<Instant>;
            let poll = move || {
                let due = last_dial.is_none_or(|t| t.elapsed() >= Duration::from_secs(1));
                if due {
                    last_dial = Some(Instant::now());
                }
                let (links, endpoint) = (Arc::clone(&links), Arc::clone(&endpoint));
                let connector = Arc::clone(&connector);
                async move {
                    // A new client each try: the old connection is gone.
                    let fresh = connector.connect(&endpoint).await?;
                    let info = fresh.get_info().await?;
                    if due {
                        for (dialler, link) in links.iter() {
                            let dialler = dialler.clone().unwrap_or_else(|| fresh.clone());
                            // Best effort: the node's own reconnection may come first.
                            let _ = dialler.connect_peer(&link.to_pubkey, &link.to_addr).await;
                        }
                    }
                    Ok(info)
                }
            };
            let back =
                crate::restart::wait_back(&node, active, started_at, BACK_TIMEOUT, &starting, poll)
                    .await;
            (
                i,
                back.map(|(rpc, channels)| NodeBack {
                    stop_s: stop.map(|s| s.as_secs_f64()),
                    rpc_s: rpc.as_secs_f64(),
                    channels_s: channels.as_secs_f64(),
                }),
            )
        });
    }

    /// The channels `node` had active at setup: one per channel of its links.
    pub(super) fn expected_active(&self, node: &str) -> u32 {
        let n = (self.net.peer_links.iter())
            .filter(|l| l.from == node || l.to == node)
            .count();
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    pub(super) fn node_back(&mut self, i: usize, back: anyhow::Result<NodeBack>) {
        match back {
            Ok(b) => self.records[i].node_back = Some(b),
            Err(e) => self.failed(i, "coming back", e),
        }
        // A restart's way back, arrived or failed, ends it.
        if matches!(self.faults[i].action, FaultAction::Restart { .. }) {
            self.mark(i, false);
            self.state[i] = State::Done;
        }
    }
}
