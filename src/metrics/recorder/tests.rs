use super::*;
use crate::node::FailureReason;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[tokio::test(start_paused = true)]
async fn known_latencies_give_known_percentiles() {
    let (recorder, rx) = Recorder::new();
    recorder.begin_timed();
    let mut worker = recorder.worker();
    for i in 1..=1000 {
        worker.success(Duration::from_micros(i * 100)); // 0.1 .. 100 ms
    }
    drop(worker);
    tokio::time::advance(Duration::from_secs(1)).await;
    recorder.tick();
    let snap = rx.borrow().clone();
    assert_eq!(snap.ok, 1000);
    let within = |got: u64, want: u64| got.abs_diff(want) * 1000 <= want;
    assert!(
        within(snap.cumulative.p50_us, 50_000),
        "{:?}",
        snap.cumulative
    );
    assert!(within(snap.cumulative.p90_us, 90_000));
    assert!(within(snap.cumulative.p99_us, 99_000));
    assert!(within(snap.cumulative.max_us, 100_000));
    assert!((snap.cumulative.mean_us - 50_050.0).abs() < 100.0);
    assert_eq!(snap.last_interval, snap.cumulative);
    assert!((snap.tps_now - 1000.0).abs() < 1e-6);
}

#[tokio::test(start_paused = true)]
async fn intervals_roll_over_and_cumulative_keeps_all() {
    let (recorder, rx) = Recorder::new();
    recorder.begin_timed();
    let mut worker = recorder.worker();
    for _ in 0..10 {
        worker.success(ms(10));
    }
    worker.flush();
    tokio::time::advance(Duration::from_secs(1)).await;
    recorder.tick();
    for _ in 0..30 {
        worker.success(ms(200));
    }
    worker.failure(FailureKind::Node(FailureReason::NoRoute));
    worker.failure(FailureKind::RpcError);
    worker.flush();
    tokio::time::advance(Duration::from_secs(1)).await;
    recorder.tick();
    let snap = rx.borrow().clone();
    assert_eq!(snap.recent.len(), 2);
    assert_eq!(snap.recent[0].ok, 10);
    assert_eq!(snap.recent[1].ok, 30);
    assert_eq!(snap.recent[1].failed, 2);
    assert!(
        snap.last_interval.p50_us >= 199_000,
        "only the last interval"
    );
    assert_eq!(snap.cumulative.count, 40);
    assert!(snap.cumulative.p50_us >= 199_000 && snap.cumulative.max_us >= 199_000);
    assert!(snap.cumulative.p90_us > snap.recent[0].p99_us);
    assert_eq!(
        snap.failures,
        vec![
            (FailureKind::Node(FailureReason::NoRoute), 1),
            (FailureKind::RpcError, 1)
        ]
    );
    assert!((snap.tps_avg - 20.0).abs() < 1e-6);
}

#[tokio::test(start_paused = true)]
async fn paused_time_is_excluded_from_tps() {
    let (recorder, _rx) = Recorder::new();
    recorder.begin_timed();
    let mut worker = recorder.worker();
    for _ in 0..100 {
        worker.success(ms(1));
    }
    worker.warm_up();
    worker.flush();
    tokio::time::advance(Duration::from_secs(1)).await;
    recorder.set_paused(true);
    tokio::time::advance(Duration::from_secs(3)).await;
    recorder.set_paused(false);
    tokio::time::advance(Duration::from_secs(1)).await;
    let summary = recorder.finish();
    assert_eq!(summary.ok, 100);
    assert_eq!(summary.warm_up_excluded, 1);
    assert!(
        (summary.active_s - 2.0).abs() < 1e-6,
        "{}",
        summary.active_s
    );
    assert!((summary.paused_s - 3.0).abs() < 1e-6);
    assert!((summary.elapsed_s - 5.0).abs() < 1e-6);
    assert!((summary.tps_avg - 50.0).abs() < 1e-6);
    let point = summary.series.last().unwrap();
    assert!((point.active_s - 2.0).abs() < 1e-6, "{point:?}");
}

#[tokio::test(start_paused = true)]
async fn phases_get_their_own_counts_latency_and_active_time() {
    let (recorder, _rx) = Recorder::new();
    recorder.set_stage(Stage::WarmUp);
    tokio::time::advance(Duration::from_secs(1)).await;
    recorder.set_stage(Stage::Ramp);
    recorder.begin_timed();
    let mut worker = recorder.worker();
    worker.set_stage(Stage::Ramp);
    for _ in 0..10 {
        worker.success(ms(100));
    }
    worker.failure(FailureKind::RpcError);
    tokio::time::advance(Duration::from_secs(2)).await;
    recorder.set_stage(Stage::Hold);
    // A ramp payment still in flight when the hold starts counts for the ramp.
    worker.success(ms(100));
    worker.set_stage(Stage::Hold);
    for _ in 0..40 {
        worker.success(ms(5));
    }
    recorder.set_paused(true);
    tokio::time::advance(Duration::from_secs(5)).await;
    recorder.set_paused(false);
    tokio::time::advance(Duration::from_secs(2)).await;
    recorder.set_stage(Stage::Draining);
    tokio::time::advance(Duration::from_secs(1)).await;
    drop(worker);
    let summary = recorder.finish();
    let [ramp, hold] = &summary.phases[..] else {
        panic!("{:?}", summary.phases);
    };
    assert_eq!((ramp.phase, ramp.ok, ramp.failed), (Stage::Ramp, 11, 1));
    assert_eq!((hold.phase, hold.ok, hold.failed), (Stage::Hold, 40, 0));
    assert!(ramp.latency.p50_us >= 99_000 && hold.latency.max_us < 6_000);
    assert!((ramp.active_s - 2.0).abs() < 1e-6, "{}", ramp.active_s);
    // Paused time is left out; draining counts for the last phase.
    assert!((hold.active_s - 3.0).abs() < 1e-6, "{}", hold.active_s);
    assert!((hold.tps_avg - 40.0 / 3.0).abs() < 1e-6);
    assert!(
        (summary.active_s - 5.0).abs() < 1e-6,
        "{}",
        summary.active_s
    );
}

#[test]
fn summary_now_counts_so_far_and_the_run_goes_on() {
    let (recorder, _rx) = Recorder::new();
    recorder.set_stage(Stage::Closed);
    let mut worker = recorder.worker();
    worker.set_stage(Stage::Closed);
    worker.success(ms(3));
    worker.success(ms(5));
    worker.flush();
    let now = recorder.summary_now();
    assert_eq!(now.ok, 2);
    assert!(now.latency.max_us >= 5_000, "{:?}", now.latency);
    assert_eq!(
        recorder.state().stage,
        Stage::Closed,
        "a snapshot finishes nothing"
    );
    worker.success(ms(7));
    drop(worker);
    let end = recorder.finish();
    assert_eq!(end.ok, 3);
    assert!(end.latency.max_us >= 7_000);
}

#[test]
fn closed_loop_runs_have_no_phases() {
    let (recorder, _rx) = Recorder::new();
    recorder.set_stage(Stage::Closed);
    let mut worker = recorder.worker();
    worker.set_stage(Stage::Closed);
    worker.success(ms(1));
    drop(worker);
    let summary = recorder.finish();
    assert_eq!(summary.ok, 1);
    assert!(summary.phases.is_empty());
}

#[test]
fn series_cap_is_respected_by_the_recorder() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    rt.block_on(async {
        let (recorder, _rx) = Recorder::with_series_cap(16);
        for _ in 0..100 {
            tokio::time::advance(Duration::from_secs(1)).await;
            recorder.tick();
        }
        let summary = recorder.finish();
        assert!(summary.series.len() <= 17);
        assert!(summary.series_resolution_s >= 8);
    });
}
