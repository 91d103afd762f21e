//! An in-process fake regtest chain for the fake runtime: blocks are a counter, a
//! transaction is a list of outputs to addresses, and `mine` confirms what is waiting.
//! Fake nodes read it for their height, their wallet's confirmed coins and their
//! channels' funding depth, so setup's steps (funding, channel opening, route checks)
//! run against it as they do against a real chain. A test double, never a backend a
//! scenario can choose.

use super::{ChainBackend, ChainError};
use async_trait::async_trait;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The height a fresh fake chain starts at: the coinbase of block 1 is mature, as
/// setup's "mining until coins are mature" leaves a real chain.
pub const MATURE_HEIGHT: u64 = 101;

/// The fake chain of one network; clones share it.
#[derive(Clone, Default)]
pub struct FakeChain(Arc<Mutex<Blocks>>);

#[derive(Default)]
struct Blocks {
    height: u64,
    /// Transactions sent and not yet mined, in order.
    mempool: Vec<Tx>,
    /// The height each transaction was mined at, by txid.
    mined_at: HashMap<String, u64>,
    /// Confirmed coins by address, in sat.
    coins: HashMap<String, Vec<u64>>,
    sent: u64,
    /// While stopped (a `stop_chain` fault), every call fails as a real RPC would.
    stopped: bool,
}

struct Tx {
    txid: String,
    outputs: Vec<(String, u64)>,
}

impl FakeChain {
    /// A chain at [`MATURE_HEIGHT`].
    pub fn new() -> Self {
        let chain = FakeChain::default();
        chain.blocks().height = MATURE_HEIGHT;
        chain
    }

    fn blocks(&self) -> std::sync::MutexGuard<'_, Blocks> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Puts a transaction paying `outputs` in the mempool; its txid.
    pub fn send(&self, outputs: &[(String, u64)]) -> String {
        let mut blocks = self.blocks();
        blocks.sent += 1;
        let txid = format!("{:064x}", blocks.sent);
        let tx = Tx {
            txid: txid.clone(),
            outputs: outputs.to_vec(),
        };
        blocks.mempool.push(tx);
        txid
    }

    /// Confirmations of `txid`: 0 while in the mempool (or unknown).
    pub fn confirmations(&self, txid: &str) -> u64 {
        let blocks = self.blocks();
        (blocks.mined_at.get(txid)).map_or(0, |at| blocks.height - at + 1)
    }

    /// Confirmed sat paid to `address`.
    pub fn confirmed_to(&self, address: &str) -> u64 {
        self.blocks()
            .coins
            .get(address)
            .map_or(0, |c| c.iter().sum())
    }

    pub fn tip(&self) -> u64 {
        self.blocks().height
    }

    /// Stops (or starts again) answering, as a chain backend a fault stopped.
    pub fn set_stopped(&self, stopped: bool) {
        self.blocks().stopped = stopped;
    }

    fn answering(
        &self,
        method: &'static str,
    ) -> Result<std::sync::MutexGuard<'_, Blocks>, ChainError> {
        let blocks = self.blocks();
        if blocks.stopped {
            return Err(ChainError::Remote {
                method,
                code: -28,
                message: "the fake chain is stopped".into(),
            });
        }
        Ok(blocks)
    }
}

#[async_trait]
impl ChainBackend for FakeChain {
    async fn height(&self) -> Result<u64, ChainError> {
        Ok(self.answering("getblockcount")?.height)
    }

    async fn mine(&self, blocks: u32) -> Result<(), ChainError> {
        let mut chain = self.answering("generatetoaddress")?;
        if blocks == 0 {
            return Ok(());
        }
        chain.height += u64::from(blocks);
        let first = chain.height - u64::from(blocks) + 1;
        for tx in std::mem::take(&mut chain.mempool) {
            for (address, sat) in tx.outputs {
                chain.coins.entry(address).or_default().push(sat);
            }
            chain.mined_at.insert(tx.txid, first);
        }
        Ok(())
    }

    async fn fund(&self, outputs: &[(String, u64)]) -> Result<String, ChainError> {
        drop(self.answering("sendmany")?);
        Ok(self.send(outputs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn coins_count_once_mined_and_depth_grows_with_blocks() {
        let chain = FakeChain::new();
        assert_eq!(chain.height().await.unwrap(), MATURE_HEIGHT);
        let txid = chain
            .fund(&[("a".into(), 5), ("b".into(), 7)])
            .await
            .unwrap();
        assert_eq!(
            (chain.confirmed_to("a"), chain.confirmations(&txid)),
            (0, 0)
        );
        chain.mine(1).await.unwrap();
        assert_eq!((chain.confirmed_to("a"), chain.confirmed_to("b")), (5, 7));
        chain.mine(2).await.unwrap();
        assert_eq!(chain.confirmations(&txid), 3);
        chain.set_stopped(true);
        assert!(chain.mine(1).await.is_err());
        chain.set_stopped(false);
        assert_eq!(chain.height().await.unwrap(), MATURE_HEIGHT + 3);
    }
}
