//! Engine throughput and memory against an in-process fake node that answers at
//! once: the tool's own cost per payment. Run with `cargo bench --bench engine`.
//! Prints numbers; see docs/benchmarks.md for recorded figures.

mod common;

use lnbench_tui::metrics::process::ProcessStats;
use lnbench_tui::node::fake::{FakeConfig, FakeNode};
use std::sync::Arc;

const WORKERS: u32 = 64;

async fn measure(payments: u64) -> (f64, f64) {
    let sender = Arc::new(FakeNode::new(FakeConfig::instant("alice")));
    let plan = common::closed_keysend(sender, WORKERS, payments);
    let (s, wall) = common::run(plan).await.expect("engine runs");
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
