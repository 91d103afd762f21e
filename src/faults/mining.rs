//! Background mining during the load (`mining: { every: 10s }`): a block each period
//! through the tool's chain client, in a task of its own so the fault loop never waits
//! on the chain; `mining: stop` and `mining: resume` faults switch it off and on.

use crate::chain::ChainBackend;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio::time::Instant;

pub struct Miner {
    chain: Arc<dyn ChainBackend>,
    every: Duration,
    on: bool,
    /// When the last block was asked for (or mining was switched on).
    last: Instant,
    mining: Option<JoinHandle<Result<(), String>>>,
    /// Blocks mined, and the first error (the load goes on without its blocks).
    pub mined: u64,
    pub error: Option<String>,
}

impl Miner {
    pub fn new(chain: Arc<dyn ChainBackend>, every: Duration) -> Miner {
        Miner {
            chain,
            every,
            on: true,
            last: Instant::now(),
            mining: None,
            mined: 0,
            error: None,
        }
    }

    /// Mines a block when one is due and none is being mined.
    pub async fn step(&mut self) {
        if self.mining.as_ref().is_some_and(JoinHandle::is_finished) {
            self.settle().await;
        }
        if self.on && self.mining.is_none() && self.last.elapsed() >= self.every {
            self.last = Instant::now();
            let chain = Arc::clone(&self.chain);
            self.mining = Some(tokio::spawn(async move {
                chain.mine(1).await.map_err(|e| e.to_string())
            }));
        }
    }

    /// Waits for the block being mined, if any, and counts it.
    async fn settle(&mut self) {
        let Some(task) = self.mining.take() else {
            return;
        };
        match task.await {
            Ok(Ok(())) => self.mined += 1,
            Ok(Err(e)) => {
                self.error.get_or_insert(e);
            }
            Err(e) => {
                self.error.get_or_insert(e.to_string());
            }
        }
    }

    /// Switches mining off (after the block being mined, so none comes later) or on
    /// (the next block one period on).
    pub async fn switch(&mut self, on: bool) {
        self.settle().await;
        if on && !self.on {
            self.last = Instant::now();
        }
        self.on = on;
    }

    /// The load has ended: no more blocks.
    pub async fn finish(&mut self) {
        self.switch(false).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::ChainError;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// A chain that counts the blocks asked of it.
    #[derive(Default)]
    struct Counting(AtomicU64);

    #[async_trait::async_trait]
    impl ChainBackend for Counting {
        async fn height(&self) -> Result<u64, ChainError> {
            Ok(self.0.load(Ordering::SeqCst))
        }
        async fn mine(&self, blocks: u32) -> Result<(), ChainError> {
            self.0.fetch_add(u64::from(blocks), Ordering::SeqCst);
            Ok(())
        }
        async fn fund(&self, _outputs: &[(String, u64)]) -> Result<String, ChainError> {
            Ok(String::new())
        }
    }

    /// Steps the miner every 100 ms for `secs`.
    async fn run_for(miner: &mut Miner, secs: u64) {
        for _ in 0..secs * 10 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            miner.step().await;
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_block_each_period_none_while_stopped_and_again_once_resumed() {
        let chain = Arc::new(Counting::default());
        let mut miner = Miner::new(chain.clone(), Duration::from_secs(2));
        run_for(&mut miner, 7).await;
        miner.switch(false).await;
        let stopped = chain.height().await.unwrap();
        assert_eq!(stopped, 3, "blocks at 2, 4 and 6 s");
        assert_eq!(miner.mined, 3);
        run_for(&mut miner, 10).await;
        assert_eq!(chain.height().await.unwrap(), stopped, "none while stopped");
        miner.switch(true).await;
        run_for(&mut miner, 5).await;
        miner.finish().await;
        assert_eq!(
            chain.height().await.unwrap(),
            stopped + 2,
            "at 2 and 4 s after"
        );
        assert_eq!(miner.mined, 5);
        assert!(miner.error.is_none());
    }
}
