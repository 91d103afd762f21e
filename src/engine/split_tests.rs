//! `max_parts:` and `stop: liquidity_failures:` in the engine, against the fake node.

use super::*;
use crate::node::FailureReason;
use crate::node::fake::{FakeConfig, FakeNode};
use crate::scenario::StopCondition;

fn plan(sender: FakeNode, kind: PaymentKind, stop: StopCondition) -> Plan {
    let receiver = FakeNode::new(FakeConfig::instant("bob"));
    Plan {
        routes: vec![Route {
            sender: Arc::new(sender),
            receiver_pubkey: receiver.pubkey().to_string(),
            receiver: Arc::new(receiver),
        }],
        kind,
        amount_msat: 1_000,
        load: Load::Closed { concurrency: 2 },
        stop,
        payment_timeout: Duration::from_secs(60),
        ledger: None,
        stream: None,
        max_parts: None,
        attack: None,
        rebalance: None,
    }
}

async fn run_plan(plan: Plan) -> EngineOutcome {
    let (recorder, _snapshots) = Recorder::new();
    let (_tx, rx) = mpsc::unbounded_channel();
    run(plan, recorder, rx, CancellationToken::new())
        .await
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_drain_stops_at_its_liquidity_failures_and_times_the_first() {
    // Half the payments find no route: the load stops at the 7th such failure,
    // long before its payment count.
    let sender = FakeNode::new(FakeConfig {
        seed: 7,
        failures: vec![(FailureReason::NoRoute, 0.5)],
        ..FakeConfig::instant("alice")
    });
    let stop = StopCondition {
        payments: Some(100_000),
        duration: None,
        liquidity_failures: Some(7),
    };
    let outcome = run_plan(plan(sender, PaymentKind::Keysend, stop)).await;
    assert_eq!(outcome.stop_reason, StopReason::LiquidityFailures);
    let drain = outcome
        .summary
        .drain
        .expect("a drain reports results.drain");
    assert_eq!(drain.stop_after, 7);
    // Payments in flight when the 7th failed may still fail after it.
    assert!((7..=8).contains(&drain.liquidity_failures), "{drain:?}");
    assert!(drain.first_liquidity_failure_s.is_some(), "{drain:?}");
    let no_route = outcome.summary.failures_by_reason.get("no_route");
    assert_eq!(no_route, Some(&drain.liquidity_failures));
    assert!(
        outcome.summary.ok + outcome.summary.failed < 100,
        "stopped early"
    );
    assert_eq!(outcome.summary.parts, None);
}

#[tokio::test(start_paused = true)]
async fn other_failures_do_not_count_toward_a_drain() {
    let sender = FakeNode::new(FakeConfig {
        failures: vec![(FailureReason::IncorrectPaymentDetails, 1.0)],
        ..FakeConfig::instant("alice")
    });
    let stop = StopCondition {
        payments: Some(50),
        duration: None,
        liquidity_failures: Some(1),
    };
    let outcome = run_plan(plan(sender, PaymentKind::Keysend, stop)).await;
    assert_eq!(outcome.stop_reason, StopReason::PaymentCount);
    let drain = outcome.summary.drain.unwrap();
    assert_eq!(
        (drain.liquidity_failures, drain.first_liquidity_failure_s),
        (0, None)
    );
    assert_eq!(outcome.summary.failed, 50);
}

#[tokio::test(start_paused = true)]
async fn max_parts_pays_invoices_through_the_split_call_and_reports_parts() {
    // The fake client reads no HTLCs: its successes count as parts unknown.
    let sender = FakeNode::new(FakeConfig::instant("alice"));
    let stop = StopCondition {
        payments: Some(20),
        duration: None,
        liquidity_failures: None,
    };
    let mut p = plan(sender, PaymentKind::Invoice, stop);
    p.max_parts = Some(4);
    let outcome = run_plan(p).await;
    assert_eq!(outcome.summary.ok, 20);
    let parts = outcome
        .summary
        .parts
        .expect("max_parts reports results.parts");
    assert_eq!((parts.max_parts, parts.payments, parts.unknown), (4, 0, 20));
    assert!(parts.by_parts.is_empty());
    assert_eq!(outcome.summary.drain, None);
}
