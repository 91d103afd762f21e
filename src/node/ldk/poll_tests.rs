//! LDK's completion is polling: a fake ldk-server ends payments at known moments; the
//! tests hold each measured end to come after the payment's end and the polls to their
//! cadence. How late the polled end is, against the bound the client states, is a timed
//! claim: `benches/completion.rs` holds it.

use super::fake_server::FakeLdk;
use super::*;

/// Nine payments on a fake that ends them 20 to 120 ms after they came: each returns
/// succeeded and no earlier than its end, and the polls keep their cadence (at least one
/// per payment, about one per interval, not more). How late each returned and the polls
/// per payment are printed; the bound the client states is held by the bench.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn polling_returns_each_payment_after_its_end_at_a_fixed_cadence() {
    let delays: Vec<Duration> = [20, 50, 120, 23, 51, 117, 37, 64, 99]
        .into_iter()
        .map(Duration::from_millis)
        .collect();
    let fake = FakeLdk::start(delays.clone()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let node = LdkNode::connect("bob", &fake.endpoint("bob", dir.path()).unwrap()).unwrap();
    let completion = node.completion();
    assert!(completion.late_up_to_ms > 0.0, "polling states a bound");
    let mut errors_us = Vec::new();
    let cpu_before = process_cpu();
    for n in 0..delays.len() {
        let outcome = node
            .pay_invoice("lnbcrt1fake", Duration::from_secs(10))
            .await;
        let returned = tokio::time::Instant::now();
        assert!(
            matches!(outcome, Ok(PaymentOutcome::Succeeded { .. })),
            "{outcome:?}"
        );
        let end = fake.end_of(n).expect("the fake saw the payment");
        assert!(returned >= end, "payment {n} returned before its end");
        errors_us.push((returned - end).as_micros() as u64);
    }
    let polls = fake.polls();
    // The whole process: the client's polls and the fake's answers alike.
    let cpu = process_cpu() - cpu_before;
    println!(
        "returned - end per payment (µs): {errors_us:?}; bound {} ms; {:.1} polls per \
         payment; process CPU {:.0} µs per poll (client and fake server)",
        completion.late_up_to_ms,
        polls as f64 / delays.len() as f64,
        cpu.as_micros() as f64 / polls.max(1) as f64
    );
    let total: Duration = delays.iter().sum();
    let interval = Duration::from_secs_f64(completion.poll_interval_ms.unwrap() / 1000.0);
    let most = total.as_micros() / interval.as_micros() + 2 * delays.len() as u128;
    assert!(u128::from(polls) <= most, "{polls} polls, at most {most}");
    assert!(
        polls >= delays.len() as u64,
        "{polls} polls for {} payments",
        delays.len()
    );
}

/// CPU time of this process so far (user and system, in clock ticks of 10 ms).
fn process_cpu() -> Duration {
    let seconds = crate::metrics::process::ProcessStats::now().cpu_s;
    Duration::from_secs_f64(seconds.unwrap_or(0.0))
}
