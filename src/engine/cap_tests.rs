//! Mainnet caps in the engine: what fake nodes report paid (amounts and fees, the
//! warm-up included) never crosses `max_total_msat`, and amounts stay under
//! `max_payment_msat`. On tokio's paused clock.

use super::ledger::SpendLedger;
use super::*;
use crate::node::Ledger;
use crate::node::fake::{FakeConfig, FakeLatency, FakeNetwork, FakeNode};
use crate::scenario::{Activity, Dist, Phase, PhaseKind};

const AMOUNT: u64 = 1_000;
const FEE: u64 = 7;

/// Alice pays bob on one fake network; alice charges `FEE` per payment.
fn pair() -> (FakeNode, FakeNode) {
    let network = FakeNetwork::default();
    let node = |name: &str, seed| {
        FakeNode::new(FakeConfig {
            seed,
            latency: FakeLatency::Fixed(Duration::from_millis(10)),
            network: Some(network.clone()),
            fee_msat: FEE,
            ..FakeConfig::instant(name)
        })
    };
    (node("alice", 1), node("bob", 2))
}

fn capped_plan(
    alice: &FakeNode,
    bob: &FakeNode,
    load: Load,
    stop: StopCondition,
    ledger: &Arc<SpendLedger>,
) -> Plan {
    Plan {
        routes: vec![Route {
            sender: Arc::new(alice.clone()),
            receiver_pubkey: bob.pubkey().to_string(),
            receiver: Arc::new(bob.clone()),
        }],
        kind: PaymentKind::Keysend,
        amount_msat: AMOUNT,
        load,
        stop,
        payment_timeout: Duration::from_secs(60),
        ledger: Some(ledger.clone()),
        stream: None,
        max_parts: None,
        attack: None,
        rebalance: None,
    }
}

async fn run_plan(plan: Plan, activity: Option<Arc<activity::ActivityPlan>>) -> EngineOutcome {
    let (recorder, _snapshots) = Recorder::new();
    let (_tx, rx) = mpsc::unbounded_channel();
    run_with_activity(plan, activity, recorder, rx, CancellationToken::new())
        .await
        .unwrap()
}

/// What the sender's node reports it paid: amounts of its successful payments plus
/// their fees.
async fn reported_paid(sender: &FakeNode, amount_each: u64) -> u64 {
    let l = sender.payment_ledger().await.unwrap();
    l.sent_succeeded * amount_each + l.fees_paid_msat
}

#[tokio::test(start_paused = true)]
async fn closed_loop_stops_before_the_total_is_crossed() {
    let (alice, bob) = pair();
    let total = 10 * AMOUNT + 500;
    let ledger = Arc::new(SpendLedger::new(AMOUNT + 100, total));
    let stop = StopCondition {
        payments: Some(100),
        duration: None,
        liquidity_failures: None,
    };
    let load = Load::Closed { concurrency: 4 };
    let outcome = run_plan(capped_plan(&alice, &bob, load, stop, &ledger), None).await;
    assert_eq!(outcome.stop_reason, StopReason::CapReached);
    let paid = reported_paid(&alice, AMOUNT).await;
    assert!(paid <= total, "paid {paid} msat, cap {total}");
    // It stopped at the cap, not far before it: nine payments with fees fit.
    assert!(paid >= 9 * (AMOUNT + FEE), "paid only {paid} msat");
    assert_eq!(
        ledger.spent().paid_msat,
        paid,
        "the ledger counts what was paid"
    );
    assert!(outcome.summary.ok < 100);
}

#[tokio::test(start_paused = true)]
async fn warm_up_payments_count_against_the_total() {
    let (alice, bob) = pair();
    // Warm-up: 50 payments; then 50 timed ones. Without caps, 100 would be paid.
    let phase = |kind, secs| Phase {
        kind,
        from_rate: 10.0,
        to_rate: 10.0,
        duration: Duration::from_secs(secs),
    };
    let load = Load::Open {
        phases: vec![phase(PhaseKind::WarmUp, 5), phase(PhaseKind::Hold, 5)],
    };
    let stop = StopCondition {
        payments: Some(50),
        duration: None,
        liquidity_failures: None,
    };
    let total = 60 * AMOUNT;
    let ledger = Arc::new(SpendLedger::new(AMOUNT + 100, total));
    let outcome = run_plan(capped_plan(&alice, &bob, load, stop, &ledger), None).await;
    assert_eq!(outcome.stop_reason, StopReason::CapReached);
    assert_eq!(outcome.summary.warm_up_excluded, 50, "the warm-up was paid");
    let paid = reported_paid(&alice, AMOUNT).await;
    assert!(
        paid <= total,
        "paid {paid} msat (warm-up included), cap {total}"
    );
    assert!(
        outcome.summary.ok < 50,
        "{} timed payments",
        outcome.summary.ok
    );
}

#[tokio::test(start_paused = true)]
async fn activity_amounts_are_clamped_to_the_payment_cap() {
    let (alice, bob) = pair();
    let activity = Activity {
        senders: vec!["alice".into()],
        peers: vec!["alice".into(), "bob".into()],
        // Median 1000 msat, wide: many samples far above the cap.
        amount_msat: Dist::LogNormal {
            median: 1_000.0,
            sigma: 2.0,
        },
        seed: 7,
    };
    let (routes, plan) = activity::ActivityPlan::new(&activity, None, |_, _| Route {
        sender: Arc::new(alice.clone()),
        receiver_pubkey: bob.pubkey().to_string(),
        receiver: Arc::new(bob.clone()),
    });
    let cap = 1_500;
    let ledger = Arc::new(SpendLedger::new(cap, u64::MAX));
    let stop = StopCondition {
        payments: Some(200),
        duration: None,
        liquidity_failures: None,
    };
    let mut capped = capped_plan(&alice, &bob, Load::Closed { concurrency: 2 }, stop, &ledger);
    capped.routes = routes;
    let outcome = run_plan(capped, Some(Arc::new(plan))).await;
    assert_eq!(outcome.stop_reason, StopReason::PaymentCount);
    let received = bob.payment_ledger().await.unwrap();
    assert!(received.received > 0);
    assert!(
        received.received_msat <= received.received * cap,
        "bob received {} msat in {} payments, cap {cap} each",
        received.received_msat,
        received.received
    );
    let clamped = ledger.spent().clamped;
    assert!(clamped > 0, "some samples were above the cap");
    // A clamped amount leaves no fee budget under the per-payment cap, below
    // alice's fee: those payments fail rather than pay past the cap.
    let s = &outcome.summary;
    assert_eq!(s.ok + s.failed, 200);
    assert!(
        s.failed >= clamped,
        "{} failed, {clamped} clamped",
        s.failed
    );
}
