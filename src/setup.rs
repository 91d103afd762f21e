//! Bringing a network from "processes started" to "ready for load": wait for the
//! nodes' RPC, fund the openers' wallets, connect peers, open channels, mine, and
//! wait until every channel is active.
//!
//! Everything here talks to nodes and the chain only through their traits, so it is
//! the same for every runtime and implementation.

use crate::chain::ChainBackend;
use crate::node::{LightningNode, NodeError, NodeInfo, PaymentOutcome};
use crate::progress::Progress;
use crate::scenario::ChannelSpec;
use anyhow::{Context, Result, bail};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

mod open;
pub mod parallel;

/// What a funding output carries beyond the channel capacity: the opener pays the
/// funding transaction's fee and LND keeps an on-chain reserve for anchor channels.
pub const FUNDING_MARGIN_SAT: u64 = 100_000;

/// Confirmations mined after the funding transactions (LND's regtest default needs
/// fewer; 6 also makes the channels announceable).
pub const CHANNEL_CONFIRMATIONS: u32 = 6;

/// A started node with the facts setup learned about it.
#[derive(Clone)]
pub struct ReadyNode {
    pub node: Arc<dyn LightningNode>,
    pub info: NodeInfo,
    /// `ip:port` where peers reach it.
    pub p2p_addr: String,
}

/// Time taken by one setup step, for the report.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StepTiming {
    pub step: String,
    pub seconds: f64,
}

/// Keeps the timings of setup (or teardown) steps and shows them: as lines on stderr,
/// or, when a live view follows the run, as [`Progress`] on a watch channel (then
/// nothing is printed, as the view owns the terminal).
#[derive(Debug, Default)]
pub struct StepLog {
    pub steps: Vec<StepTiming>,
    current: Option<(String, Instant)>,
    last_progress: Option<Instant>,
    view: Option<watch::Sender<Progress>>,
}

impl StepLog {
    /// A log that publishes to `view` instead of printing, as a new task `title`
    /// (`setting up`, `tearing down`): what `view` showed before is replaced.
    pub fn for_view(view: watch::Sender<Progress>, title: &str) -> Self {
        view.send_replace(Progress::new(title));
        StepLog {
            view: Some(view),
            ..StepLog::default()
        }
    }

    pub fn begin(&mut self, step: &str) {
        self.finish_current();
        let now = Instant::now();
        self.show(|p| p.begin(step, now), || format!("==> {step} ..."));
        self.current = Some((step.to_string(), now));
        self.last_progress = None;
    }

    /// A progress line for a long step, at most one every two seconds.
    pub fn progress(&mut self, detail: &str) {
        let now = Instant::now();
        if self
            .last_progress
            .is_some_and(|t| now.duration_since(t) < Duration::from_secs(2))
        {
            return;
        }
        self.last_progress = Some(now);
        if let Some((_, started)) = &self.current {
            let secs = started.elapsed().as_secs_f64();
            self.show(
                |p| p.detail(detail),
                || format!("    {detail} ({secs:.0} s)"),
            );
        }
    }

    pub fn end(&mut self) {
        self.finish_current();
    }

    /// Marks the running step failed with `why` (shown by the live view; the caller
    /// prints the error itself).
    pub fn fail(&mut self, why: &str) {
        if let Some((step, started)) = self.current.take() {
            let seconds = started.elapsed().as_secs_f64();
            self.steps.push(StepTiming { step, seconds });
        }
        if let Some(view) = &self.view {
            view.send_modify(|p| p.fail(why, Instant::now()));
        }
    }

    fn finish_current(&mut self) {
        if let Some((step, started)) = self.current.take() {
            let seconds = started.elapsed().as_secs_f64();
            self.show(
                |p| p.end(Instant::now()),
                || format!("    {step}: done in {seconds:.1} s"),
            );
            self.steps.push(StepTiming { step, seconds });
        }
    }

    fn show(&self, update: impl FnOnce(&mut Progress), line: impl FnOnce() -> String) {
        match &self.view {
            Some(view) => view.send_modify(update),
            None => crate::lines::errln!("{}", line()),
        }
    }
}

/// Polls `check` every `every` until it returns `Some`, or fails after `timeout`
/// with `what` in the message.
pub async fn poll<T, F, Fut>(
    what: &str,
    timeout: Duration,
    every: Duration,
    mut check: F,
) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Option<T>>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = check().await? {
            return Ok(v);
        }
        if Instant::now() >= deadline {
            bail!("{what}: still not done after {} s", timeout.as_secs());
        }
        tokio::time::sleep(every).await;
    }
}

/// Waits until `node` answers get_info and is synced to the chain at `height` or above.
/// `starting_up` tells which errors mean "not ready yet" rather than a real failure.
pub async fn wait_synced(
    node: &dyn LightningNode,
    height: u64,
    timeout: Duration,
    starting_up: impl Fn(&NodeError) -> bool,
) -> Result<NodeInfo> {
    let deadline = Instant::now() + timeout;
    loop {
        let last = match node.get_info().await {
            Ok(info) if info.synced_to_chain && u64::from(info.block_height) >= height => {
                return Ok(info);
            }
            Ok(info) => format!(
                "at block {}, synced_to_chain = {}",
                info.block_height, info.synced_to_chain
            ),
            Err(e) if starting_up(&e) => e.to_string(),
            Err(e) => return Err(e.into()),
        };
        if Instant::now() >= deadline {
            bail!(
                "{} did not sync to block {height} in {} s (last answer: {last})",
                node.name(),
                timeout.as_secs()
            );
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Funds each opener's wallet with one output per channel it opens (LND funds channels
/// from confirmed outputs only), and each accepting node whose implementation keeps an
/// on-chain reserve per inbound channel (LDK, for anchor channels) with one output for
/// all of them; mines them in and waits until the wallets see them.
pub async fn fund_openers(
    chain: &dyn ChainBackend,
    nodes: &HashMap<String, ReadyNode>,
    channels: &[ChannelSpec],
    log: &mut StepLog,
) -> Result<()> {
    let mut wanted: HashMap<&str, u64> = HashMap::new();
    // One address per channel, asked of all openers at once.
    let mut asks = Vec::new();
    for ch in channels {
        let opener = node_named(nodes, &ch.from)?;
        for _ in 0..ch.count {
            let amount = ch.capacity_sat + FUNDING_MARGIN_SAT;
            *wanted.entry(ch.from.as_str()).or_default() += amount;
            asks.push(async move { Ok((opener.node.new_address().await?, amount)) });
        }
    }
    let mut outputs = parallel::all("funding addresses", asks, log).await?;
    let mut reserves: Vec<(&str, u64)> = Vec::new();
    for ch in channels {
        let acceptor = node_named(nodes, &ch.to)?;
        let rules = crate::node::driver(acceptor.node.implementation()).channel_rules();
        let per_channel = rules.inbound_channel_reserve_sat;
        if per_channel == 0 {
            continue;
        }
        let reserve = per_channel * u64::from(ch.count);
        match reserves.iter_mut().find(|(n, _)| *n == ch.to) {
            Some((_, r)) => *r += reserve,
            None => reserves.push((ch.to.as_str(), reserve)),
        }
    }
    for (name, reserve) in reserves {
        let node = &node_named(nodes, name)?.node;
        // The margin pays the fees of what the node may sweep later.
        let amount = reserve + FUNDING_MARGIN_SAT;
        outputs.push((node.new_address().await?, amount));
        *wanted.entry(name).or_default() += amount;
    }
    if outputs.is_empty() {
        return Ok(());
    }
    let txid = chain
        .fund(&outputs)
        .await
        .context("funding the node wallets")?;
    log.progress(&format!("funding transaction {txid} sent"));
    chain.mine(1).await?;
    let mut waits = Vec::new();
    for (name, sat) in wanted {
        let node = &node_named(nodes, name)?.node;
        waits.push(parallel::poll_backoff(
            format!("{name}'s wallet seeing {sat} sat confirmed"),
            Duration::from_secs(60),
            move || async move {
                let b = node.wallet_balance().await?;
                Ok((b.confirmed_sat >= sat).then_some(()))
            },
        ));
    }
    parallel::all("wallets funded", waits, log).await?;
    Ok(())
}

/// Connects every channel's opener to its peer.
///
/// `via` gives the address `from` dials `to` at when their link goes through the
/// fault proxy (`links:`, link faults); else `to`'s own P2P address. In a `restored`
/// network the channels exist already, and an opener that does not dial on request
/// (LDK: it dials the addresses it kept, the saving run's) is dialled by its peer.
pub async fn connect_peers(
    nodes: &HashMap<String, ReadyNode>,
    channels: &[ChannelSpec],
    via: Option<&crate::links::LinkProxies>,
    restored: bool,
    log: &mut StepLog,
) -> Result<()> {
    // One connection per pair, whichever end opens.
    let mut seen = std::collections::HashSet::new();
    let mut dials = Vec::new();
    for ch in channels {
        let pair = (ch.from.as_str().min(&ch.to), ch.from.as_str().max(&ch.to));
        if seen.insert(pair) {
            dials.push(if restored {
                redial(nodes, ch)?
            } else {
                ch.clone()
            });
        }
    }
    let connects = dials.iter().map(|ch| connect_one(nodes, ch, via));
    parallel::all("peers connected", connects.collect(), log).await?;
    Ok(())
}

/// Who dials whom for a restored channel: its opener, unless the opener only dials
/// the addresses it kept and the peer dials on request.
fn redial(nodes: &HashMap<String, ReadyNode>, ch: &ChannelSpec) -> Result<ChannelSpec> {
    let dials = |name: &str| -> Result<bool> {
        let node = node_named(nodes, name)?;
        Ok((crate::node::driver(node.node.implementation()).channel_rules()).dials_on_request)
    };
    if dials(&ch.from)? || !dials(&ch.to)? {
        return Ok(ch.clone());
    }
    Ok(ChannelSpec {
        from: ch.to.clone(),
        to: ch.from.clone(),
        ..ch.clone()
    })
}

/// Connects a channel's opener to its peer.
async fn connect_one(
    nodes: &HashMap<String, ReadyNode>,
    ch: &ChannelSpec,
    via: Option<&crate::links::LinkProxies>,
) -> Result<()> {
    {
        let from = node_named(nodes, &ch.from)?;
        let to = node_named(nodes, &ch.to)?;
        let proxied = via.and_then(|v| v.dial_addr(&ch.from, &ch.to));
        let addr = proxied.unwrap_or(&to.p2p_addr);
        // A node can answer GetInfo before its peer server is up: retried a while.
        // Through a proxy, any failure is retried too: on Kubernetes the proxy's new
        // Service routes only once kube-proxy has its rules, and a dial begun before
        // that keeps its SYNs on the unrouted path (their conntrack entry) until it
        // times out, where a new dial is routed (a CI rehearsal: LND's 30 s
        // ConnectPeer timed out on the Service's address).
        let driver = crate::node::driver(from.node.implementation());
        let deadline = tokio::time::Instant::now() + PEER_SERVER_WAIT;
        loop {
            match from.node.connect_peer(&to.info.pubkey, addr).await {
                Ok(()) => break,
                Err(e)
                    if (driver.is_starting_up(&e) || proxied.is_some())
                        && tokio::time::Instant::now() < deadline =>
                {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                Err(e) => {
                    return Err(anyhow::Error::new(e))
                        .with_context(|| format!("connecting {} to {}", ch.from, ch.to));
                }
            }
        }
    }
    Ok(())
}

/// Opens every channel (openers in parallel, each opener's channels one after the
/// other so each takes its own funding output), mines them in and waits until all
/// are active on both ends.
pub async fn open_channels(
    chain: &dyn ChainBackend,
    nodes: &HashMap<String, ReadyNode>,
    channels: &[ChannelSpec],
    log: &mut StepLog,
) -> Result<()> {
    // Rounds of openings: an acceptor that takes only so many unconfirmed channels
    // from one peer (LDK: 4) gets the rest in later rounds, after a block confirmed the
    // earlier ones. Other channels all go in the first round.
    let mut rounds: Vec<open::Round> = Vec::new();
    let mut per_pair: HashMap<(&str, &str), u32> = HashMap::new();
    let mut limited: Vec<&str> = Vec::new();
    for ch in channels {
        let to = node_named(nodes, &ch.to)?;
        let rules = crate::node::driver(to.node.implementation()).channel_rules();
        let limit = rules.max_unconfirmed_inbound_channels;
        if limit.is_some() && !limited.contains(&ch.to.as_str()) {
            limited.push(ch.to.as_str());
        }
        for _ in 0..ch.count {
            let seen = per_pair
                .entry((ch.from.as_str(), ch.to.as_str()))
                .or_default();
            let round = limit.map_or(0, |l| (*seen / l.max(1)) as usize);
            *seen += 1;
            if rounds.len() <= round {
                rounds.resize_with(round + 1, HashMap::new);
            }
            rounds[round].entry(ch.from.as_str()).or_default().push((
                to.info.pubkey.clone(),
                ch.to.clone(),
                ch.capacity_sat,
            ));
        }
    }
    for (i, round) in rounds.into_iter().enumerate() {
        if i > 0 {
            chain.mine(1).await?;
            let height = chain.height().await?;
            for name in &limited {
                let node = &node_named(nodes, name)?.node;
                poll(
                    &format!("{name} seeing block {height}"),
                    Duration::from_secs(60),
                    Duration::from_millis(250),
                    || async {
                        let info = node.get_info().await?;
                        Ok((u64::from(info.block_height) >= height).then_some(()))
                    },
                )
                .await?;
            }
            log.progress(&format!("round {i}: earlier channels confirmed once"));
        }
        open::open_round(nodes, round).await?;
    }
    let total: u32 = channels.iter().map(|c| c.count).sum();
    log.progress(&format!("{total} funding transactions published"));
    chain.mine(CHANNEL_CONFIRMATIONS).await?;

    // Expected active channels per node, counting both ends.
    let mut expected: HashMap<&str, usize> = HashMap::new();
    for ch in channels {
        *expected.entry(ch.from.as_str()).or_default() += ch.count as usize;
        *expected.entry(ch.to.as_str()).or_default() += ch.count as usize;
    }
    let mut waits = Vec::new();
    for (name, want) in expected {
        let node = &node_named(nodes, name)?.node;
        waits.push(parallel::poll_backoff(
            format!("{want} active channels on {name}"),
            Duration::from_secs(120),
            move || async move {
                let active = node
                    .list_channels()
                    .await?
                    .iter()
                    .filter(|c| c.active)
                    .count();
                Ok((active >= want).then_some(()))
            },
        ));
    }
    parallel::all("nodes with all channels active", waits, log).await?;
    Ok(())
}

/// One small probe payment: a keysend, or an invoice of the receiver's where either
/// end has no keysend (ldk-server at the pinned commit).
async fn probe(sender: &dyn LightningNode, receiver: &ReadyNode) -> Result<PaymentOutcome> {
    const PROBE_MSAT: u64 = 1_000;
    const PROBE_TIMEOUT: Duration = Duration::from_secs(30);
    let lacks = |n: &dyn LightningNode| {
        crate::node::driver(n.implementation())
            .missing(crate::node::Feature::Keysend)
            .is_some()
    };
    if lacks(sender) || lacks(receiver.node.as_ref()) {
        let invoice = receiver.node.create_invoice(PROBE_MSAT).await?;
        Ok(sender.pay_invoice(&invoice.bolt11, PROBE_TIMEOUT).await?)
    } else {
        Ok(sender
            .keysend(&receiver.info.pubkey, PROBE_MSAT, PROBE_TIMEOUT)
            .await?)
    }
}

/// How long a node's peer server may take to start after its RPC answers.
const PEER_SERVER_WAIT: Duration = Duration::from_secs(60);

fn node_named<'a>(nodes: &'a HashMap<String, ReadyNode>, name: &str) -> Result<&'a ReadyNode> {
    nodes
        .get(name)
        .with_context(|| format!("internal: node {name} was not started"))
}

/// Waits until each sender can actually pay each receiver: LND reports a channel as
/// active about a second before it can carry an HTLC (payments fail with
/// "insufficient balance" meanwhile). Probes with small payments that are not counted.
pub async fn wait_routable(routes: &[(ReadyNode, ReadyNode)], log: &mut StepLog) -> Result<()> {
    let probes = routes.iter().map(|(sender, receiver)| async move {
        let what = format!(
            "{} able to pay {}",
            sender.node.name(),
            receiver.node.name()
        );
        parallel::poll_backoff(what, ROUTABLE_WAIT, || {
            let (s, r) = (sender.node.clone(), receiver.clone());
            async move {
                let outcome = probe(s.as_ref(), &r).await?;
                Ok(matches!(outcome, PaymentOutcome::Succeeded { .. }).then_some(()))
            }
        })
        .await
    });
    parallel::all("senders able to pay", probes.collect(), log).await?;
    Ok(())
}

/// How long a sender may take to find a route to its receiver (gossip included).
const ROUTABLE_WAIT: Duration = Duration::from_secs(120);
