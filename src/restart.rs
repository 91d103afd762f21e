//! `after_load: { restart: [...] }`: once the load has ended, each listed node is
//! stopped and started again in turn, timing the stop, the start until its RPC
//! answers, and the start until all its channels are active again (as Alby measured
//! LND's restart after a long run).

use crate::node::{LightningNode, NodeError, NodeInfo};
use crate::runtime::Runtime;
use crate::setup::StepLog;
use anyhow::{Result, bail};
use serde::Serialize;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// How long a restarted node may take until its RPC answers, and again until its
/// channels are active.
pub const RESTART_TIMEOUT: Duration = Duration::from_secs(300);
const POLL: Duration = Duration::from_millis(100);

/// One node's restart, as report.json holds it (`nodes[i].restart`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RestartReport {
    /// From the stop request until the node had exited.
    pub stop_s: f64,
    /// From the start until GetInfo answered.
    pub rpc_s: f64,
    /// From the start until as many channels were active as before the stop.
    pub channels_s: f64,
    /// Active channels before the stop (and again after the start).
    pub active_channels: u32,
    /// The node's data-dir size when the load ended (what the restart had to open).
    pub data_dir_bytes: Option<u64>,
}

/// One peer connection of the network, as setup made it: `from` dialled `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub from: String,
    pub to: String,
    pub to_pubkey: String,
    /// Where `from` reaches `to` (`host:port`).
    pub to_addr: String,
}

/// Restarts each of `names` in turn on `runtime`; `before(name)` is the node's
/// client from setup (to count its active channels first), `data_dir(name)` its
/// data-dir size at the end of the load. Progress goes to `log`.
///
/// Once a restarted node's RPC answers, each of its `links` is dialled again as setup
/// dialled it. LND reconnects a peer only to an address it knows: a node that was
/// dialled (the receiver here) never learnt its dialler's listening address, as the
/// channels are not announced, and its dialler's own retries back off; a node on a
/// public network would find its peers' announced addresses instead.
pub async fn restart_nodes(
    names: &[String],
    runtime: &mut dyn Runtime,
    before: impl Fn(&str) -> Option<Arc<dyn LightningNode>>,
    data_dir: impl Fn(&str) -> Option<u64>,
    links: &[Link],
    log: &mut StepLog,
) -> Result<Vec<(String, RestartReport)>> {
    let mut done = Vec::with_capacity(names.len());
    // Clients of the nodes restarted so far: their setup clients are gone.
    let mut fresh: std::collections::HashMap<String, Arc<dyn LightningNode>> =
        std::collections::HashMap::new();
    for name in names {
        log.begin(&format!("restarting {name}"));
        let Some(node) = before(name) else {
            bail!("no node {name} to restart");
        };
        let active = node.get_info().await?.num_active_channels;
        let what = format!("restarting node {name}");
        let restarted = (crate::runtime::starter(runtime, &what)?.restart_node(name)).await?;
        log.progress(&format!(
            "{name} stopped in {:.1} s",
            restarted.stop.as_secs_f64()
        ));
        let endpoint = restarted.endpoint.clone();
        let node_driver = crate::node::driver(endpoint.implementation);
        let starting = |e: &NodeError| node_driver.is_starting_up(e);
        let connector = runtime.node_connector();
        let poll = || {
            let (endpoint, connector) = (endpoint.clone(), connector.clone());
            async move {
                // A new client each try until one answers: the old connection is gone
                // and the address may be new.
                let node = connector.connect(&endpoint).await?;
                node.get_info().await
            }
        };
        let with_log = |e: anyhow::Error| {
            anyhow::anyhow!(
                "{e}; last lines of its log:\n{}",
                runtime.log_tail(name, 20)
            )
        };
        let (rpc, _) = wait_back(
            name,
            0,
            restarted.started_at,
            RESTART_TIMEOUT,
            &starting,
            poll,
        )
        .await
        .map_err(with_log)?;
        let client: Arc<dyn LightningNode> = connector.connect(&endpoint).await?;
        fresh.insert(name.clone(), client);
        let diallers = diallers_of(name, links, |n| fresh.get(n).cloned().or_else(|| before(n)));
        // Dialled again about once a second until the channels are back: LND answers
        // GetInfo a moment before its peer server accepts ("still in the process of
        // starting"), and an established connection answers "already connected".
        let last_dial = std::cell::Cell::new(None::<Instant>);
        let poll_and_dial = || {
            let due = last_dial
                .get()
                .is_none_or(|t| t.elapsed() >= Duration::from_secs(1));
            if due {
                last_dial.set(Some(Instant::now()));
            }
            let (diallers, info) = (&diallers, poll());
            async move {
                if due {
                    dial_all(diallers).await;
                }
                info.await
            }
        };
        let (_, channels) = wait_back(
            name,
            active,
            restarted.started_at,
            RESTART_TIMEOUT,
            &starting,
            poll_and_dial,
        )
        .await
        .map_err(with_log)?;
        done.push((
            name.clone(),
            RestartReport {
                stop_s: restarted.stop.as_secs_f64(),
                rpc_s: rpc.as_secs_f64(),
                channels_s: channels.as_secs_f64(),
                active_channels: active,
                data_dir_bytes: data_dir(name),
            },
        ));
    }
    log.end();
    Ok(done)
}

/// The clients that dial `name`'s links again, each link's `from` side as `client`
/// gives it (a restarted node's new client, else its client from setup).
fn diallers_of<'a>(
    name: &str,
    links: &'a [Link],
    client: impl Fn(&str) -> Option<Arc<dyn LightningNode>>,
) -> Vec<(Arc<dyn LightningNode>, &'a Link)> {
    (links.iter())
        .filter(|l| l.from == name || l.to == name)
        .filter_map(|l| Some((client(&l.from)?, l)))
        .collect()
}

/// Dials each link once. Best effort: LND's own reconnection may bring the channels
/// back too, and an established connection answers "already connected".
async fn dial_all(diallers: &[(Arc<dyn LightningNode>, &Link)]) {
    for (dialler, link) in diallers {
        let _ = dialler.connect_peer(&link.to_pubkey, &link.to_addr).await;
    }
}

/// Polls `get_info` from `started_at` until it answers (the RPC time) and then until
/// at least `active` channels are active (the channels time). Answers that LND is
/// still starting up are retried; other errors end the wait. Each phase may take
/// `timeout`.
pub async fn wait_back<F, Fut>(
    name: &str,
    active: u32,
    started_at: Instant,
    timeout: Duration,
    starting_up: &(dyn Fn(&NodeError) -> bool + Sync),
    mut get_info: F,
) -> Result<(Duration, Duration)>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<NodeInfo, NodeError>>,
{
    let mut deadline = started_at + timeout;
    let mut rpc = None;
    let mut last_active = 0;
    loop {
        match get_info().await {
            Ok(info) => {
                let now = Instant::now();
                if rpc.is_none() {
                    rpc = Some(now - started_at);
                    deadline = now + timeout;
                }
                last_active = info.num_active_channels;
                if last_active >= active {
                    return Ok((rpc.unwrap_or_default(), now - started_at));
                }
            }
            Err(e) if starting_up(&e) => {}
            Err(e) => return Err(e.into()),
        }
        if Instant::now() >= deadline {
            match rpc {
                None => bail!(
                    "{name} did not answer GetInfo within {} s of its restart",
                    timeout.as_secs()
                ),
                Some(_) => bail!(
                    "{name} had {last_active} of its {active} channels active {} s after its \
                     RPC answered again (restart)",
                    timeout.as_secs()
                ),
            }
        }
        tokio::time::sleep(POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn info(active: u32) -> NodeInfo {
        NodeInfo {
            pubkey: "02aa".into(),
            alias: "alice".into(),
            version: "fake".into(),
            block_height: 1,
            synced_to_chain: true,
            num_active_channels: active,
        }
    }

    /// Answers "starting up" `down` times, then with `ramp[i]` active channels.
    fn node(
        down: u32,
        ramp: Vec<u32>,
    ) -> impl FnMut() -> std::future::Ready<Result<NodeInfo, NodeError>> {
        let calls = AtomicU32::new(0);
        move || {
            let n = calls.fetch_add(1, Ordering::Relaxed);
            std::future::ready(if n < down {
                Err(NodeError::Rpc {
                    node: "alice".into(),
                    call: "GetInfo",
                    status: "Unknown: the RPC server is in the process of starting up".into(),
                })
            } else {
                let i = (n - down) as usize;
                Ok(info(ramp[i.min(ramp.len() - 1)]))
            })
        }
    }

    fn lnd_starting(e: &NodeError) -> bool {
        crate::node::driver(crate::node::Implementation::Lnd).is_starting_up(e)
    }

    #[tokio::test(start_paused = true)]
    async fn rpc_then_channels_are_timed_from_the_start() {
        let start = Instant::now();
        let (rpc, channels) = wait_back(
            "alice",
            10,
            start,
            Duration::from_secs(60),
            &lnd_starting,
            node(5, vec![0, 4, 10]),
        )
        .await
        .unwrap();
        // Five refusals, then the first answer on the sixth poll; all channels two polls later.
        assert_eq!(rpc, POLL * 5);
        assert_eq!(channels, POLL * 7);
        assert!(rpc <= channels);
    }

    #[tokio::test(start_paused = true)]
    async fn too_few_channels_is_a_timeout_naming_the_node_and_the_count() {
        let err = wait_back(
            "bob",
            10,
            Instant::now(),
            Duration::from_secs(2),
            &lnd_starting,
            node(0, vec![3]),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(err.contains("bob had 3 of its 10 channels active"), "{err}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_node_that_never_answers_times_out() {
        let err = wait_back(
            "bob",
            1,
            Instant::now(),
            Duration::from_secs(1),
            &lnd_starting,
            node(u32::MAX, vec![1]),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("bob did not answer GetInfo within 1 s"),
            "{err}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn other_errors_end_the_wait() {
        let mut calls = 0;
        let err = wait_back(
            "bob",
            1,
            Instant::now(),
            Duration::from_secs(10),
            &lnd_starting,
            || {
                calls += 1;
                std::future::ready(Err(NodeError::Protocol {
                    node: "bob".into(),
                    call: "GetInfo",
                    detail: "garbage".into(),
                }))
            },
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("garbage"), "{err}");
        assert_eq!(calls, 1);
    }
}
