//! An in-process fake Lightning node for tests and the engine benchmark.
//!
//! Latency and failures come from a seeded model: call number `n` always gets the
//! same draw (a splitmix64 hash of seed and `n`), so the counts of outcomes over `N`
//! calls are the same on every run, whatever order the workers make them in. The hot
//! path takes no lock: one atomic counter per call, plus an optional semaphore when a
//! capacity limit is set (to model a node that serializes work).

use super::{
    FailureReason, Implementation, Invoice, LightningNode, NodeError, NodeInfo, PaymentOutcome,
    WalletBalance,
};
use async_trait::async_trait;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::Semaphore;

/// How long a fake payment takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FakeLatency {
    /// Answer at once, without touching the timer.
    Zero,
    Fixed(Duration),
    /// Uniform between the two bounds (inclusive lower, exclusive upper).
    Uniform {
        min: Duration,
        max: Duration,
    },
}

/// The behaviour of a [`FakeNode`].
#[derive(Debug, Clone, PartialEq)]
pub struct FakeConfig {
    pub name: String,
    pub seed: u64,
    pub latency: FakeLatency,
    /// Probability of each failure reason per payment; the sum must be <= 1.
    pub failures: Vec<(FailureReason, f64)>,
    /// Probability that a payment call fails with a transport error instead.
    pub rpc_error_rate: f64,
    /// At most this many payments are processed at once; others wait their turn
    /// (the waiting counts as latency), like a node that is at its limit.
    pub capacity: Option<usize>,
}

impl FakeConfig {
    /// A node that answers every payment at once with success.
    pub fn instant(name: &str) -> Self {
        FakeConfig {
            name: name.to_string(),
            seed: 0,
            latency: FakeLatency::Zero,
            failures: Vec::new(),
            rpc_error_rate: 0.0,
            capacity: None,
        }
    }
}

/// A fake node; clones share counters and capacity.
#[derive(Debug, Clone)]
pub struct FakeNode {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: FakeConfig,
    pubkey: String,
    /// Payment calls started (keysend and pay_invoice).
    payments: AtomicU64,
    invoices: AtomicU64,
    capacity: Option<Semaphore>,
}

/// splitmix64: a cheap, well-mixed hash, good enough to draw per-call randomness.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform draw in [0, 1) from 53 random bits.
fn unit(bits: u64) -> f64 {
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

impl FakeNode {
    pub fn new(config: FakeConfig) -> Self {
        let pubkey = format!("02{:064x}", mix(config.seed ^ 0xFA4E));
        let capacity = config.capacity.map(Semaphore::new);
        FakeNode {
            inner: Arc::new(Inner {
                config,
                pubkey,
                payments: AtomicU64::new(0),
                invoices: AtomicU64::new(0),
                capacity,
            }),
        }
    }

    pub fn pubkey(&self) -> &str {
        &self.inner.pubkey
    }

    /// Payment calls started so far.
    pub fn payments_started(&self) -> u64 {
        self.inner.payments.load(Ordering::Relaxed)
    }

    pub fn invoices_created(&self) -> u64 {
        self.inner.invoices.load(Ordering::Relaxed)
    }

    fn latency(&self, draw: u64) -> Duration {
        match self.inner.config.latency {
            FakeLatency::Zero => Duration::ZERO,
            FakeLatency::Fixed(d) => d,
            FakeLatency::Uniform { min, max } => {
                let span = max.saturating_sub(min);
                min + span.mul_f64(unit(mix(draw)))
            }
        }
    }

    async fn pay(&self) -> Result<PaymentOutcome, NodeError> {
        let n = self.inner.payments.fetch_add(1, Ordering::Relaxed);
        let draw = mix(self.inner.config.seed ^ mix(n));
        let _permit = match &self.inner.capacity {
            Some(semaphore) => Some(semaphore.acquire().await.map_err(|_| NodeError::Rpc {
                node: self.inner.config.name.clone(),
                call: "pay",
                status: "fake node closed".to_string(),
            })?),
            None => None,
        };
        let latency = self.latency(draw);
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
        let mut roll = unit(draw);
        if roll < self.inner.config.rpc_error_rate {
            return Err(NodeError::Rpc {
                node: self.inner.config.name.clone(),
                call: "pay",
                status: "injected transport error".to_string(),
            });
        }
        roll -= self.inner.config.rpc_error_rate;
        for &(reason, probability) in &self.inner.config.failures {
            if roll < probability {
                return Ok(PaymentOutcome::Failed { reason });
            }
            roll -= probability;
        }
        Ok(PaymentOutcome::Succeeded {
            fee_msat: 0,
            hops: 1,
        })
    }
}

#[async_trait]
impl LightningNode for FakeNode {
    fn name(&self) -> &str {
        &self.inner.config.name
    }

    /// The fake answers when its simulated payment ends.
    fn completion(&self) -> super::Completion {
        super::Completion::exact(super::completion::Method::ReturnsAtEnd, "fake")
    }

    fn implementation(&self) -> Implementation {
        Implementation::Lnd
    }

    async fn get_info(&self) -> Result<NodeInfo, NodeError> {
        Ok(NodeInfo {
            pubkey: self.inner.pubkey.clone(),
            alias: self.inner.config.name.clone(),
            version: "fake".to_string(),
            block_height: 0,
            synced_to_chain: true,
            num_active_channels: 1,
        })
    }

    async fn new_address(&self) -> Result<String, NodeError> {
        Ok("bcrt1qfake".to_string())
    }

    async fn wallet_balance(&self) -> Result<WalletBalance, NodeError> {
        Ok(WalletBalance::default())
    }

    async fn connect_peer(&self, _pubkey: &str, _host: &str) -> Result<(), NodeError> {
        Ok(())
    }

    async fn open_channel(&self, _pubkey: &str, _capacity_sat: u64) -> Result<String, NodeError> {
        Ok(format!("{:064x}:0", mix(self.inner.config.seed)))
    }

    async fn list_channels(&self) -> Result<Vec<super::ChannelInfo>, NodeError> {
        Ok(Vec::new())
    }

    async fn create_invoice(&self, amount_msat: u64) -> Result<Invoice, NodeError> {
        let n = self.inner.invoices.fetch_add(1, Ordering::Relaxed);
        let hash = mix(self.inner.config.seed ^ n);
        let mut payment_hash = [0u8; 32];
        payment_hash[..8].copy_from_slice(&hash.to_le_bytes());
        Ok(Invoice {
            bolt11: format!("lnbcrt{amount_msat}fake{n}"),
            payment_hash,
        })
    }

    async fn keysend(
        &self,
        _dest: &str,
        _amount_msat: u64,
        _timeout: Duration,
    ) -> Result<PaymentOutcome, NodeError> {
        self.pay().await
    }

    async fn pay_invoice(
        &self,
        _bolt11: &str,
        _timeout: Duration,
    ) -> Result<PaymentOutcome, NodeError> {
        self.pay().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failing(seed: u64) -> FakeNode {
        FakeNode::new(FakeConfig {
            seed,
            failures: vec![(FailureReason::NoRoute, 0.2), (FailureReason::Timeout, 0.1)],
            rpc_error_rate: 0.05,
            ..FakeConfig::instant("f")
        })
    }

    async fn tally(node: &FakeNode, n: usize) -> (usize, usize, usize, usize) {
        let (mut ok, mut no_route, mut timeout, mut rpc) = (0, 0, 0, 0);
        for _ in 0..n {
            match node.keysend("x", 1, Duration::from_secs(1)).await {
                Ok(PaymentOutcome::Succeeded { .. }) => ok += 1,
                Ok(PaymentOutcome::Failed {
                    reason: FailureReason::NoRoute,
                }) => no_route += 1,
                Ok(PaymentOutcome::Failed {
                    reason: FailureReason::Timeout,
                }) => timeout += 1,
                Ok(PaymentOutcome::Failed { reason }) => panic!("unexpected {reason:?}"),
                Err(_) => rpc += 1,
            }
        }
        (ok, no_route, timeout, rpc)
    }

    #[tokio::test]
    async fn failure_model_is_seeded_and_follows_probabilities() {
        let a = tally(&failing(7), 10_000).await;
        let b = tally(&failing(7), 10_000).await;
        assert_eq!(a, b, "same seed, same outcomes");
        let (ok, no_route, timeout, rpc) = a;
        assert!((6_200..6_800).contains(&ok), "ok {ok}");
        assert!((1_800..2_200).contains(&no_route), "no_route {no_route}");
        assert!((850..1_150).contains(&timeout), "timeout {timeout}");
        assert!((400..600).contains(&rpc), "rpc {rpc}");
        assert_ne!(a, tally(&failing(8), 10_000).await, "another seed differs");
    }

    #[tokio::test(start_paused = true)]
    async fn latency_model_sleeps_within_bounds() {
        let node = FakeNode::new(FakeConfig {
            latency: FakeLatency::Uniform {
                min: Duration::from_millis(10),
                max: Duration::from_millis(20),
            },
            ..FakeConfig::instant("u")
        });
        for _ in 0..50 {
            let start = tokio::time::Instant::now();
            node.keysend("x", 1, Duration::from_secs(1)).await.unwrap();
            let took = start.elapsed();
            assert!(took >= Duration::from_millis(10) && took < Duration::from_millis(21));
        }
        assert_eq!(node.payments_started(), 50);
    }
}
