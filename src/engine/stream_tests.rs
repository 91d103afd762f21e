//! Stream ticks in the engine on fake nodes: every tick pays each recipient its
//! share, the tick counts once in the load's figures, each split on its own route
//! and in the stream's figures. On tokio's paused clock.

use super::stream::StreamPlan;
use super::*;
use crate::node::fake::{FakeConfig, FakeLatency, FakeNetwork, FakeNode};
use crate::node::{FailureReason, Ledger, LightningNode};

const SHARES: [u64; 3] = [500, 300, 200];

/// Two listeners streaming to three recipients on one fake network.
fn nodes(failures: Vec<(FailureReason, f64)>) -> (Vec<FakeNode>, Vec<FakeNode>) {
    let network = FakeNetwork::default();
    let node = |name: &str, seed| {
        FakeNode::new(FakeConfig {
            seed,
            latency: FakeLatency::Fixed(Duration::from_millis(5)),
            network: Some(network.clone()),
            failures: failures.clone(),
            ..FakeConfig::instant(name)
        })
    };
    let senders = vec![node("listener-1", 1), node("listener-2", 2)];
    let recipients = vec![node("host", 3), node("guest", 4), node("app", 5)];
    (senders, recipients)
}

fn stream_plan(senders: &[FakeNode], recipients: &[FakeNode], ticks: u64) -> Plan {
    let mut routes = Vec::new();
    for s in senders {
        for r in recipients {
            routes.push(Route {
                sender: Arc::new(s.clone()),
                receiver_pubkey: r.pubkey().to_string(),
                receiver: Arc::new(r.clone()),
            });
        }
    }
    Plan {
        routes,
        kind: PaymentKind::Stream,
        amount_msat: SHARES.iter().sum(),
        load: Load::Closed { concurrency: 4 },
        stop: StopCondition {
            payments: Some(ticks),
            duration: None,
            liquidity_failures: None,
        },
        payment_timeout: Duration::from_secs(60),
        ledger: None,
        max_parts: None,
        attack: None,
        rebalance: None,
        stream: Some(StreamPlan {
            amounts: SHARES.to_vec(),
        }),
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
async fn every_tick_pays_every_recipient_its_share() {
    let (senders, recipients) = nodes(Vec::new());
    let outcome = run_plan(stream_plan(&senders, &recipients, 20)).await;
    let s = &outcome.summary;
    assert_eq!((s.ok, s.failed), (20, 0), "a tick counts once");
    let stream = s.stream.as_ref().expect("a stream summary");
    assert_eq!((stream.ticks, stream.ticks_ok), (20, 20));
    assert_eq!((stream.splits, stream.splits_ok), (60, 60));
    for ((r, node), share) in stream.recipients.iter().zip(&recipients).zip(SHARES) {
        assert_eq!(r.recipient, node.name());
        assert_eq!((r.ok, r.amount_msat), (20, share));
        let received = node.payment_ledger().await.unwrap();
        assert_eq!(received.received, 20, "{}", r.recipient);
        assert_eq!(received.received_msat, 20 * share, "{}", r.recipient);
    }
    // Each split counted on its route; both listeners streamed.
    let routed: u64 = s.routes.iter().map(|r| r.ok).sum();
    assert_eq!(routed, 60);
    for sender in &senders {
        let sent = sender.payment_ledger().await.unwrap();
        assert!(sent.sent_succeeded > 0, "{} streamed", sender.name());
        let tallied: u64 = (s.routes.iter())
            .filter(|r| r.sender == sender.name())
            .map(|r| r.ok)
            .sum();
        assert_eq!(tallied, sent.sent_succeeded, "{}", sender.name());
    }
}

#[tokio::test(start_paused = true)]
async fn a_tick_with_a_failed_split_is_not_ok() {
    let (senders, recipients) = nodes(vec![(FailureReason::NoRoute, 0.3)]);
    let outcome = run_plan(stream_plan(&senders, &recipients, 100)).await;
    let s = &outcome.summary;
    let stream = s.stream.as_ref().unwrap();
    assert_eq!(stream.ticks, 100);
    assert!(
        stream.ticks_partial > 0 && stream.ticks_ok > 0,
        "{stream:?}"
    );
    assert_eq!(
        stream.ticks_ok + stream.ticks_partial + stream.ticks_failed + stream.ticks_indeterminate,
        100
    );
    assert_eq!(s.ok, stream.ticks_ok, "only whole ticks are ok");
    assert_eq!(s.failed, stream.ticks_partial + stream.ticks_failed);
    let failed: u64 = stream.recipients.iter().map(|r| r.failed).sum();
    assert_eq!(failed, stream.splits - stream.splits_ok);
    let no_route: u64 = (stream.recipients.iter())
        .map(|r| r.failures_by_reason.get("no_route").copied().unwrap_or(0))
        .sum();
    assert_eq!(no_route, failed);
    for (r, node) in stream.recipients.iter().zip(&recipients) {
        let received = node.payment_ledger().await.unwrap();
        assert_eq!(received.received, r.ok, "{}", r.recipient);
    }
}
