//! What the engine and ruler benches share: a closed-loop keysend plan and one run of
//! it through the engine.

use lnbench_tui::engine::{self, EngineError, Plan, Route};
use lnbench_tui::metrics::{Recorder, Summary};
use lnbench_tui::node::LightningNode;
use lnbench_tui::node::fake::{FakeConfig, FakeNode};
use lnbench_tui::scenario::{Load, PaymentKind, StopCondition};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// `payments` keysends of 1 sat from `sender`, `workers` at a time, to an instant fake
/// receiver (keysend never calls it).
pub fn closed_keysend(sender: Arc<dyn LightningNode>, workers: u32, payments: u64) -> Plan {
    let receiver = FakeNode::new(FakeConfig::instant("bob"));
    Plan {
        routes: vec![Route {
            sender,
            receiver_pubkey: receiver.pubkey().to_string(),
            receiver: Arc::new(receiver),
        }],
        kind: PaymentKind::Keysend,
        amount_msat: 1_000,
        load: Load::Closed {
            concurrency: workers,
        },
        stop: StopCondition {
            payments: Some(payments),
            duration: None,
            liquidity_failures: None,
        },
        payment_timeout: Duration::from_secs(60),
        ledger: None,
        stream: None,
        max_parts: None,
        attack: None,
        rebalance: None,
    }
}

/// Runs `plan` through the engine: its summary and the wall time in seconds.
pub async fn run(plan: Plan) -> Result<(Summary, f64), EngineError> {
    let (recorder, _snapshots) = Recorder::new();
    let (_commands, commands_rx) = tokio::sync::mpsc::unbounded_channel();
    let started = Instant::now();
    let outcome = engine::run(plan, recorder, commands_rx, CancellationToken::new()).await?;
    Ok((outcome.summary, started.elapsed().as_secs_f64()))
}
