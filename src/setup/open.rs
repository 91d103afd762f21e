//! One round of channel openings: openers in parallel, each opener's channels in
//! turn, with the locks that keep two negotiations a node cannot take at once apart,
//! and the retry of an open whose peer was found disconnected.

use super::{ReadyNode, node_named};
use anyhow::{Context, Result};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// One round of channel openings: per opener, its channels in order as (peer pubkey,
/// peer name, capacity).
pub(super) type Round<'a> = HashMap<&'a str, Vec<(String, String, u64)>>;

/// Opens one round of channels: openers in parallel, each opener's channels one after
/// the other so each takes its own funding output.
pub(super) async fn open_round(nodes: &HashMap<String, ReadyNode>, round: Round<'_>) -> Result<()> {
    let turns = Arc::new(Turns::new(&round, |to| {
        nodes.get(to).is_some_and(|n| {
            (crate::node::driver(n.node.implementation()).channel_rules())
                .one_inbound_open_at_a_time
        })
    }));
    let mut tasks = tokio::task::JoinSet::new();
    for (opener, plan) in round {
        let from = node_named(nodes, opener)?.clone();
        let addrs: HashMap<String, String> = (plan.iter())
            .filter_map(|(_, to, _)| Some((to.clone(), nodes.get(to)?.p2p_addr.clone())))
            .collect();
        let turns = turns.clone();
        let opener = opener.to_string();
        tasks.spawn(async move {
            for (pubkey, to, capacity) in plan {
                let _turn = turns.take(&opener, &to).await;
                let mut attempt = 1;
                loop {
                    match from.node.open_channel(&pubkey, capacity).await {
                        Ok(_) => break,
                        // The connection setup made dropped (a loaded machine, a peer
                        // still starting): connect again and retry, a few times.
                        Err(e) if attempt < OPEN_ATTEMPTS && peer_gone(&e) => {
                            attempt += 1;
                            tokio::time::sleep(Duration::from_secs(1)).await;
                            if let Some(addr) = addrs.get(&to) {
                                let _ = from.node.connect_peer(&pubkey, addr).await;
                            }
                        }
                        Err(e) => {
                            return Err(anyhow::Error::new(e).context(format!(
                                "opening a {capacity} sat channel from {} to {to}",
                                from.node.name()
                            )));
                        }
                    }
                }
            }
            anyhow::Ok(())
        });
    }
    while let Some(res) = tasks.join_next().await {
        res.context("channel opening task panicked")??;
    }
    Ok(())
}

/// Who may open now. Two nodes that open channels to each other take turns: Core
/// Lightning refuses a second negotiation with a peer while one runs ("Multiple
/// simultaneous opens not supported"). A node that loses concurrent inbound opens
/// (Eclair) takes one opener at a time. Each open holds its pair's lock, then its
/// acceptor's if any, and nothing waits while holding an acceptor's: no deadlock.
struct Turns {
    pairs: HashMap<(String, String), Arc<tokio::sync::Mutex<()>>>,
    inbound: HashMap<String, Arc<tokio::sync::Mutex<()>>>,
}

/// The locks one open holds while it runs.
type Turn = (
    Option<tokio::sync::OwnedMutexGuard<()>>,
    Option<tokio::sync::OwnedMutexGuard<()>>,
);

impl Turns {
    /// The locks for `round`, where `serial(name)` says whether that node takes one
    /// inbound open at a time.
    fn new(round: &Round<'_>, serial: impl Fn(&str) -> bool) -> Self {
        let (mut pairs, mut inbound) = (HashMap::new(), HashMap::new());
        for (opener, plan) in round {
            for (_, to, _) in plan {
                pairs.entry(pair_key(opener, to)).or_default();
                if serial(to) {
                    inbound.entry(to.clone()).or_default();
                }
            }
        }
        Turns { pairs, inbound }
    }

    async fn take(&self, opener: &str, to: &str) -> Turn {
        let pair = match self.pairs.get(&pair_key(opener, to)) {
            Some(lock) => Some(lock.clone().lock_owned().await),
            None => None,
        };
        let inbound = match self.inbound.get(to) {
            Some(lock) => Some(lock.clone().lock_owned().await),
            None => None,
        };
        (pair, inbound)
    }
}

/// The two names in order, the same whichever end opens.
fn pair_key(a: &str, b: &str) -> (String, String) {
    (a.min(b).to_string(), a.max(b).to_string())
}

/// How many times a channel open is tried when its peer was found disconnected.
const OPEN_ATTEMPTS: u32 = 3;
/// True when an open failed because the peer is not connected (any implementation's
/// wording: LND "peer is not connected", CLN "Peer not connected", Eclair "peer ... not
/// found").
fn peer_gone(e: &crate::node::NodeError) -> bool {
    let text = e.to_string().to_ascii_lowercase();
    text.contains("peer")
        && ["not found", "not connected", "disconnected", "unknown peer"]
            .iter()
            .any(|w| text.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::NodeError;

    #[test]
    fn an_open_refused_for_a_missing_peer_is_retried_and_others_are_not() {
        let err = |detail: &str| NodeError::Rpc {
            node: "alice".into(),
            call: "open",
            status: detail.into(),
        };
        for detail in [
            "HTTP 500: peer 029c2ce0197344a9a3918f256904d03705b16582655486840ae523898e9cb7dd98 not found",
            "peer is not connected",
            "Peer not connected",
        ] {
            assert!(peer_gone(&err(detail)), "{detail}");
        }
        for detail in ["Insufficient funds", "channel too small", "not found"] {
            assert!(!peer_gone(&err(detail)), "{detail}");
        }
    }

    /// Two openers of one Eclair node wait for each other; of any other node, they
    /// do not. The pair lock keeps two nodes opening to each other apart either way.
    #[tokio::test]
    async fn an_acceptor_that_loses_concurrent_opens_takes_one_opener_at_a_time() {
        let plan = |to: &str| vec![(String::new(), to.to_string(), 1_000_000)];
        let round: Round = HashMap::from([
            ("alice", plan("bob")),
            ("mallory", plan("bob")),
            ("bob", plan("alice")),
        ]);
        let soon = Duration::from_millis(50);
        let serial = Turns::new(&round, |to| to == "bob");
        let first = serial.take("alice", "bob").await;
        let second = tokio::time::timeout(soon, serial.take("mallory", "bob")).await;
        assert!(second.is_err(), "mallory waits while alice opens to bob");
        let back = tokio::time::timeout(soon, serial.take("bob", "alice")).await;
        assert!(
            back.is_err(),
            "bob waits to open to alice while alice opens to him"
        );
        drop(first);
        let second = tokio::time::timeout(soon, serial.take("mallory", "bob")).await;
        assert!(second.is_ok(), "mallory's turn once alice's open is done");

        let parallel = Turns::new(&round, |_| false);
        let _first = parallel.take("alice", "bob").await;
        let second = tokio::time::timeout(soon, parallel.take("mallory", "bob")).await;
        assert!(second.is_ok(), "two openers of an LND node go together");
    }
}
