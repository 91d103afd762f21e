//! Engine tests against the fake node, on tokio's paused clock so timing is exact.

use super::*;
use crate::metrics::{FailureKind, Snapshot};
use crate::node::FailureReason;
use crate::node::fake::{FakeConfig, FakeLatency, FakeNode};
use crate::scenario::{Phase, PhaseKind};
use tokio::sync::watch;

fn fake(latency: FakeLatency) -> FakeNode {
    FakeNode::new(FakeConfig {
        latency,
        ..FakeConfig::instant("alice")
    })
}

fn plan(sender: &FakeNode, load: Load, stop: StopCondition) -> Plan {
    let receiver = FakeNode::new(FakeConfig::instant("bob"));
    Plan {
        routes: vec![Route {
            sender: Arc::new(sender.clone()),
            receiver_pubkey: receiver.pubkey().to_string(),
            receiver: Arc::new(receiver),
        }],
        kind: PaymentKind::Keysend,
        amount_msat: 1_000,
        load,
        stop,
        payment_timeout: Duration::from_secs(60),
        ledger: None,
        stream: None,
        max_parts: None,
        attack: None,
        rebalance: None,
    }
}

fn count(n: u64) -> StopCondition {
    StopCondition {
        payments: Some(n),
        duration: None,
        liquidity_failures: None,
    }
}

fn secs(s: u64) -> StopCondition {
    StopCondition {
        payments: None,
        duration: Some(Duration::from_secs(s)),
        liquidity_failures: None,
    }
}

type Started = (
    tokio::task::JoinHandle<Result<EngineOutcome, EngineError>>,
    mpsc::UnboundedSender<Command>,
    watch::Receiver<Snapshot>,
    CancellationToken,
);

fn start(plan: Plan) -> Started {
    let (recorder, snapshots) = Recorder::new();
    let (tx, rx) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let handle = tokio::spawn(run(plan, recorder, rx, cancel.clone()));
    (handle, tx, snapshots, cancel)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[tokio::test(start_paused = true)]
async fn closed_loop_stops_at_exactly_n_with_failures_by_reason() {
    let sender = FakeNode::new(FakeConfig {
        seed: 42,
        latency: FakeLatency::Uniform {
            min: ms(1),
            max: ms(5),
        },
        failures: vec![(FailureReason::NoRoute, 0.1)],
        rpc_error_rate: 0.05,
        ..FakeConfig::instant("alice")
    });
    let (handle, _tx, _rx, _cancel) =
        start(plan(&sender, Load::Closed { concurrency: 7 }, count(1_000)));
    let outcome = handle.await.unwrap().unwrap();
    let s = outcome.summary;
    assert_eq!(outcome.stop_reason, StopReason::PaymentCount);
    assert_eq!(s.ok + s.failed, 1_000);
    assert_eq!(sender.payments_started(), 1_000);
    let no_route = s.failures_by_reason["no_route"];
    let rpc = s.failures_by_reason["rpc_error"];
    assert_eq!(no_route + rpc, s.failed);
    assert!((60..140).contains(&no_route), "{no_route}");
    assert!((25..75).contains(&rpc), "{rpc}");
    assert_eq!(s.latency.count, s.ok);
    assert!(s.latency.p50_us >= 1_000 && s.latency.max_us <= 5_100);
}

#[tokio::test(start_paused = true)]
async fn closed_loop_with_instant_node_counts_every_payment() {
    let sender = fake(FakeLatency::Zero);
    let (handle, ..) = start(plan(
        &sender,
        Load::Closed { concurrency: 64 },
        count(50_000),
    ));
    let s = handle.await.unwrap().unwrap().summary;
    assert_eq!((s.ok, s.failed), (50_000, 0));
}

#[tokio::test(start_paused = true)]
async fn set_concurrency_takes_effect() {
    let sender = fake(FakeLatency::Fixed(ms(10)));
    let (handle, tx, _rx, _cancel) = start(plan(&sender, Load::Closed { concurrency: 1 }, secs(2)));
    tokio::time::sleep(ms(1_000)).await;
    let at_one_second = sender.payments_started();
    tx.send(Command::SetConcurrency(4)).unwrap();
    let s = handle.await.unwrap().unwrap().summary;
    assert!((95..=101).contains(&at_one_second), "{at_one_second}");
    // 100 in the first second at 1 worker, ~400 in the second at 4.
    assert!((480..=510).contains(&s.ok), "{}", s.ok);
}

#[tokio::test(start_paused = true)]
async fn pause_stops_new_payments_and_is_not_load_time() {
    let sender = fake(FakeLatency::Fixed(ms(10)));
    let (handle, tx, _rx, _cancel) = start(plan(&sender, Load::Closed { concurrency: 2 }, secs(2)));
    tokio::time::sleep(ms(1_000)).await;
    tx.send(Command::Pause).unwrap();
    tokio::time::sleep(ms(50)).await;
    let paused_at = sender.payments_started();
    tokio::time::sleep(ms(3_000)).await;
    assert_eq!(
        sender.payments_started(),
        paused_at,
        "no payment starts while paused"
    );
    tx.send(Command::Resume).unwrap();
    let s = handle.await.unwrap().unwrap().summary;
    // Two active seconds at 2 x 100/s; the 3 s pause neither ends the run nor counts.
    assert!((390..=405).contains(&s.ok), "{}", s.ok);
    assert!((s.active_s - 2.0).abs() < 0.05, "{}", s.active_s);
    assert!(s.paused_s >= 3.0);
    assert!((s.tps_avg - 200.0).abs() < 5.0, "{}", s.tps_avg);
}

#[tokio::test(start_paused = true)]
async fn cancel_ends_quickly_and_counts_in_flight_as_indeterminate() {
    let sender = fake(FakeLatency::Fixed(Duration::from_secs(3_600)));
    let (handle, _tx, _rx, cancel) =
        start(plan(&sender, Load::Closed { concurrency: 8 }, secs(600)));
    tokio::time::sleep(ms(100)).await;
    let before = tokio::time::Instant::now();
    cancel.cancel();
    let outcome = handle.await.unwrap().unwrap();
    assert!(before.elapsed() < ms(100), "{:?}", before.elapsed());
    assert_eq!(outcome.stop_reason, StopReason::Cancelled);
    assert_eq!(outcome.summary.ok, 0);
    assert_eq!(outcome.summary.failed, 0);
    assert_eq!(outcome.summary.indeterminate, 8);
    assert!(outcome.summary.failures_by_reason.is_empty());
    let route = &outcome.summary.routes[0];
    assert_eq!((route.ok, route.failed, route.indeterminate), (0, 0, 8));
}

#[tokio::test]
async fn a_timed_out_payment_is_indeterminate_not_failed() {
    let sender = FakeNode::new(FakeConfig {
        failures: vec![(FailureReason::Timeout, 1.0)],
        ..FakeConfig::instant("alice")
    });
    let (handle, _tx, _rx, _cancel) =
        start(plan(&sender, Load::Closed { concurrency: 2 }, count(10)));
    let summary = handle.await.unwrap().unwrap().summary;
    assert_eq!(
        (summary.ok, summary.failed, summary.indeterminate),
        (0, 0, 10)
    );
    assert_eq!(summary.routes[0].indeterminate, 10);
}

#[tokio::test(start_paused = true)]
async fn stop_command_lets_in_flight_payments_finish() {
    let sender = fake(FakeLatency::Fixed(ms(500)));
    let (handle, tx, _rx, _cancel) =
        start(plan(&sender, Load::Closed { concurrency: 4 }, secs(600)));
    tokio::time::sleep(ms(1_250)).await;
    tx.send(Command::Stop).unwrap();
    let outcome = handle.await.unwrap().unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Command);
    // Rounds at 0, 0.5 and 1.0 s: the third finishes within the grace period.
    assert_eq!((outcome.summary.ok, outcome.summary.failed), (12, 0));
}

fn open(phases: Vec<Phase>) -> Load {
    Load::Open { phases }
}

fn phase(kind: PhaseKind, rate: f64, secs: u64) -> Phase {
    Phase {
        kind,
        from_rate: rate,
        to_rate: rate,
        duration: Duration::from_secs(secs),
    }
}

#[tokio::test(start_paused = true)]
async fn open_loop_makes_the_scheduled_count_and_excludes_warm_up() {
    let sender = fake(FakeLatency::Fixed(ms(3)));
    let load = open(vec![
        phase(PhaseKind::WarmUp, 50.0, 1),
        phase(PhaseKind::Hold, 100.0, 5),
    ]);
    let (handle, ..) = start(plan(&sender, load, secs(60)));
    let outcome = handle.await.unwrap().unwrap();
    let s = outcome.summary;
    assert_eq!(outcome.stop_reason, StopReason::ScheduleEnd);
    assert_eq!(s.warm_up_excluded, 50);
    assert_eq!(s.ok, 500);
    assert_eq!(s.dropped, 0);
    assert!((s.tps_avg - 100.0).abs() < 3.0, "{}", s.tps_avg);
    assert!(s.latency.max_us < 4_000, "{:?}", s.latency);
}

#[tokio::test(start_paused = true)]
async fn open_loop_duration_and_count_stops() {
    let sender = fake(FakeLatency::Fixed(ms(1)));
    let load = || open(vec![phase(PhaseKind::Hold, 200.0, 100)]);
    let (handle, ..) = start(plan(&sender, load(), secs(2)));
    let outcome = handle.await.unwrap().unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Duration);
    assert_eq!(outcome.summary.ok, 400);
    let (handle, ..) = start(plan(&sender, load(), count(123)));
    let outcome = handle.await.unwrap().unwrap();
    assert_eq!(outcome.stop_reason, StopReason::PaymentCount);
    assert_eq!(outcome.summary.ok, 123);
}

#[tokio::test(start_paused = true)]
async fn open_loop_latency_counts_from_intended_start() {
    // One payment at a time, 20 ms each: 50/s capacity against 100/s offered.
    let sender = FakeNode::new(FakeConfig {
        latency: FakeLatency::Fixed(ms(20)),
        capacity: Some(1),
        ..FakeConfig::instant("slow")
    });
    let load = open(vec![phase(PhaseKind::Hold, 100.0, 2)]);
    let (handle, ..) = start(plan(&sender, load, secs(60)));
    let s = handle.await.unwrap().unwrap().summary;
    // The queue grows by 50 a second: the last payments waited about a second,
    // which a closed-loop measurement (20 ms) would hide.
    assert!(s.latency.max_us > 900_000, "{:?}", s.latency);
    assert!(s.latency.p50_us > 300_000, "{:?}", s.latency);
    let first = s.series.first().unwrap();
    let last = s.series.iter().rev().find(|p| p.ok > 0).unwrap();
    assert!(
        last.p50_us > first.p50_us,
        "latency grows: {first:?} {last:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn set_rate_replaces_the_schedule() {
    let sender = fake(FakeLatency::Fixed(ms(1)));
    let load = open(vec![phase(PhaseKind::Hold, 10.0, 100)]);
    let (handle, tx, rx, _cancel) = start(plan(&sender, load, secs(2)));
    tokio::time::sleep(ms(1_000)).await;
    tx.send(Command::SetRate(100.0)).unwrap();
    let s = handle.await.unwrap().unwrap().summary;
    assert!((105..=112).contains(&s.ok), "{}", s.ok);
    assert_eq!(
        rx.borrow().load,
        crate::metrics::LoadSetting::Open { rate: 100.0 }
    );
}

#[tokio::test(start_paused = true)]
async fn invoice_kinds_create_and_pay_invoices() {
    let sender = fake(FakeLatency::Zero);
    let mut p = plan(&sender, Load::Closed { concurrency: 4 }, count(300));
    let receiver = FakeNode::new(FakeConfig::instant("carol"));
    p.routes[0].receiver = Arc::new(receiver.clone());
    p.kind = PaymentKind::Invoice;
    let (handle, ..) = start(p.clone());
    assert_eq!(handle.await.unwrap().unwrap().summary.ok, 300);
    assert_eq!(receiver.invoices_created(), 300);

    p.kind = PaymentKind::InvoicePregenerated;
    let (handle, ..) = start(p);
    assert_eq!(handle.await.unwrap().unwrap().summary.ok, 300);
    assert_eq!(receiver.invoices_created(), 600);
}

#[tokio::test(start_paused = true)]
async fn snapshots_are_published_every_second() {
    let sender = fake(FakeLatency::Fixed(ms(10)));
    let (handle, _tx, mut rx, _cancel) =
        start(plan(&sender, Load::Closed { concurrency: 1 }, secs(3)));
    let mut seen = Vec::new();
    while rx.changed().await.is_ok() {
        seen.push(rx.borrow_and_update().clone());
    }
    handle.await.unwrap().unwrap();
    let last = seen.last().unwrap();
    assert_eq!(last.stage, crate::metrics::Stage::Finished);
    assert!(seen.len() >= 3, "{}", seen.len());
    assert!(
        (95.0..=101.0).contains(&seen[0].tps_now),
        "{}",
        seen[0].tps_now
    );
    assert_eq!(last.failures, Vec::<(FailureKind, u64)>::new());
}

#[tokio::test]
async fn rejects_plans_that_cannot_run() {
    let sender = fake(FakeLatency::Zero);
    let mut p = plan(&sender, Load::Closed { concurrency: 0 }, count(1));
    let (handle, ..) = start(p.clone());
    assert!(matches!(
        handle.await.unwrap(),
        Err(EngineError::ZeroConcurrency)
    ));
    p.routes.clear();
    let (handle, ..) = start(p);
    assert!(matches!(handle.await.unwrap(), Err(EngineError::NoRoutes)));
}

fn kinds(s: &Summary) -> Vec<EventKind> {
    s.events.iter().map(|e| e.kind.clone()).collect()
}

#[tokio::test(start_paused = true)]
async fn commands_become_events_in_order_with_their_times() {
    let sender = fake(FakeLatency::Fixed(ms(10)));
    let (handle, tx, _rx, _cancel) = start(plan(&sender, Load::Closed { concurrency: 2 }, secs(3)));
    tokio::time::sleep(ms(500)).await;
    tx.send(Command::Pause).unwrap();
    tokio::time::sleep(ms(1_000)).await;
    tx.send(Command::Resume).unwrap();
    tokio::time::sleep(ms(500)).await;
    tx.send(Command::SetConcurrency(5)).unwrap();
    let s = handle.await.unwrap().unwrap().summary;
    assert_eq!(
        kinds(&s),
        vec![
            EventKind::Paused,
            EventKind::Resumed,
            EventKind::ConcurrencyChanged { from: 2, to: 5 },
        ]
    );
    let at: Vec<f64> = s.events.iter().map(|e| e.at_s).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{at:?}");
    for (got, want) in at.iter().zip([0.5, 1.5, 2.0]) {
        assert!((got - want).abs() < 0.05, "{at:?}");
    }
    assert_eq!(s.events_dropped, 0);
}

#[tokio::test(start_paused = true)]
async fn commands_that_change_nothing_record_nothing() {
    let sender = fake(FakeLatency::Fixed(ms(10)));
    let (handle, tx, _rx, _cancel) = start(plan(&sender, Load::Closed { concurrency: 2 }, secs(2)));
    tokio::time::sleep(ms(500)).await;
    // Does not apply to a closed loop, already running, already at 2.
    tx.send(Command::SetRate(50.0)).unwrap();
    tx.send(Command::Resume).unwrap();
    tx.send(Command::SetConcurrency(2)).unwrap();
    tx.send(Command::Pause).unwrap();
    tx.send(Command::Pause).unwrap();
    tx.send(Command::Stop).unwrap();
    tx.send(Command::Stop).unwrap();
    let s = handle.await.unwrap().unwrap().summary;
    assert_eq!(kinds(&s), vec![EventKind::Paused, EventKind::StopRequested]);
}

#[tokio::test(start_paused = true)]
async fn open_loop_records_phases_and_rate_changes() {
    let sender = fake(FakeLatency::Fixed(ms(1)));
    let load = open(vec![
        phase(PhaseKind::WarmUp, 10.0, 1),
        phase(PhaseKind::Hold, 10.0, 100),
    ]);
    let (handle, tx, _rx, _cancel) = start(plan(&sender, load, secs(2)));
    tokio::time::sleep(ms(1_500)).await;
    tx.send(Command::SetRate(40.0)).unwrap();
    tx.send(Command::SetConcurrency(9)).unwrap(); // closed loop only: ignored
    let s = handle.await.unwrap().unwrap().summary;
    let kinds = kinds(&s);
    assert_eq!(
        kinds[..2],
        [
            EventKind::PhaseStarted {
                phase: Stage::WarmUp
            },
            EventKind::PhaseStarted { phase: Stage::Hold },
        ]
    );
    assert!(
        kinds.contains(&EventKind::RateChanged {
            from: 10.0,
            to: 40.0
        }),
        "{kinds:?}"
    );
    assert!(
        !kinds
            .iter()
            .any(|k| matches!(k, EventKind::ConcurrencyChanged { .. })),
        "{kinds:?}"
    );
}
