use super::super::fake_api::FakeEclair;
use super::*;
use crate::node::LightningNode;
use crate::node::completion::Method;
use std::sync::atomic::Ordering;

const DEST: &str = "02abababababababababababababababababababababababababababababababab";

async fn node(fake: &FakeEclair, dir: &std::path::Path) -> super::super::EclairNode {
    let endpoint = fake.endpoint("carol", dir).unwrap();
    let mut node = super::super::EclairNode::connect("carol", &endpoint)
        .await
        .unwrap();
    node.open_events().await;
    node
}

/// Exact completion: events pushed 20, 50 and 120 ms after `sendtonode` came end the
/// payments, with no poll. A latency runs from the payment's start to the moment the
/// tool learns its end; the truth is the same start to the moment the node (the fake)
/// declared the end, so each payment's error is how much later than that moment it
/// returned (one clock: the test's). It is never negative; how small it is (under a
/// millisecond on a quiet machine) is a timed claim, held by `benches/completion.rs`,
/// and printed here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_events_end_payments_after_the_truth_without_polling() {
    let fake = FakeEclair::start().await;
    let dir = tempfile::tempdir().unwrap();
    let node = node(&fake, dir.path()).await;
    let errors_us = one_round(&fake, &node, 0).await;
    assert_eq!(errors_us.len(), 9);
    assert_eq!(fake.sent_info_calls(), 0, "no poll while the socket is up");
    let completion = node.completion();
    assert_eq!(completion.method, Method::WebsocketEvent);
    assert_eq!(completion.late_up_to_ms, 0.0);
    assert_eq!(completion.fallback, None);
    assert!(
        completion.delivery_lag_max_ms.is_some(),
        "lag measured from the events' timestamps"
    );
}

/// Nine payments whose events come 20, 50 and 120 ms after the fake received them;
/// each one's error (µs): how much later than the event's push the payment returned.
async fn one_round(fake: &FakeEclair, node: &super::super::EclairNode, first: usize) -> Vec<u64> {
    let delays = [20, 50, 120, 20, 50, 120, 20, 50, 120];
    fake.script
        .delays
        .lock()
        .unwrap()
        .extend(delays.iter().map(|&ms| Duration::from_millis(ms)));
    let (mut errors_us, mut request_legs_us) = (Vec::new(), Vec::new());
    for (n, delay) in delays.iter().enumerate() {
        let started = Instant::now();
        let outcome = node.keysend(DEST, 1000, Duration::from_secs(10)).await;
        let returned = Instant::now();
        assert_eq!(
            outcome.unwrap(),
            PaymentOutcome::Succeeded {
                fee_msat: 2,
                hops: 0
            }
        );
        let id = super::super::fake_api::payment_id((first + n) as u64);
        let (received, pushed) = fake.truth(&id).expect("the fake saw the payment");
        let pushed = pushed.expect("the event was pushed");
        assert!(pushed - received >= Duration::from_millis(*delay));
        let latency = returned - started;
        let truth = pushed - started;
        assert!(latency >= truth, "latency {latency:?} < truth {truth:?}");
        errors_us.push((latency - truth).as_micros() as u64);
        request_legs_us.push((received - started).as_micros() as u64);
    }
    println!("latency - truth per payment (µs): {errors_us:?}");
    println!("request leg per payment (µs): {request_legs_us:?}");
    errors_us
}

#[tokio::test]
async fn an_event_that_comes_before_the_answer_waits_for_its_payment() {
    let fake = FakeEclair::start().await;
    fake.script.event_first.store(true, Ordering::SeqCst);
    let dir = tempfile::tempdir().unwrap();
    let node = node(&fake, dir.path()).await;
    let outcome = node.keysend(DEST, 1000, Duration::from_secs(10)).await;
    assert!(
        matches!(outcome, Ok(PaymentOutcome::Succeeded { fee_msat: 2, .. })),
        "{outcome:?}"
    );
    assert_eq!(fake.sent_info_calls(), 0);
}

/// The socket drops and cannot reopen: the payment learns its end from
/// `getsentinfo`, and the completion line counts it and the drop.
#[tokio::test]
async fn a_dropped_socket_falls_back_on_polling_and_says_so() {
    let fake = FakeEclair::start().await;
    let dir = tempfile::tempdir().unwrap();
    let node = node(&fake, dir.path()).await;
    assert_eq!(fake.sockets_opened(), 1);
    fake.script.refuse_sockets.store(true, Ordering::SeqCst);
    fake.script.sent_info_final.store(true, Ordering::SeqCst);
    fake.close_sockets();
    // No event is scheduled: only a poll can end the payment.
    let outcome = node.keysend(DEST, 1000, Duration::from_secs(10)).await;
    assert_eq!(
        outcome.unwrap(),
        PaymentOutcome::Succeeded {
            fee_msat: 3,
            hops: 2
        }
    );
    assert!(fake.sent_info_calls() >= 1);
    let completion = node.completion();
    let fallback = completion
        .fallback
        .clone()
        .expect("the fallback is reported");
    assert_eq!(fallback.payments, 1);
    assert_eq!(fallback.socket_drops, 1);
    assert!(
        completion
            .describe()
            .contains("1 payment by polling getsentinfo")
    );
    // Sockets allowed again: the reader opens a new one.
    fake.script.refuse_sockets.store(false, Ordering::SeqCst);
    let reopened = async {
        while fake.sockets_opened() < 2 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), reopened)
        .await
        .expect("the socket reopens");
}

#[test]
fn events_give_the_id_the_outcome_and_eclairs_timestamp() {
    let sent = r#"{"type":"payment-sent","id":"487da196","paymentHash":"00","parts":[
        {"id":"a","amount":21,"feesPaid":1,"toChannelId":"00","timestamp":{"iso":"2019-03-28T14:45:37.711Z","unix":1553784337}},
        {"id":"b","amount":21,"feesPaid":2,"toChannelId":"00","route":[{},{},{}],"timestamp":{"iso":"2019-03-28T14:45:37.700Z","unix":1553784337}}]}"#;
    let (id, outcome, stamp) = parse_event(sent).unwrap();
    assert_eq!(id, "487da196");
    assert_eq!(
        outcome,
        PaymentOutcome::Succeeded {
            fee_msat: 3,
            hops: 3
        }
    );
    let earliest = SystemTime::UNIX_EPOCH + Duration::from_millis(1_553_784_337_700);
    assert_eq!(stamp, Some(earliest));
    let failed = r#"{"type":"payment-failed","id":"f1","paymentHash":"00","failures":[
        {"amount":5,"route":[],"t":"route not found"}],"timestamp":{"iso":"2019-03-28T14:56:03Z","unix":1553784963}}"#;
    let (id, outcome, stamp) = parse_event(failed).unwrap();
    assert_eq!(id, "f1");
    assert_eq!(
        outcome,
        PaymentOutcome::Failed {
            reason: FailureReason::NoRoute
        }
    );
    assert!(stamp.is_some());
    assert_eq!(
        parse_event(r#"{"type":"payment-received","paymentHash":"00"}"#),
        None
    );
    assert_eq!(parse_event(r#"{"type":"channel-opened"}"#), None);
    assert_eq!(parse_event("not json"), None);
}

#[test]
fn early_events_are_kept_a_while_and_at_most_so_many() {
    let mut table = Table::default();
    let at = Instant::now();
    let ok = || PaymentOutcome::Succeeded {
        fee_msat: 0,
        hops: 0,
    };
    table.keep_early("old".into(), Ended { outcome: ok(), at });
    table.keep_early(
        "new".into(),
        Ended {
            outcome: ok(),
            at: at + EARLY_KEEP + Duration::from_secs(1),
        },
    );
    assert!(!table.early.contains_key("old"), "dropped once too old");
    assert!(table.early.contains_key("new"));
    for n in 0..EARLY_MAX + 5 {
        table.keep_early(
            n.to_string(),
            Ended {
                outcome: ok(),
                at: at + EARLY_KEEP + Duration::from_secs(1),
            },
        );
    }
    assert_eq!(table.early.len(), EARLY_MAX);
    assert_eq!(table.early_order.len(), EARLY_MAX);
}

/// A server that takes the connection and never answers the websocket handshake: the
/// reader's attempt fails at its deadline (and the reader tries again), instead of
/// waiting forever. The outer timeout only turns a hang into a failure of this test.
#[tokio::test(start_paused = true)]
async fn a_handshake_that_is_never_answered_fails_at_its_deadline() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let (connected, _) = watch::channel(false);
    let reader = Reader {
        node: "carol".into(),
        url: format!("ws://{addr}/ws"),
        auth: basic_auth("x"),
        shared: Arc::new(Shared {
            table: Mutex::default(),
            connected,
            drops: AtomicU64::new(0),
            polled_down: AtomicU64::new(0),
            polled_up: AtomicU64::new(0),
            lag_max_us: AtomicU64::new(0),
            lags: AtomicU64::new(0),
        }),
        stop: CancellationToken::new(),
    };
    let attempt = tokio::time::timeout(Duration::from_secs(600), reader.connect()).await;
    let err = attempt.expect("the handshake hung").unwrap_err();
    assert!(
        err.to_string().contains("websocket handshake within"),
        "{err}"
    );
}
