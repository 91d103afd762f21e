//! Tests of the fake node: its failure model, ledger and latency.

use super::*;

fn failing(seed: u64) -> FakeNode {
    FakeNode::new(FakeConfig {
        seed,
        failures: vec![(FailureReason::NoRoute, 0.2), (FailureReason::Timeout, 0.1)],
        rpc_error_rate: 0.05,
        ..FakeConfig::instant("f")
    })
}

async fn tally(node: &FakeNode, n: usize) -> (usize, usize, usize, usize) {
    let (mut ok, mut no_route, mut timeout, mut rpc) = (0, 0, 0, 0);
    for _ in 0..n {
        match node.keysend("x", 1, Duration::from_secs(1)).await {
            Ok(PaymentOutcome::Succeeded { .. }) => ok += 1,
            Ok(PaymentOutcome::Failed {
                reason: FailureReason::NoRoute,
            }) => no_route += 1,
            Ok(PaymentOutcome::Failed {
                reason: FailureReason::Timeout,
            }) => timeout += 1,
            Ok(PaymentOutcome::Failed { reason }) => panic!("unexpected {reason:?}"),
            Err(_) => rpc += 1,
        }
    }
    (ok, no_route, timeout, rpc)
}

#[tokio::test]
async fn failure_model_is_seeded_and_follows_probabilities() {
    let a = tally(&failing(7), 10_000).await;
    let b = tally(&failing(7), 10_000).await;
    assert_eq!(a, b, "same seed, same outcomes");
    let (ok, no_route, timeout, rpc) = a;
    assert!((6_200..6_800).contains(&ok), "ok {ok}");
    assert!((1_800..2_200).contains(&no_route), "no_route {no_route}");
    assert!((850..1_150).contains(&timeout), "timeout {timeout}");
    assert!((400..600).contains(&rpc), "rpc {rpc}");
    assert_ne!(a, tally(&failing(8), 10_000).await, "another seed differs");
}

#[tokio::test(start_paused = true)]
async fn the_ledger_books_abandoned_payments_and_credits_the_receiver() {
    let network = FakeNetwork::default();
    let node = |name: &str, seed, lost| {
        FakeNode::new(FakeConfig {
            seed,
            latency: FakeLatency::Fixed(Duration::from_millis(10)),
            network: Some(network.clone()),
            unrecorded_receipts: lost,
            ..FakeConfig::instant(name)
        })
    };
    let (alice, bob) = (node("alice", 1, 0), node("bob", 2, 1));
    alice
        .keysend(bob.pubkey(), 5, Duration::from_secs(1))
        .await
        .unwrap();
    let invoice = bob.create_invoice(7).await.unwrap();
    // Abandoned by its caller at once: the payment runs on at the node.
    let abandoned = alice.pay_invoice(&invoice.bolt11, Duration::from_secs(1));
    assert!(
        tokio::time::timeout(Duration::from_millis(1), abandoned)
            .await
            .is_err()
    );
    let sent = alice.payment_ledger().await.unwrap().unwrap();
    assert_eq!((sent.sent_succeeded, sent.sent_in_flight), (1, 1));
    tokio::time::sleep(Duration::from_millis(20)).await;
    let sent = alice.payment_ledger().await.unwrap().unwrap();
    assert_eq!((sent.sent_succeeded, sent.sent_in_flight), (2, 0));
    assert_eq!(sent.fees_paid_msat, 2 * FEE_MSAT);
    let received = bob.payment_ledger().await.unwrap().unwrap();
    // Two received, one left out by the test hook; the amounts are both kept.
    assert_eq!((received.received, received.received_msat), (1, 12));
}

/// The payments whose end the caller did not see are known by hash: a timed-out
/// one as failed, an abandoned one as it ended; the others are forgotten.
#[tokio::test(start_paused = true)]
async fn the_status_of_unseen_ends_is_kept_by_hash() {
    let slow = |seed, failures| {
        FakeNode::new(FakeConfig {
            seed,
            latency: FakeLatency::Fixed(Duration::from_millis(10)),
            failures,
            ..FakeConfig::instant("s")
        })
    };
    let (ok, timing_out) = (
        slow(1, vec![]),
        slow(2, vec![(FailureReason::Timeout, 1.0)]),
    );
    let [seen, abandoned, timed_out] = [1u8, 2, 3];
    let pay = |node: &FakeNode, p: u8| {
        let (node, preimage) = (node.clone(), [p; 32]);
        async move {
            node.keysend_with("x", 1, preimage, Duration::from_secs(1))
                .await
        }
    };
    pay(&ok, seen).await.unwrap();
    assert!(
        tokio::time::timeout(Duration::from_millis(1), pay(&ok, abandoned))
            .await
            .is_err()
    );
    let hash = |p: u8| sha256::Hash::hash(&[p; 32]).to_byte_array();
    let asked = [hash(seen), hash(abandoned), hash(timed_out), [9; 32]];
    let in_flight = ok.sent_statuses(&asked).await.unwrap().unwrap();
    assert_eq!(
        in_flight,
        HashMap::from([(hash(abandoned), SentStatus::InFlight)])
    );
    pay(&timing_out, timed_out).await.unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let ended = ok.sent_statuses(&asked).await.unwrap().unwrap();
    assert_eq!(
        ended,
        HashMap::from([(hash(abandoned), SentStatus::Succeeded)])
    );
    let failed = timing_out.sent_statuses(&asked).await.unwrap().unwrap();
    assert_eq!(
        failed,
        HashMap::from([(hash(timed_out), SentStatus::Failed)])
    );
}

#[tokio::test(start_paused = true)]
async fn latency_model_sleeps_within_bounds() {
    let node = FakeNode::new(FakeConfig {
        latency: FakeLatency::Uniform {
            min: Duration::from_millis(10),
            max: Duration::from_millis(20),
        },
        ..FakeConfig::instant("u")
    });
    for _ in 0..50 {
        let start = tokio::time::Instant::now();
        node.keysend("x", 1, Duration::from_secs(1)).await.unwrap();
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(10) && took < Duration::from_millis(21));
    }
    assert_eq!(node.payments_started(), 50);
}
