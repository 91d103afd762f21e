//! Manual end-to-end check of the local runtime, the btcd chain and the LND driver:
//! starts btcd and two LND nodes, funds alice, opens channels to bob, makes keysend
//! payments, tears everything down and checks that no process is left.
//!
//!     scripts/build-nodes.sh
//!     cargo run --release --example smoke -- [payments] [concurrency] [channels]
//!
//! Set `SMOKE_KEEP=1` to keep the run directory (logs) afterwards.

use anyhow::{Context, Result, bail};
use lnbench_tui::chain::ChainBackend;
use lnbench_tui::chain::btcd::{BtcdChain, MiningWallet};
use lnbench_tui::node::lnd::{self, LndNode};
use lnbench_tui::node::{Implementation, LightningNode, PaymentOutcome};
use lnbench_tui::runtime::local::LocalRuntime;
use lnbench_tui::runtime::{NodeEndpoint, Runtime};
use lnbench_tui::scenario::{ChainKind, ChainSpec, NodeSpec};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const CAPACITY_SAT: u64 = 5_000_000;

fn arg(n: usize, default: u64) -> u64 {
    std::env::args()
        .nth(n)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

#[tokio::main]
async fn main() -> Result<()> {
    lnbench_tui::tls::install_crypto_provider();
    let payments = arg(1, 300);
    let concurrency = arg(2, 10).max(1);
    let channels = arg(3, 4).max(1);

    let run_dir = std::env::temp_dir().join(format!("lnbench-smoke-{}", std::process::id()));
    let keep = std::env::var_os("SMOKE_KEEP").is_some();
    let mut runtime = LocalRuntime::new(run_dir.clone(), keep);
    let result = run(&mut runtime, payments, concurrency, channels).await;
    let pids = runtime.pids().to_vec();
    let t = Instant::now();
    runtime.down().await.context("tearing down")?;
    println!("down in {:.1} s", t.elapsed().as_secs_f64());
    let alive: Vec<u32> = pids
        .iter()
        .copied()
        .filter(|pid| std::path::Path::new(&format!("/proc/{pid}")).exists())
        .collect();
    if !alive.is_empty() {
        bail!("processes survived down(): {alive:?}");
    }
    println!(
        "no process left of {pids:?}; run dir removed: {}",
        !run_dir.exists()
    );
    result
}

/// Connects to a node, retrying while it starts up, until it is synced.
async fn ready(ep: &NodeEndpoint) -> Result<LndNode> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let attempt = async {
            let node = LndNode::connect(&ep.name, ep).await?;
            let info = node.get_info().await?;
            Ok::<_, lnbench_tui::node::NodeError>((node, info))
        };
        match attempt.await {
            Ok((node, info)) if info.synced_to_chain => {
                println!(
                    "{} ready: {} at height {}",
                    ep.name, info.version, info.block_height
                );
                return Ok(node);
            }
            Ok(_) => {}
            Err(e) if lnd::is_starting_up(&e) => {}
            Err(e) => return Err(e.into()),
        }
        if Instant::now() > deadline {
            bail!("{} not ready in time", ep.name);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

async fn run(
    runtime: &mut LocalRuntime,
    payments: u64,
    concurrency: u64,
    channels: u64,
) -> Result<()> {
    let t = Instant::now();
    let wallet = MiningWallet::generate();
    let chain_spec = ChainSpec {
        kind: ChainKind::Btcd,
        binary: None,
        image: None,
        args: vec![],
    };
    let chain_ep = runtime.start_chain(&chain_spec, &wallet.address()).await?;
    let chain = BtcdChain::connect(&chain_ep, wallet).await?;
    println!(
        "{} up in {:.1} s",
        chain_ep.version,
        t.elapsed().as_secs_f64()
    );
    chain.prepare().await?;
    println!(
        "height {} after {:.1} s; {} BTC spendable",
        chain.height().await?,
        t.elapsed().as_secs_f64(),
        chain.spendable_sat().await? / 100_000_000
    );

    let spec = |name: &str| NodeSpec {
        name: name.into(),
        group: name.into(),
        implementation: Implementation::Lnd,
        version: None,
        binary: None,
        image: None,
        args: vec![],
    };
    let eps = runtime
        .start_nodes(&[spec("alice"), spec("bob")], &chain_ep)
        .await?;
    let alice = ready(&eps[0]).await?;
    let bob = ready(&eps[1]).await?;
    let bob_key = bob.get_info().await?.pubkey;
    println!("nodes ready after {:.1} s", t.elapsed().as_secs_f64());

    // One output per channel: LND funds from confirmed outputs.
    let mut outputs = Vec::new();
    for _ in 0..channels {
        outputs.push((alice.new_address().await?, CAPACITY_SAT + 100_000));
    }
    let txid = chain.fund(&outputs).await?;
    chain.mine(1).await?;
    let want = channels * (CAPACITY_SAT + 100_000);
    poll("alice's funds confirmed", || async {
        Ok(alice.wallet_balance().await?.confirmed_sat >= want)
    })
    .await?;
    println!("funded alice by {txid}");

    alice.connect_peer(&bob_key, &eps[1].p2p_addr).await?;
    for _ in 0..channels {
        let point = alice.open_channel(&bob_key, CAPACITY_SAT).await?;
        println!("opened {point}");
    }
    chain.mine(6).await?;
    poll("channels active", || async {
        let list = alice.list_channels().await?;
        Ok(list.len() as u64 == channels && list.iter().all(|c| c.active))
    })
    .await?;
    println!(
        "{channels} channels active after {:.1} s",
        t.elapsed().as_secs_f64()
    );

    // Active is not yet routable: LND reports InsufficientBalance until the links
    // are up. Probe until one payment goes through.
    let probe = Instant::now();
    loop {
        match alice
            .keysend(&bob_key, 1_000, Duration::from_secs(10))
            .await?
        {
            PaymentOutcome::Succeeded { hops, .. } => {
                println!(
                    "first payment ({hops} hop) after {:.1} s",
                    probe.elapsed().as_secs_f64()
                );
                break;
            }
            PaymentOutcome::Failed { reason } if probe.elapsed() < Duration::from_secs(60) => {
                eprintln!("probe: {reason:?}");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            PaymentOutcome::Failed { reason } => bail!("no payment went through: {reason:?}"),
        }
    }

    let ok = Arc::new(AtomicU64::new(0));
    let next = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let (alice, bob_key, ok, next) = (alice.clone(), bob_key.clone(), ok.clone(), next.clone());
        workers.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            while next.fetch_add(1, Ordering::Relaxed) < payments {
                let t = Instant::now();
                match alice
                    .keysend(&bob_key, 1_000, Duration::from_secs(60))
                    .await
                {
                    Ok(PaymentOutcome::Succeeded { .. }) => {
                        ok.fetch_add(1, Ordering::Relaxed);
                        latencies.push(t.elapsed());
                    }
                    Ok(PaymentOutcome::Failed { reason }) => {
                        eprintln!(
                            "failed after {:.1} s: {reason:?}",
                            start.elapsed().as_secs_f64()
                        )
                    }
                    Err(e) => eprintln!("error: {e}"),
                }
            }
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for w in workers {
        latencies.extend(w.await?);
    }
    let secs = start.elapsed().as_secs_f64();
    latencies.sort();
    let ok = ok.load(Ordering::Relaxed);
    let p50 = latencies
        .get(latencies.len() / 2)
        .copied()
        .unwrap_or_default();
    println!(
        "{ok}/{payments} keysends ok in {secs:.1} s: {:.0} TPS, p50 {:.0} ms (concurrency {concurrency})",
        ok as f64 / secs,
        p50.as_secs_f64() * 1000.0
    );
    let bob_channels = bob.list_channels().await?;
    let received: u64 = bob_channels.iter().map(|c| c.local_balance_sat).sum();
    println!("bob's local balance: {received} sat");
    if ok != payments {
        bail!("{} payments did not succeed", payments - ok);
    }
    Ok(())
}

async fn poll<F, Fut>(what: &str, mut check: F) -> Result<()>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<bool>>,
{
    let deadline = Instant::now() + Duration::from_secs(60);
    while !check().await? {
        if Instant::now() > deadline {
            bail!("timed out waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Ok(())
}
