//! `workload: attack:` in the engine, against a fake hold-invoice pair: the slots
//! reach their target, are refreshed as they expire, and are all cancelled however
//! the load ends.

use super::*;
use crate::node::fake::{FakeConfig, FakeNode};
use crate::node::{
    ChannelInfo, FailureReason, HealthCheck, HoldInvoices, Implementation, Invoice, NodeInfo,
    PaymentHash, PaymentOutcome, WalletBalance,
};
use crate::scenario::StopCondition;
use async_trait::async_trait;
use bitcoin::hex::{DisplayHex, FromHex};
use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Open,
    Accepted,
    Canceled,
}

/// The attacker and the accomplice in one: invoices by hash, shared by both.
#[derive(Default)]
struct HoldPair {
    invoices: Mutex<HashMap<PaymentHash, State>>,
    changed: tokio::sync::Notify,
    /// When each cancel came, in order.
    cancels: Mutex<Vec<tokio::time::Instant>>,
    /// The attacker knows no route to the accomplice: every payment fails at once.
    no_route: bool,
}

impl HoldPair {
    fn count(&self, state: State) -> usize {
        let invoices = self.invoices.lock().unwrap();
        invoices.values().filter(|s| **s == state).count()
    }
}

fn unused(call: &'static str) -> NodeError {
    NodeError::protocol("hold", call, "not used by the attack")
}

#[async_trait]
impl LightningNode for HoldPair {
    fn name(&self) -> &str {
        "hold"
    }
    fn implementation(&self) -> Implementation {
        Implementation::Lnd
    }
    fn completion(&self) -> crate::node::Completion {
        crate::node::Completion::exact(crate::node::completion::Method::ReturnsAtEnd, "fake")
    }
    async fn get_info(&self) -> Result<NodeInfo, NodeError> {
        Err(unused("get_info"))
    }
    async fn new_address(&self) -> Result<String, NodeError> {
        Err(unused("new_address"))
    }
    async fn wallet_balance(&self) -> Result<WalletBalance, NodeError> {
        Err(unused("wallet_balance"))
    }
    async fn connect_peer(&self, _: &str, _: &str) -> Result<(), NodeError> {
        Err(unused("connect_peer"))
    }
    async fn open_channel(&self, _: &str, _: u64) -> Result<String, NodeError> {
        Err(unused("open_channel"))
    }
    async fn list_channels(&self) -> Result<Vec<ChannelInfo>, NodeError> {
        Err(unused("list_channels"))
    }
    async fn create_invoice(&self, _: u64) -> Result<Invoice, NodeError> {
        Err(unused("create_invoice"))
    }
    async fn keysend_capped(
        &self,
        _: &str,
        _: u64,
        _: [u8; 32],
        _: Duration,
        _: Option<u64>,
    ) -> Result<PaymentOutcome, NodeError> {
        Err(unused("keysend"))
    }
    /// The HTLC reaches the accomplice at once and is held until cancelled.
    async fn pay_invoice_capped(
        &self,
        bolt11: &str,
        _: Duration,
        _: Option<u64>,
    ) -> Result<PaymentOutcome, NodeError> {
        let hash = <[u8; 32]>::from_hex(bolt11).map_err(|_| unused("bad invoice"))?;
        if self.no_route {
            let reason = FailureReason::NoRoute;
            return Ok(PaymentOutcome::Failed { reason });
        }
        self.invoices.lock().unwrap().insert(hash, State::Accepted);
        loop {
            let changed = self.changed.notified();
            if self.invoices.lock().unwrap()[&hash] == State::Canceled {
                let reason = FailureReason::IncorrectPaymentDetails;
                return Ok(PaymentOutcome::Failed { reason });
            }
            changed.await;
        }
    }
    fn hold_invoices(&self) -> Option<&dyn HoldInvoices> {
        Some(self)
    }
    fn health_check(&self) -> Option<&dyn HealthCheck> {
        Some(self)
    }
}

#[async_trait]
impl HoldInvoices for HoldPair {
    async fn add_hold_invoice(&self, hash: PaymentHash, _: u64) -> Result<String, NodeError> {
        self.invoices.lock().unwrap().insert(hash, State::Open);
        Ok(hash.to_lower_hex_string())
    }
    async fn hold_invoice_accepted(&self, hash: PaymentHash) -> Result<bool, NodeError> {
        Ok(self.invoices.lock().unwrap().get(&hash) == Some(&State::Accepted))
    }
    async fn cancel_invoice(&self, hash: PaymentHash) -> Result<(), NodeError> {
        self.invoices.lock().unwrap().insert(hash, State::Canceled);
        self.cancels
            .lock()
            .unwrap()
            .push(tokio::time::Instant::now());
        self.changed.notify_waiters();
        Ok(())
    }
}

#[async_trait]
impl HealthCheck for HoldPair {
    /// The accomplice's word: one pending HTLC per accepted invoice.
    async fn channel_health(&self) -> Result<crate::node::ChannelHealth, NodeError> {
        Ok(crate::node::ChannelHealth {
            channels: 1,
            active: 1,
            pending_htlcs: Some(self.count(State::Accepted) as u32),
            force_closed: 0,
        })
    }
}

fn plan(pair: &Arc<HoldPair>, stop: Duration) -> Plan {
    // 100 ms a payment: the paused clock moves on while the load waits.
    let alice = FakeConfig {
        latency: crate::node::fake::FakeLatency::Fixed(Duration::from_millis(100)),
        ..FakeConfig::instant("alice")
    };
    let receiver = FakeNode::new(FakeConfig::instant("bob"));
    Plan {
        routes: vec![Route {
            sender: Arc::new(FakeNode::new(alice)),
            receiver_pubkey: receiver.pubkey().to_string(),
            receiver: Arc::new(receiver),
        }],
        kind: PaymentKind::Keysend,
        amount_msat: 1_000,
        load: Load::Closed { concurrency: 1 },
        stop: StopCondition {
            payments: None,
            duration: Some(stop),
            liquidity_failures: None,
        },
        payment_timeout: Duration::from_secs(60),
        ledger: None,
        stream: None,
        max_parts: None,
        attack: Some(attack::AttackPlan {
            attacker: pair.clone(),
            accomplice: pair.clone(),
            slots: 3,
            amount_msat: 5_000,
            hold: Duration::from_secs(2),
            start: Duration::from_secs(2),
            duration: Duration::from_secs(5),
        }),
        rebalance: None,
    }
}

#[tokio::test(start_paused = true)]
async fn slots_reach_their_target_are_refreshed_and_all_cancelled_at_the_end() {
    let pair = Arc::new(HoldPair::default());
    let (recorder, _snapshots) = Recorder::new();
    let (_tx, rx) = mpsc::unbounded_channel();
    let plan = plan(&pair, Duration::from_secs(10));
    let outcome = run(plan, recorder, rx, CancellationToken::new()).await;
    let attack = outcome.unwrap().summary.attack.expect("results.attack");
    assert_eq!(attack.slots_held_max, 3, "{attack:?}");
    // Held 2 s each over a 5 s window: every slot was refreshed at least twice.
    assert!(attack.accepted >= 9, "{attack:?}");
    assert_eq!(attack.cancelled, attack.invoices, "{attack:?}");
    assert_eq!((attack.cancel_errors, attack.left_held), (0, 0));
    assert!(attack.missed_by_reason.is_empty(), "{attack:?}");
    assert_eq!(pair.count(State::Accepted) + pair.count(State::Open), 0);
    // Nothing held before the window, the target during it, nothing after it.
    assert_eq!(attack.slots_held.first(), Some(&0), "{attack:?}");
    assert_eq!(attack.slots_held.get(3), Some(&3), "{attack:?}");
    assert_eq!(attack.slots_held.last(), Some(&0), "{attack:?}");
    // The accomplice's own count, asked each second after the tool's: never below it
    // (a slot counts once the node has accepted its HTLC, seen by a poll up to 200 ms
    // later), the same at the peak and after the window.
    let node: Vec<u32> = (attack.accomplice_pending_htlcs.iter())
        .map(|n| n.expect("the fake answers"))
        .collect();
    assert_eq!(node.len(), attack.slots_held.len());
    let pairs = node.iter().zip(&attack.slots_held);
    assert!(pairs.clone().all(|(n, t)| n >= t), "{attack:?}");
    assert_eq!(node.iter().max(), Some(&3), "{attack:?}");
    assert_eq!(node.last(), Some(&0), "{attack:?}");
    assert_eq!(attack.accomplice_pending_after, Some(0));
    assert!(attack.before.ok > 0 && attack.during.ok > 0 && attack.after.ok > 0);
    assert!(
        attack.cost.locked_msat_s >= 3.0 * 5_000.0 * 4.0,
        "{attack:?}"
    );
    assert_eq!(attack.cost.fees_paid_msat, 0);
}

/// A CI run started an attack whose attacker had not yet learnt the route: it held
/// nothing, and the report did not say why.
#[tokio::test(start_paused = true)]
async fn an_attacker_without_a_route_holds_nothing_and_the_report_says_why() {
    let pair = Arc::new(HoldPair {
        no_route: true,
        ..HoldPair::default()
    });
    let (recorder, _snapshots) = Recorder::new();
    let (_tx, rx) = mpsc::unbounded_channel();
    let plan = plan(&pair, Duration::from_secs(10));
    let outcome = run(plan, recorder, rx, CancellationToken::new()).await;
    let attack = outcome.unwrap().summary.attack.expect("results.attack");
    assert_eq!((attack.slots_held_max, attack.accepted), (0, 0));
    // 3 slots over 5 s, a try a second each: every try missed, for want of a route.
    let missed = attack.missed_by_reason.get("no_route").copied();
    assert!(missed >= Some(12), "{attack:?}");
    assert_eq!(attack.missed_by_reason.len(), 1, "{attack:?}");
    assert!(missed <= Some(attack.invoices), "{attack:?}");
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_run_cancels_every_held_invoice() {
    let pair = Arc::new(HoldPair::default());
    let (recorder, _snapshots) = Recorder::new();
    let (_tx, rx) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let plan = plan(&pair, Duration::from_secs(10));
    let run = tokio::spawn(run(plan, recorder, rx, cancel.clone()));
    // Mid-window, with every slot held.
    tokio::time::sleep(Duration::from_millis(3_500)).await;
    assert_eq!(pair.count(State::Accepted), 3);
    cancel.cancel();
    let attack = run.await.unwrap().unwrap().summary.attack.unwrap();
    assert_eq!(pair.count(State::Accepted) + pair.count(State::Open), 0);
    assert_eq!((attack.left_held, attack.cancelled), (0, attack.invoices));
}

#[tokio::test(start_paused = true)]
async fn the_slots_refresh_one_after_another_not_all_at_once() {
    let pair = Arc::new(HoldPair::default());
    let (recorder, _snapshots) = Recorder::new();
    let (_tx, rx) = mpsc::unbounded_channel();
    let plan = plan(&pair, Duration::from_secs(10));
    run(plan, recorder, rx, CancellationToken::new())
        .await
        .unwrap();
    // 3 slots held 2 s each: the first refreshes 2/3 s apart, not in one instant.
    let cancels = pair.cancels.lock().unwrap().clone();
    assert!(cancels.len() >= 3, "{cancels:?}");
    for pair in cancels[..3].windows(2) {
        let gap = pair[1] - pair[0];
        assert!(gap >= Duration::from_millis(600), "{cancels:?}");
    }
}

#[test]
fn first_holds_spread_over_the_hold_time() {
    let hold = Duration::from_secs(6);
    let firsts: Vec<_> = (0..3).map(|i| attack::first_hold(hold, i, 3)).collect();
    let secs = [2, 4, 6].map(Duration::from_secs);
    assert_eq!(firsts, secs);
    assert_eq!(attack::first_hold(hold, 0, 0), hold);
}

/// An accomplice whose client has no hold invoices (validation refuses it before a
/// run) holds nothing: its slots end at once, and the load runs on to its end.
#[tokio::test(start_paused = true)]
async fn an_accomplice_without_hold_invoices_holds_nothing() {
    let pair = Arc::new(HoldPair::default());
    let mut plan = plan(&pair, Duration::from_secs(10));
    let fake: Arc<dyn LightningNode> = Arc::new(FakeNode::new(FakeConfig::instant("carol")));
    if let Some(a) = plan.attack.as_mut() {
        a.accomplice = fake;
    }
    let (recorder, _snapshots) = Recorder::new();
    let (_tx, rx) = mpsc::unbounded_channel();
    let outcome = run(plan, recorder, rx, CancellationToken::new()).await;
    let attack = outcome.unwrap().summary.attack.expect("results.attack");
    assert_eq!((attack.invoices, attack.accepted), (0, 0), "{attack:?}");
    assert_eq!(attack.slots_held_max, 0, "{attack:?}");
    // Nor can the fake tell its pending HTLCs: no health check.
    assert!(attack.accomplice_pending_htlcs.iter().all(Option::is_none));
    assert_eq!(attack.accomplice_pending_after, None);
}
