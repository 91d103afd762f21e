//! An in-process fake Lightning node for tests and the engine benchmark.
//!
//! Latency and failures come from a seeded model: call number `n` always gets the
//! same draw (a splitmix64 hash of seed and `n`), so the counts of outcomes over `N`
//! calls are the same on every run, whatever order the workers make them in. The hot
//! path takes no lock: one atomic counter per call, plus an optional semaphore when a
//! capacity limit is set (to model a node that serializes work).
//!
//! Like a real node, a fake one keeps its own ledger ([`super::Ledger::payment_ledger`]):
//! a payment with a latency runs on as a task of its own when the tool stops waiting
//! for it, and is credited to its receiver when the nodes share a [`FakeNetwork`].
//! It keeps the status, by hash, of the payments whose end its caller did not see
//! (abandoned, or timed out), the ones the tool asks about
//! ([`super::Ledger::sent_statuses`]); the others are forgotten, so memory stays flat.

mod capabilities;

use super::{
    FailureReason, Implementation, Invoice, LightningNode, NodeError, NodeInfo, PaymentHash,
    PaymentLedger, PaymentOutcome, SentStatus, WalletBalance,
};
use crate::chain::fake::FakeChain;
use async_trait::async_trait;
use bitcoin::hashes::{Hash, sha256};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Semaphore;

/// How long a fake payment takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FakeLatency {
    /// Answer at once, without touching the timer.
    Zero,
    Fixed(Duration),
    /// Uniform between the two bounds (inclusive lower, exclusive upper).
    Uniform {
        min: Duration,
        max: Duration,
    },
}

/// The behaviour of a [`FakeNode`].
#[derive(Debug, Clone, PartialEq)]
pub struct FakeConfig {
    pub name: String,
    pub seed: u64,
    pub latency: FakeLatency,
    /// Probability of each failure reason per payment; the sum must be <= 1.
    pub failures: Vec<(FailureReason, f64)>,
    /// Probability that a payment call fails with a transport error instead.
    pub rpc_error_rate: f64,
    /// At most this many payments are processed at once; others wait their turn
    /// (the waiting counts as latency), like a node that is at its limit.
    pub capacity: Option<usize>,
    /// The nodes this one can pay and be paid by (credited on the receiver's ledger).
    pub network: Option<FakeNetwork>,
    /// Test hook: the next this many payments received are left out of the ledger's
    /// count (their amounts are kept), as if the node had lost them (a mismatch for
    /// reconciliation to find).
    pub unrecorded_receipts: u64,
    /// Each payment's routing fee; a payment with a lower fee limit fails (`no_route`).
    pub fee_msat: u64,
}

/// The fake nodes of one network, by public key: a payment's receiver is found here.
/// A network made [`FakeNetwork::on_chain`] is set up as a real one is: its nodes'
/// wallets hold the coins the chain confirmed to their addresses, a channel opens
/// between connected peers and is active at [`FUNDING_DEPTH`], and a payment needs a
/// path of active channels. Without a chain every node can pay every other at once.
#[derive(Clone, Default)]
pub struct FakeNetwork(Arc<Mutex<Members>>);

#[derive(Default)]
struct Members {
    nodes: HashMap<String, FakeNode>,
    chain: Option<FakeChain>,
    /// Connected peers, each pair both ways round.
    peers: HashSet<(String, String)>,
    channels: Vec<FakeChannel>,
}

impl Members {
    /// Confirmed to [`FUNDING_DEPTH`], both ends up.
    fn is_active(&self, channel: &FakeChannel) -> bool {
        let up = |pubkey: &str| (self.nodes.get(pubkey)).is_some_and(|n| !n.is_down());
        let deep = (self.chain.as_ref())
            .is_some_and(|chain| chain.confirmations(&channel.txid) >= FUNDING_DEPTH);
        deep && up(&channel.from) && up(&channel.to)
    }
}

/// A channel between two fake nodes (by public key), opened by `from`.
struct FakeChannel {
    from: String,
    to: String,
    txid: String,
    capacity_sat: u64,
}

/// The funding depth at which a fake channel is active (LND's default on regtest).
pub const FUNDING_DEPTH: u64 = 3;

impl FakeNetwork {
    /// A network whose nodes are funded, connected and given channels on `chain`.
    pub fn on_chain(chain: FakeChain) -> Self {
        let network = FakeNetwork::default();
        network.members().chain = Some(chain);
        network
    }

    fn members(&self) -> std::sync::MutexGuard<'_, Members> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn join(&self, node: &FakeNode) {
        let mut members = self.members();
        members
            .nodes
            .insert(node.pubkey().to_string(), node.clone());
    }

    fn find(&self, pubkey: &str) -> Option<FakeNode> {
        self.members().nodes.get(pubkey).cloned()
    }

    fn chain(&self) -> Option<FakeChain> {
        self.members().chain.clone()
    }

    /// The channels active at the chain's tip, as (one end, other end).
    fn active(members: &Members) -> Vec<(&str, &str)> {
        (members.channels.iter())
            .filter(|c| members.is_active(c))
            .map(|c| (c.from.as_str(), c.to.as_str()))
            .collect()
    }

    /// Hops on the shortest path of active channels from `from` to `to`; None when no
    /// path exists. Without a chain every node reaches every other in one hop.
    fn hops(&self, from: &str, to: &str) -> Option<u32> {
        let members = self.members();
        if members.chain.is_none() {
            return Some(1);
        }
        let active = FakeNetwork::active(&members);
        let mut seen: HashSet<&str> = HashSet::from([from]);
        let mut frontier = vec![from];
        for hops in 1..=members.nodes.len() as u32 {
            let mut next = Vec::new();
            for at in frontier {
                for &(a, b) in &active {
                    let far = match (a == at, b == at) {
                        (true, _) => b,
                        (_, true) => a,
                        _ => continue,
                    };
                    if far == to {
                        return Some(hops);
                    }
                    if seen.insert(far) {
                        next.push(far);
                    }
                }
            }
            frontier = next;
        }
        None
    }
}

impl std::fmt::Debug for FakeNetwork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FakeNetwork")
    }
}

impl PartialEq for FakeNetwork {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl FakeConfig {
    /// A node that answers every payment at once with success.
    pub fn instant(name: &str) -> Self {
        FakeConfig {
            name: name.to_string(),
            seed: 0,
            latency: FakeLatency::Zero,
            failures: Vec::new(),
            rpc_error_rate: 0.0,
            capacity: None,
            network: None,
            unrecorded_receipts: 0,
            fee_msat: FEE_MSAT,
        }
    }
}

/// A fake node; clones share counters and capacity.
#[derive(Debug, Clone)]
pub struct FakeNode {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: FakeConfig,
    pubkey: String,
    /// Payment calls started (keysend and pay_invoice).
    payments: AtomicU64,
    invoices: AtomicU64,
    capacity: Option<Semaphore>,
    ledger: Mutex<PaymentLedger>,
    /// By hash: payments in flight, and those whose end the caller did not see.
    statuses: Mutex<HashMap<PaymentHash, SentStatus>>,
    /// On a network on a chain: the wallet's addresses, and what its channels took.
    addresses: Mutex<Vec<String>>,
    spent_sat: AtomicU64,
    /// Killed by the fake runtime: every call fails as a refused connection does.
    down: AtomicBool,
    /// Receipts still to leave out of the ledger's count.
    to_lose: AtomicU64,
    /// The ledger is not read (as a client that cannot read the node's payments).
    ledger_hidden: AtomicBool,
}

/// splitmix64: a cheap, well-mixed hash, good enough to draw per-call randomness.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform draw in [0, 1) from 53 random bits.
fn unit(bits: u64) -> f64 {
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

impl FakeNode {
    pub fn new(config: FakeConfig) -> Self {
        let pubkey = format!("02{:064x}", mix(config.seed ^ 0xFA4E));
        let capacity = config.capacity.map(Semaphore::new);
        let to_lose = AtomicU64::new(config.unrecorded_receipts);
        let node = FakeNode {
            inner: Arc::new(Inner {
                config,
                pubkey,
                payments: AtomicU64::new(0),
                invoices: AtomicU64::new(0),
                capacity,
                ledger: Mutex::new(PaymentLedger::default()),
                statuses: Mutex::new(HashMap::new()),
                addresses: Mutex::new(Vec::new()),
                spent_sat: AtomicU64::new(0),
                down: AtomicBool::new(false),
                to_lose,
                ledger_hidden: AtomicBool::new(false),
            }),
        };
        if let Some(network) = &node.inner.config.network {
            network.join(&node);
        }
        node
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, PaymentLedger> {
        self.inner.ledger.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn statuses(&self) -> std::sync::MutexGuard<'_, HashMap<PaymentHash, SentStatus>> {
        self.inner
            .statuses
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    fn credit(&self, amount_msat: u64) {
        let lost = (self.inner.to_lose)
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        let mut ledger = self.ledger();
        ledger.received += u64::from(!lost);
        ledger.received_msat += amount_msat;
    }

    /// Leaves the next `n` payments it receives out of its ledger's count.
    pub fn lose_receipts(&self, n: u64) {
        self.inner.to_lose.store(n, Ordering::SeqCst);
    }

    /// From now on its ledger is not read: it no longer offers one
    /// ([`LightningNode::own_ledger`] answers None).
    pub fn hide_ledger(&self) {
        self.inner.ledger_hidden.store(true, Ordering::SeqCst);
    }

    pub fn pubkey(&self) -> &str {
        &self.inner.pubkey
    }

    /// Payment calls started so far.
    pub fn payments_started(&self) -> u64 {
        self.inner.payments.load(Ordering::Relaxed)
    }

    pub fn invoices_created(&self) -> u64 {
        self.inner.invoices.load(Ordering::Relaxed)
    }

    /// Kills the node (every call fails, as on a refused connection) or starts it again
    /// with what it held: the fake runtime's kill and start.
    pub fn set_down(&self, down: bool) {
        self.inner.down.store(down, Ordering::SeqCst);
    }

    fn is_down(&self) -> bool {
        self.inner.down.load(Ordering::SeqCst)
    }

    /// Refused while the node is down.
    fn up(&self) -> Result<(), NodeError> {
        if !self.is_down() {
            return Ok(());
        }
        Err(NodeError::Connect {
            node: self.inner.config.name.clone(),
            endpoint: "in-process".into(),
            source: Box::new(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)),
        })
    }

    /// The network and its chain, when the node's network is on one.
    fn on_chain(&self) -> Option<(&FakeNetwork, FakeChain)> {
        let network = self.inner.config.network.as_ref()?;
        Some((network, network.chain()?))
    }

    fn refused(&self, call: &'static str, status: String) -> NodeError {
        NodeError::Rpc {
            node: self.inner.config.name.clone(),
            call,
            status,
        }
    }

    /// Hops to `dest`: a path of active channels on a network on a chain (a payment to
    /// itself goes out and back over two), one hop elsewhere.
    fn route(&self, dest: &str) -> Option<u32> {
        let Some(network) = &self.inner.config.network else {
            return Some(1);
        };
        if dest != self.pubkey() {
            return network.hops(self.pubkey(), dest);
        }
        let members = network.members();
        let mine = (FakeNetwork::active(&members).iter())
            .filter(|(a, b)| *a == self.pubkey() || *b == self.pubkey())
            .count();
        (members.chain.is_none() || mine >= 2).then_some(2)
    }

    /// A payment whose fee limit is below this node's fee finds no route (not started).
    fn over_fee_limit(&self, max_fee_msat: Option<u64>) -> Option<PaymentOutcome> {
        let reason = FailureReason::NoRoute;
        let over = max_fee_msat.is_some_and(|limit| limit < self.inner.config.fee_msat);
        over.then_some(PaymentOutcome::Failed { reason })
    }

    fn latency(&self, draw: u64) -> Duration {
        match self.inner.config.latency {
            FakeLatency::Zero => Duration::ZERO,
            FakeLatency::Fixed(d) => d,
            FakeLatency::Uniform { min, max } => {
                let span = max.saturating_sub(min);
                min + span.mul_f64(unit(mix(draw)))
            }
        }
    }

    /// One payment to `dest` (a public key) with `hash`: drawn, waited for, and
    /// booked on both ledgers. With a latency it runs as a task of its own, so a
    /// caller that stops waiting leaves it to finish, as a real node would, and its
    /// status stays known by hash.
    async fn pay(
        &self,
        dest: &str,
        amount_msat: u64,
        hash: PaymentHash,
    ) -> Result<PaymentOutcome, NodeError> {
        self.up()?;
        let n = self.inner.payments.fetch_add(1, Ordering::Relaxed);
        let Some(hops) = self.route(dest) else {
            // Path finding takes its time too.
            let latency = self.latency(mix(self.inner.config.seed ^ mix(n)));
            if !latency.is_zero() {
                tokio::time::sleep(latency).await;
            }
            return Ok(PaymentOutcome::Failed {
                reason: FailureReason::NoRoute,
            });
        };
        let draw = mix(self.inner.config.seed ^ mix(n));
        self.ledger().sent_in_flight += 1;
        let result = if self.latency(draw).is_zero() && self.inner.capacity.is_none() {
            self.complete(draw, dest, amount_msat, None).await
        } else {
            self.statuses().insert(hash, SentStatus::InFlight);
            let (node, dest) = (self.clone(), dest.to_string());
            let task = async move { node.complete(draw, &dest, amount_msat, Some(hash)).await };
            tokio::spawn(task).await.unwrap_or_else(|e| {
                Err(NodeError::Rpc {
                    node: self.inner.config.name.clone(),
                    call: "pay",
                    status: format!("fake payment task ended: {e}"),
                })
            })
        };
        // The caller sees this end: only a timed-out payment is asked about later.
        let mut statuses = self.statuses();
        statuses.remove(&hash);
        if let Ok(PaymentOutcome::Failed {
            reason: FailureReason::Timeout,
        }) = result
        {
            statuses.insert(hash, SentStatus::Failed);
        }
        drop(statuses);
        result.map(|outcome| match outcome {
            PaymentOutcome::Succeeded { fee_msat, .. } => {
                PaymentOutcome::Succeeded { fee_msat, hops }
            }
            other => other,
        })
    }

    /// Ends a payment: its outcome on the ledgers and, when `hash` is given (it runs
    /// as a task its caller may have left), its status by hash.
    async fn complete(
        &self,
        draw: u64,
        dest: &str,
        amount_msat: u64,
        hash: Option<PaymentHash>,
    ) -> Result<PaymentOutcome, NodeError> {
        let result = self.outcome(draw).await;
        if let Some(hash) = hash {
            let mut statuses = self.statuses();
            match &result {
                Ok(PaymentOutcome::Succeeded { .. }) => {
                    statuses.insert(hash, SentStatus::Succeeded)
                }
                Ok(PaymentOutcome::Failed { .. }) => statuses.insert(hash, SentStatus::Failed),
                Err(_) => statuses.remove(&hash),
            };
        }
        let mut ledger = self.ledger();
        ledger.sent_in_flight -= 1;
        match &result {
            Ok(PaymentOutcome::Succeeded { fee_msat, .. }) => {
                ledger.sent_succeeded += 1;
                ledger.fees_paid_msat += fee_msat;
                drop(ledger);
                let network = self.inner.config.network.as_ref();
                if let Some(receiver) = network.and_then(|n| n.find(dest)) {
                    receiver.credit(amount_msat);
                }
            }
            Ok(PaymentOutcome::Failed { .. }) => ledger.sent_failed += 1,
            // A transport error: the node never took the payment.
            Err(_) => {}
        }
        result
    }

    async fn outcome(&self, draw: u64) -> Result<PaymentOutcome, NodeError> {
        let _permit = match &self.inner.capacity {
            Some(semaphore) => Some(semaphore.acquire().await.map_err(|_| NodeError::Rpc {
                node: self.inner.config.name.clone(),
                call: "pay",
                status: "fake node closed".to_string(),
            })?),
            None => None,
        };
        let latency = self.latency(draw);
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
        let mut roll = unit(draw);
        if roll < self.inner.config.rpc_error_rate {
            return Err(NodeError::Rpc {
                node: self.inner.config.name.clone(),
                call: "pay",
                status: "injected transport error".to_string(),
            });
        }
        roll -= self.inner.config.rpc_error_rate;
        for &(reason, probability) in &self.inner.config.failures {
            if roll < probability {
                return Ok(PaymentOutcome::Failed { reason });
            }
            roll -= probability;
        }
        Ok(PaymentOutcome::Succeeded {
            fee_msat: self.inner.config.fee_msat,
            hops: 1,
        })
    }
}

/// The routing fee a fake payment pays by default, so fees add up to something checkable.
pub const FEE_MSAT: u64 = 1;

/// A fake invoice's payment hash: the hash of its text (the receiver's seed in the
/// text keeps two nodes' invoices apart).
fn invoice_hash(bolt11: &str) -> PaymentHash {
    sha256::Hash::hash(bolt11.as_bytes()).to_byte_array()
}

/// The receiver's public key and the amount written into a fake invoice.
fn parse_invoice(bolt11: &str) -> (&str, u64) {
    let (head, pubkey) = bolt11.rsplit_once("-to-").unwrap_or((bolt11, ""));
    let amount = (head.strip_prefix("lnbcrt"))
        .and_then(|rest| rest.split_once("fake"))
        .and_then(|(amount, _)| amount.parse().ok())
        .unwrap_or(0);
    (pubkey, amount)
}

#[async_trait]
impl LightningNode for FakeNode {
    fn name(&self) -> &str {
        &self.inner.config.name
    }

    /// The fake answers when its simulated payment ends.
    fn completion(&self) -> super::Completion {
        super::Completion::exact(super::completion::Method::ReturnsAtEnd, "fake")
    }

    fn implementation(&self) -> Implementation {
        Implementation::Lnd
    }

    async fn get_info(&self) -> Result<NodeInfo, NodeError> {
        self.up()?;
        let (block_height, num_active_channels) = match self.on_chain() {
            Some((_, chain)) => {
                let active = self.list_channels().await?;
                let active = active.iter().filter(|c| c.active).count();
                (chain.tip() as u32, active as u32)
            }
            None => (0, 1),
        };
        Ok(NodeInfo {
            pubkey: self.inner.pubkey.clone(),
            alias: self.inner.config.name.clone(),
            version: "fake".to_string(),
            block_height,
            synced_to_chain: true,
            num_active_channels,
        })
    }

    async fn new_address(&self) -> Result<String, NodeError> {
        self.up()?;
        let mut addresses = self
            .inner
            .addresses
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let address = format!("bcrt1qfake{}x{}", self.inner.config.name, addresses.len());
        addresses.push(address.clone());
        Ok(address)
    }

    /// On a chain: the confirmed coins paid to its addresses, less what its channels
    /// took.
    async fn wallet_balance(&self) -> Result<WalletBalance, NodeError> {
        self.up()?;
        let Some((_, chain)) = self.on_chain() else {
            return Ok(WalletBalance::default());
        };
        let addresses = self
            .inner
            .addresses
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let received: u64 = addresses.iter().map(|a| chain.confirmed_to(a)).sum();
        let spent = self.inner.spent_sat.load(Ordering::SeqCst);
        Ok(WalletBalance {
            confirmed_sat: received.saturating_sub(spent),
            unconfirmed_sat: 0,
        })
    }

    async fn connect_peer(&self, pubkey: &str, _host: &str) -> Result<(), NodeError> {
        self.up()?;
        let Some(network) = &self.inner.config.network else {
            return Ok(());
        };
        if network.find(pubkey).is_none() {
            return Err(self.refused("connect_peer", format!("no node {pubkey} answers")));
        }
        let mut members = network.members();
        let me = self.pubkey().to_string();
        members.peers.insert((me.clone(), pubkey.to_string()));
        members.peers.insert((pubkey.to_string(), me));
        Ok(())
    }

    /// On a chain: a funding transaction from its wallet to a connected peer.
    async fn open_channel(&self, pubkey: &str, capacity_sat: u64) -> Result<String, NodeError> {
        self.up()?;
        let Some((network, chain)) = self.on_chain() else {
            return Ok(format!("{:064x}:0", mix(self.inner.config.seed)));
        };
        let me = self.pubkey().to_string();
        if !network
            .members()
            .peers
            .contains(&(me.clone(), pubkey.to_string()))
        {
            return Err(self.refused("open_channel", format!("peer {pubkey} is not connected")));
        }
        let balance = self.wallet_balance().await?.confirmed_sat;
        if balance < capacity_sat {
            let why = format!("{balance} sat confirmed, {capacity_sat} asked: not enough funds");
            return Err(self.refused("open_channel", why));
        }
        self.inner
            .spent_sat
            .fetch_add(capacity_sat, Ordering::SeqCst);
        let txid = chain.send(&[]);
        network.members().channels.push(FakeChannel {
            from: me,
            to: pubkey.to_string(),
            txid: txid.clone(),
            capacity_sat,
        });
        Ok(format!("{txid}:0"))
    }

    async fn list_channels(&self) -> Result<Vec<super::ChannelInfo>, NodeError> {
        self.up()?;
        let Some((network, _)) = self.on_chain() else {
            return Ok(Vec::new());
        };
        let members = network.members();
        let me = self.pubkey();
        let mine = (members.channels.iter()).filter(|c| c.from == me || c.to == me);
        Ok(mine
            .map(|c| super::ChannelInfo {
                remote_pubkey: if c.from == me { &c.to } else { &c.from }.clone(),
                channel_point: format!("{}:0", c.txid),
                capacity_sat: c.capacity_sat,
                local_balance_sat: if c.from == me { c.capacity_sat } else { 0 },
                active: members.is_active(c),
            })
            .collect())
    }

    async fn create_invoice(&self, amount_msat: u64) -> Result<Invoice, NodeError> {
        let n = self.inner.invoices.fetch_add(1, Ordering::Relaxed);
        let bolt11 = format!(
            "lnbcrt{amount_msat}fake{n}x{:x}-to-{}",
            mix(self.inner.config.seed),
            self.inner.pubkey
        );
        let payment_hash = invoice_hash(&bolt11);
        Ok(Invoice {
            bolt11,
            payment_hash,
        })
    }

    fn keysend_takes_preimage(&self) -> bool {
        true
    }

    async fn keysend_capped(
        &self,
        dest: &str,
        amount_msat: u64,
        preimage: [u8; 32],
        _timeout: Duration,
        max_fee_msat: Option<u64>,
    ) -> Result<PaymentOutcome, NodeError> {
        if let Some(refused) = self.over_fee_limit(max_fee_msat) {
            return Ok(refused);
        }
        let hash = sha256::Hash::hash(&preimage).to_byte_array();
        self.pay(dest, amount_msat, hash).await
    }

    async fn pay_invoice_capped(
        &self,
        bolt11: &str,
        _timeout: Duration,
        max_fee_msat: Option<u64>,
    ) -> Result<PaymentOutcome, NodeError> {
        if let Some(refused) = self.over_fee_limit(max_fee_msat) {
            return Ok(refused);
        }
        let (dest, amount_msat) = parse_invoice(bolt11);
        self.pay(dest, amount_msat, invoice_hash(bolt11)).await
    }

    fn custom_records(&self) -> Option<&dyn super::CustomRecords> {
        Some(self)
    }

    fn circular_payments(&self) -> Option<&dyn super::CircularPayments> {
        Some(self)
    }

    /// None once [`FakeNode::hide_ledger`] hid it: as a client that cannot read it.
    fn own_ledger(&self) -> Option<&dyn super::Ledger> {
        let hidden = self.inner.ledger_hidden.load(Ordering::SeqCst);
        (!hidden).then_some(self as &dyn super::Ledger)
    }
}

#[cfg(test)]
mod tests;
