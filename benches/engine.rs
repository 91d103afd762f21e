//! Engine throughput and memory against an in-process fake node that answers at
//! once: the tool's own cost per payment. Run with `cargo bench --bench engine`.
//! Prints numbers; see docs/benchmarks.md for recorded figures.

use lnbench_tui::engine::{self, Plan, Route};
use lnbench_tui::metrics::Recorder;
use lnbench_tui::metrics::process::ProcessStats;
use lnbench_tui::node::fake::{FakeConfig, FakeNode};
use lnbench_tui::scenario::{Load, PaymentKind, StopCondition};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

const WORKERS: u32 = 64;

fn plan(payments: u64) -> Plan {
    let sender = FakeNode::new(FakeConfig::instant("alice"));
    let receiver = FakeNode::new(FakeConfig::instant("bob"));
    Plan {
        routes: vec![Route {
            sender: Arc::new(sender),
            receiver_pubkey: receiver.pubkey().to_string(),
            receiver: Arc::new(receiver),
        }],
        kind: PaymentKind::Keysend,
        amount_msat: 1_000,
        load: Load::Closed {
            concurrency: WORKERS,
        },
        stop: StopCondition {
            payments: Some(payments),
            duration: None,
        },
        payment_timeout: Duration::from_secs(60),
    }
}

async fn measure(payments: u64) -> (f64, f64) {
    let (recorder, _snapshots) = Recorder::new();
    let (_commands, commands_rx) = tokio::sync::mpsc::unbounded_channel();
    let started = Instant::now();
    let outcome = engine::run(
        plan(payments),
        recorder,
        commands_rx,
        CancellationToken::new(),
    )
    .await
    .expect("engine runs");
    let wall = started.elapsed().as_secs_f64();
    let s = &outcome.summary;
    assert_eq!(s.ok, payments, "every fake payment succeeds");
    (
        payments as f64 / wall,
        s.tool_cpu_per_payment_us().unwrap_or(f64::NAN),
    )
}

fn mb(bytes: Option<u64>) -> String {
    bytes.map_or("?".to_string(), |b| format!("{:.1} MB", b as f64 / 1e6))
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        println!("engine benchmark: closed loop, {WORKERS} workers, fake node answering at once");
        // Warm the allocator and thread pool.
        measure(200_000).await;
        for round in 1..=3 {
            let (rate, cpu_us) = measure(2_000_000).await;
            println!("round {round}: 2,000,000 payments: {rate:>12.0} payments/s  {cpu_us:.2} µs CPU/payment");
        }
        let (rate, cpu_us) = measure(10_000_000).await;
        let process = ProcessStats::now();
        println!("10,000,000 payments: {rate:>12.0} payments/s  {cpu_us:.2} µs CPU/payment");
        println!(
            "memory at the end: VmRSS {}  VmHWM (peak) {}",
            mb(process.rss_bytes),
            mb(process.peak_rss_bytes)
        );
    });
}
