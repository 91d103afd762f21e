//! Tests of the fake node: its failure model, ledger and latency.

use super::*;
use crate::node::Ledger;

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
    let sent = alice.payment_ledger().await.unwrap();
    assert_eq!((sent.sent_succeeded, sent.sent_in_flight), (1, 1));
    tokio::time::sleep(Duration::from_millis(20)).await;
    let sent = alice.payment_ledger().await.unwrap();
    assert_eq!((sent.sent_succeeded, sent.sent_in_flight), (2, 0));
    assert_eq!(sent.fees_paid_msat, 2 * FEE_MSAT);
    let received = bob.payment_ledger().await.unwrap();
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
    let in_flight = ok.sent_statuses(&asked).await.unwrap();
    assert_eq!(
        in_flight,
        HashMap::from([(hash(abandoned), SentStatus::InFlight)])
    );
    pay(&timing_out, timed_out).await.unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let ended = ok.sent_statuses(&asked).await.unwrap();
    assert_eq!(
        ended,
        HashMap::from([(hash(abandoned), SentStatus::Succeeded)])
    );
    let failed = timing_out.sent_statuses(&asked).await.unwrap();
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

/// On a network on a chain, setup's steps matter as on real nodes: coins count once
/// mined, a channel needs a connected peer and the funds, it carries payments only
/// at its funding depth and while both ends are up, and a payment needs a path.
#[tokio::test]
async fn on_a_chain_channels_need_peers_funds_and_depth_and_payments_a_path() {
    use crate::chain::ChainBackend;
    use crate::chain::fake::FakeChain;
    let chain = FakeChain::new();
    let network = FakeNetwork::on_chain(chain.clone());
    let node = |name: &str, seed| {
        FakeNode::new(FakeConfig {
            seed,
            network: Some(network.clone()),
            ..FakeConfig::instant(name)
        })
    };
    let (alice, bob, carol) = (node("alice", 1), node("bob", 2), node("carol", 3));
    let no_route = || PaymentOutcome::Failed {
        reason: FailureReason::NoRoute,
    };
    let pay = |from: &FakeNode, to: &FakeNode| {
        let (from, to) = (from.clone(), to.pubkey().to_string());
        async move {
            from.keysend(&to, 1_000, Duration::from_secs(1))
                .await
                .unwrap()
        }
    };
    assert_eq!(pay(&alice, &carol).await, no_route());

    let address = alice.new_address().await.unwrap();
    chain.fund(&[(address, 300_000)]).await.unwrap();
    assert_eq!(alice.wallet_balance().await.unwrap().confirmed_sat, 0);
    chain.mine(1).await.unwrap();
    assert_eq!(alice.wallet_balance().await.unwrap().confirmed_sat, 300_000);

    let refused = alice.open_channel(bob.pubkey(), 100_000).await;
    assert!(refused.unwrap_err().to_string().contains("not connected"));
    alice
        .connect_peer(bob.pubkey(), "in-process:bob")
        .await
        .unwrap();
    let too_much = alice.open_channel(bob.pubkey(), 400_000).await;
    assert!(
        too_much
            .unwrap_err()
            .to_string()
            .contains("not enough funds")
    );
    alice.open_channel(bob.pubkey(), 100_000).await.unwrap();
    assert_eq!(alice.wallet_balance().await.unwrap().confirmed_sat, 200_000);
    bob.connect_peer(carol.pubkey(), "in-process:carol")
        .await
        .unwrap();
    assert!(
        bob.open_channel(carol.pubkey(), 100_000).await.is_err(),
        "bob has no coins"
    );
    chain.mine(1).await.unwrap();
    let channels = bob.list_channels().await.unwrap();
    assert_eq!(channels.len(), 1);
    assert!(
        !channels[0].active,
        "one confirmation is not the funding depth"
    );
    assert_eq!(pay(&alice, &bob).await, no_route());

    chain.mine(2).await.unwrap();
    assert!(bob.list_channels().await.unwrap()[0].active);
    assert_eq!(bob.get_info().await.unwrap().num_active_channels, 1);
    assert!(matches!(
        pay(&alice, &bob).await,
        PaymentOutcome::Succeeded { hops: 1, .. }
    ));
    assert_eq!(
        pay(&alice, &carol).await,
        no_route(),
        "no channel reaches carol"
    );
    let address = bob.new_address().await.unwrap();
    chain.fund(&[(address, 150_000)]).await.unwrap();
    chain.mine(1).await.unwrap();
    bob.open_channel(carol.pubkey(), 100_000).await.unwrap();
    chain.mine(3).await.unwrap();
    assert!(matches!(
        pay(&alice, &carol).await,
        PaymentOutcome::Succeeded { hops: 2, .. }
    ));

    bob.set_down(true);
    assert!(bob.get_info().await.is_err());
    assert!(!alice.list_channels().await.unwrap()[0].active);
    assert_eq!(pay(&alice, &bob).await, no_route());
    bob.set_down(false);
    assert_eq!(bob.payment_ledger().await.unwrap().received, 1);
    assert_eq!(carol.payment_ledger().await.unwrap().received, 1);
    assert_eq!(chain.tip(), crate::chain::fake::MATURE_HEIGHT + 8);
}

/// The fake offers what the engine's tests drive on it (custom records, payments to
/// itself, its ledger) and nothing else; a hidden ledger is no longer offered.
#[test]
fn offers_its_capabilities_and_hides_its_ledger_on_request() {
    let node = FakeNode::new(FakeConfig::instant("alice"));
    assert!(node.custom_records().is_some());
    assert!(node.circular_payments().is_some());
    assert!(node.own_ledger().is_some());
    assert!(node.hold_invoices().is_none());
    assert!(node.part_limit().is_none());
    assert!(node.record_counts().is_none());
    assert!(node.health_check().is_none());
    assert!(node.network_name().is_none());
    node.hide_ledger();
    assert!(node.own_ledger().is_none());
}
