//! `workload: rebalance:` in the engine, against the fake node.

use super::*;
use crate::node::fake::{FakeConfig, FakeNode};
use crate::scenario::StopCondition;

/// Alice pays bob in a closed loop for `secs` seconds and rebalances every 5 s,
/// paying at most `max_fee_msat` a time to a node that charges `fee_msat`.
fn plan(secs: u64, fee_msat: u64, max_fee_msat: u64, below_sat: Option<u64>) -> Plan {
    // A latency, so that paused time moves on between the load's payments.
    let alice = FakeNode::new(FakeConfig {
        fee_msat,
        latency: crate::node::fake::FakeLatency::Fixed(Duration::from_millis(100)),
        ..FakeConfig::instant("alice")
    });
    let receiver = FakeNode::new(FakeConfig::instant("bob"));
    let carol = FakeNode::new(FakeConfig::instant("carol"));
    let hop = |n: &FakeNode, name: &str| (name.to_string(), n.pubkey().to_string());
    Plan {
        routes: vec![Route {
            sender: Arc::new(alice.clone()),
            receiver_pubkey: receiver.pubkey().to_string(),
            receiver: Arc::new(receiver.clone()),
        }],
        kind: PaymentKind::Keysend,
        amount_msat: 1_000,
        load: Load::Closed { concurrency: 1 },
        stop: StopCondition {
            payments: None,
            duration: Some(Duration::from_secs(secs)),
            liquidity_failures: None,
        },
        payment_timeout: Duration::from_secs(60),
        ledger: None,
        stream: None,
        max_parts: None,
        attack: None,
        rebalance: Some(rebalance::RebalancePlan {
            node: Arc::new(alice),
            first_hop: hop(&carol, "carol"),
            last_hop: hop(&receiver, "bob"),
            amount_msat: 200_000_000,
            every: Duration::from_secs(5),
            below_sat,
            max_fee_msat,
            timeout: Duration::from_secs(60),
        }),
    }
}

async fn run_plan(plan: Plan) -> EngineOutcome {
    run_watched(plan).await.0
}

/// The outcome, and the live line of the last snapshot.
async fn run_watched(plan: Plan) -> (EngineOutcome, String) {
    let (recorder, snapshots) = Recorder::new();
    let (_tx, rx) = mpsc::unbounded_channel();
    let outcome = run(plan, recorder, rx, CancellationToken::new())
        .await
        .unwrap();
    let live = snapshots.borrow().live.line();
    (outcome, live)
}

#[tokio::test(start_paused = true)]
async fn a_rebalance_runs_every_interval_and_counts_what_it_moved_and_paid() {
    let (outcome, live) = run_watched(plan(22, 3_000, 200_000, None)).await;
    // The live view showed them as they came.
    assert_eq!(live, "rebalances 4/4 ok · 12000 msat fees");
    let r = outcome.summary.rebalance.expect("results.rebalance");
    // Ticks at 5, 10, 15 and 20 s of a 22 s load.
    assert_eq!((r.ticks, r.skipped, r.sent, r.succeeded), (4, 0, 4, 4));
    assert_eq!((r.moved_msat, r.fees_paid_msat), (800_000_000, 12_000));
    assert_eq!(r.fee_ppm, Some(15.0));
    let starts: Vec<f64> = r.tries.iter().map(|t| t.start_s.round()).collect();
    assert_eq!(starts, [5.0, 10.0, 15.0, 20.0]);
    assert_eq!(r.first_success_s.map(f64::round), Some(5.0));
    // The load's own payments are alice's to bob only.
    assert!(outcome.summary.ok > 0);
    assert_eq!(outcome.summary.routes[0].ok, outcome.summary.ok);
}

#[tokio::test(start_paused = true)]
async fn a_route_dearer_than_the_limit_moves_nothing_and_says_why() {
    let outcome = run_plan(plan(12, 300_000, 200_000, None)).await;
    let r = outcome.summary.rebalance.expect("results.rebalance");
    assert_eq!(
        (r.sent, r.succeeded, r.moved_msat, r.fees_paid_msat),
        (2, 0, 0, 0)
    );
    assert_eq!(r.failed_by_reason.get("no_route"), Some(&2));
    assert_eq!(r.fee_ppm, None);
}

#[tokio::test(start_paused = true)]
async fn a_balance_at_the_threshold_skips_the_tick() {
    // The fake lists no channels: its balance toward bob reads 0, below 1 sat but
    // not below 0.
    let outcome = run_plan(plan(12, 1, 200_000, Some(0))).await;
    let r = outcome.summary.rebalance.expect("results.rebalance");
    assert_eq!((r.ticks, r.skipped, r.sent), (2, 2, 0));
    let outcome = run_plan(plan(12, 1, 200_000, Some(1))).await;
    let r = outcome.summary.rebalance.expect("results.rebalance");
    assert_eq!((r.ticks, r.skipped, r.sent), (2, 0, 2));
    assert_eq!(r.tries[0].balance_sat, Some(0));
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_run_does_not_wait_for_the_rebalance_in_flight() {
    let mut plan = plan(600, 1, 200_000, None);
    // A rebalance that would take ten minutes.
    let slow = FakeNode::new(FakeConfig {
        latency: crate::node::fake::FakeLatency::Fixed(Duration::from_secs(600)),
        ..FakeConfig::instant("alice")
    });
    if let Some(r) = plan.rebalance.as_mut() {
        r.node = Arc::new(slow);
    }
    let (recorder, _snapshots) = Recorder::new();
    let (_tx, rx) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let started = Instant::now();
    let stop = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(7)).await;
        stop.cancel();
    });
    let outcome = run(plan, recorder, rx, cancel).await.unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Cancelled);
    let r = outcome.summary.rebalance.expect("results.rebalance");
    // The one started at 5 s was left to the node: not counted.
    assert_eq!((r.ticks, r.sent), (1, 0), "{r:?}");
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(30),
        "the run ended {took:?} after its start"
    );
}
