//! The ruler's resolution: how much later than a payment's end the tool learns it, for
//! the two stacks whose end is not an RPC's answer. Run with `cargo bench --bench
//! completion`; docs/benchmarks.md says what it covers.
//!
//! - Eclair: the end comes as a websocket event. The fake (`node::eclair::fake_api`)
//!   pushes `payment-sent` 20, 50 or 120 ms after `sendtonode` came; the error is how
//!   much later than the push the payment returned. The claim (docs/reports.md, "exact"):
//!   under a millisecond, so a round holds when its median is under 1 ms and its worst
//!   payment under 10 ms, and no payment was polled.
//! - LDK: the end is polled. The fake (`node::ldk::fake_server`) ends each payment 20 to
//!   120 ms after `Bolt11Send` came; the error is how much later than that end the payment
//!   returned. The claim is the bound the client states (`late_up_to_ms`), so a round
//!   holds when its median is within the bound and its worst within the bound plus 5 ms.
//!
//! Rounds are nine payments on a tokio runtime of two worker threads, in this process.
//! A late ruler is late in every round, a busy scheduler only now and then, so a stack
//! passes when one of [`ROUNDS`] rounds holds; it exits non-zero when none does, or
//! when a payment fails or returns before its end. Every round's errors are printed.
//! Without `--bench` (as `cargo test --benches` runs it, a debug build) it runs one
//! round per stack and holds it to nothing.

use lnbench_tui::node::eclair::fake_api::{self, FakeEclair};
use lnbench_tui::node::ldk::fake_server::FakeLdk;
use lnbench_tui::node::{LightningNode, PaymentOutcome, driver};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

const ROUNDS: usize = 3;
/// Any 66-hex-digit key: the fake pays whatever it is given.
const DEST: &str = "02abababababababababababababababababababababababababababababababab";
const ECLAIR_DELAYS_MS: [u64; 9] = [20, 50, 120, 20, 50, 120, 20, 50, 120];
const LDK_DELAYS_MS: [u64; 9] = [20, 50, 120, 23, 51, 117, 37, 64, 99];
const TIMEOUT: Duration = Duration::from_secs(10);

fn main() -> ExitCode {
    let full = std::env::args().any(|a| a == "--bench");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let rounds = if full { ROUNDS } else { 1 };
    println!("completion: nine payments a round, up to {rounds} round(s) per stack");
    if !full {
        println!("smoke run (one round, no bound): `cargo bench --bench completion` measures");
    }
    let mut failed = false;
    for (stack, result) in [
        ("eclair", runtime.block_on(eclair(rounds, full))),
        ("ldk", runtime.block_on(ldk(rounds, full))),
    ] {
        match result {
            Ok(verdict) => println!("{stack}: {verdict}"),
            Err(message) => {
                eprintln!("{stack}: {message}");
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Median and worst of a round's errors (µs).
fn median_and_worst(errors_us: &[u64]) -> (u64, u64) {
    let mut sorted = errors_us.to_vec();
    sorted.sort_unstable();
    (sorted[sorted.len() / 2], sorted[sorted.len() - 1])
}

/// The rounds' outcome: which round held, or every round's errors if none did.
fn verdict(
    stack: &str,
    rounds: &[Vec<u64>],
    holds: impl Fn(u64, u64) -> bool,
    full: bool,
    claim: &str,
) -> Result<String, String> {
    for (n, errors_us) in rounds.iter().enumerate() {
        let (median, worst) = median_and_worst(errors_us);
        println!(
            "{stack} round {}: median {median} µs, worst {worst} µs: {errors_us:?}",
            n + 1
        );
        if full && holds(median, worst) {
            return Ok(format!("round {} held {claim}", n + 1));
        }
    }
    if full {
        Err(format!("no round held {claim}"))
    } else {
        Ok(format!("(not held to {claim} in a smoke run)"))
    }
}

async fn eclair(rounds: usize, full: bool) -> Result<String, String> {
    let fake = FakeEclair::start().await;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let endpoint = fake
        .endpoint("carol", dir.path())
        .map_err(|e| e.to_string())?;
    let node = connect(&endpoint).await?;
    let mut errors = Vec::new();
    for round in 0..rounds {
        errors.push(eclair_round(&fake, &node, round * ECLAIR_DELAYS_MS.len()).await?);
        let (median, worst) = median_and_worst(errors.last().unwrap());
        if median < 1_000 && worst < 10_000 {
            break;
        }
    }
    if fake.sent_info_calls() > 0 {
        return Err(format!(
            "{} payment(s) polled getsentinfo while the socket was up",
            fake.sent_info_calls()
        ));
    }
    verdict(
        "eclair",
        &errors,
        |median, worst| median < 1_000 && worst < 10_000,
        full,
        "a median under 1 ms and a worst under 10 ms",
    )
}

/// Nine payments; each one's error (µs): how much later than its event's push it returned.
async fn eclair_round(
    fake: &FakeEclair,
    node: &Arc<dyn LightningNode>,
    first: usize,
) -> Result<Vec<u64>, String> {
    fake.script
        .delays
        .lock()
        .unwrap()
        .extend(ECLAIR_DELAYS_MS.map(Duration::from_millis));
    let mut errors_us = Vec::new();
    for n in 0..ECLAIR_DELAYS_MS.len() {
        let started = Instant::now();
        let outcome = node.keysend(DEST, 1000, TIMEOUT).await;
        let returned = Instant::now();
        succeeded(&outcome)?;
        let id = fake_api::payment_id((first + n) as u64);
        let pushed = fake
            .truth(&id)
            .and_then(|(_, pushed)| pushed)
            .ok_or(format!("the fake pushed no event for payment {id}"))?;
        errors_us.push(after(returned, pushed, started)?);
    }
    Ok(errors_us)
}

async fn ldk(rounds: usize, full: bool) -> Result<String, String> {
    let mut errors = Vec::new();
    let mut bound_us = 0;
    for _ in 0..rounds {
        let (round, bound) = ldk_round().await?;
        bound_us = bound;
        errors.push(round);
        let (median, worst) = median_and_worst(errors.last().unwrap());
        if median <= bound_us && worst <= bound_us + 5_000 {
            break;
        }
    }
    verdict(
        "ldk",
        &errors,
        |median, worst| median <= bound_us && worst <= bound_us + 5_000,
        full,
        &format!("the stated bound ({bound_us} µs) at the median, plus 5 ms at worst"),
    )
}

/// Nine payments on a fresh fake: each one's error (µs), how much later than its end it
/// returned, and the bound the client states (µs).
async fn ldk_round() -> Result<(Vec<u64>, u64), String> {
    let fake = FakeLdk::start(LDK_DELAYS_MS.map(Duration::from_millis).to_vec())
        .await
        .map_err(|e| e.to_string())?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let endpoint = fake
        .endpoint("bob", dir.path())
        .map_err(|e| e.to_string())?;
    let node = connect(&endpoint).await?;
    let bound_us = (node.completion().late_up_to_ms * 1000.0) as u64;
    let mut errors_us = Vec::new();
    for n in 0..LDK_DELAYS_MS.len() {
        let started = Instant::now();
        let outcome = node.pay_invoice("lnbcrt1fake", TIMEOUT).await;
        let returned = Instant::now();
        succeeded(&outcome)?;
        let end = fake
            .end_of(n)
            .ok_or(format!("the fake saw no payment {n}"))?;
        errors_us.push(after(returned, end, started)?);
    }
    Ok((errors_us, bound_us))
}

/// The stack's real client, made the way a run makes it: the driver's `connect`.
async fn connect(
    endpoint: &lnbench_tui::node::NodeEndpoint,
) -> Result<Arc<dyn LightningNode>, String> {
    driver(endpoint.implementation)
        .connect(endpoint)
        .await
        .map_err(|e| format!("connecting to the fake: {e}"))
}

fn succeeded<E: std::fmt::Debug>(outcome: &Result<PaymentOutcome, E>) -> Result<(), String> {
    match outcome {
        Ok(PaymentOutcome::Succeeded { .. }) => Ok(()),
        other => Err(format!("a payment did not succeed: {other:?}")),
    }
}

/// How much later than `end` a payment that started at `started` returned (µs); an
/// error when it returned before its end.
fn after(returned: Instant, end: Instant, started: Instant) -> Result<u64, String> {
    if returned < end {
        return Err(format!(
            "a payment returned {:?} after it started, before its end at {:?}",
            returned - started,
            end - started
        ));
    }
    Ok((returned - end).as_micros() as u64)
}
