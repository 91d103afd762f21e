//! The tool's memory over a long run: 100,000 payments to an in-process fake node
//! through the real engine and recorder (with the resource log sampling the tool's
//! RSS as a run does), printing RSS at 10k, 50k and 100k payments. Flat figures mean
//! the per-payment state is bounded (histograms, a merged series), as a soak needs.
//! Run with `cargo bench --bench soak_memory`; see docs/scenarios/soak.md.

use lnbench_tui::engine::{self, Plan, Route};
use lnbench_tui::metrics::process::ProcessStats;
use lnbench_tui::metrics::{Recorder, ResourceLog, TOOL_READING, tool_reading};
use lnbench_tui::node::fake::{FakeConfig, FakeLatency, FakeNode};
use lnbench_tui::scenario::{Load, PaymentKind, StopCondition};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const PAYMENTS: u64 = 100_000;
const MARKS: [u64; 3] = [10_000, 50_000, 100_000];

fn mib(bytes: Option<u64>) -> String {
    bytes.map_or_else(
        || "n/a".into(),
        |b| format!("{:.1} MiB", b as f64 / 1048576.0),
    )
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        // A short fixed latency, so the run spans many one-second intervals (the
        // TPS series grows with seconds, the histograms with distinct latencies).
        let mut slow = FakeConfig::instant("alice");
        slow.latency = FakeLatency::Fixed(Duration::from_micros(200));
        let sender = FakeNode::new(slow);
        let receiver = FakeNode::new(FakeConfig::instant("bob"));
        let plan = Plan {
            routes: vec![Route {
                sender: Arc::new(sender),
                receiver_pubkey: receiver.pubkey().to_string(),
                receiver: Arc::new(receiver),
            }],
            kind: PaymentKind::Keysend,
            amount_msat: 1_000,
            load: Load::Closed { concurrency: 10 },
            stop: StopCondition {
                payments: Some(PAYMENTS),
                duration: None,
                liquidity_failures: None,
            },
            payment_timeout: Duration::from_secs(5),
            ledger: None,
            stream: None,
            max_parts: None,
            attack: None,
            rebalance: None,
        };
        let (recorder, mut snapshots) = Recorder::new();
        let (_commands, rx) = tokio::sync::mpsc::unbounded_channel();
        let watcher = tokio::spawn(async move {
            let mut log = ResourceLog::new();
            let mut next = 0;
            while snapshots.changed().await.is_ok() {
                log.record(vec![tool_reading()]);
                let ok = snapshots.borrow().ok;
                while next < MARKS.len() && ok >= MARKS[next] {
                    println!(
                        "{:>7} payments: RSS {}",
                        MARKS[next],
                        mib(ProcessStats::now().rss_bytes)
                    );
                    next += 1;
                }
            }
            log
        });
        let outcome = engine::run(plan, recorder, rx, CancellationToken::new())
            .await
            .expect("engine runs");
        let log = watcher.await.unwrap();
        let s = outcome.summary;
        let tool = log.report(TOOL_READING, s.ok);
        let first = tool.samples.first().and_then(|x| x.mem_bytes);
        let last = tool.samples.last().and_then(|x| x.mem_bytes);
        println!(
            "{} payments in {:.1} s; RSS at the end {}; tool RSS first / last / peak: {} / {} / {}; {} series points",
            s.ok,
            s.elapsed_s,
            mib(ProcessStats::now().rss_bytes),
            mib(first),
            mib(last),
            mib(tool.mem_bytes_peak),
            s.series.len()
        );
    });
}
