//! The chain as the tool uses it, shared by btcd and Bitcoin Core: JSON-RPC over HTTP
//! (HTTPS with a pinned certificate for btcd), mining to the tool's own address, and
//! funding node wallets with transactions the tool signs from mature coinbase outputs
//! it tracks itself (neither backend's wallet is involved).

use super::wallet::{Coin, MiningWallet};
use super::{ChainBackend, ChainError};
use async_trait::async_trait;
use bitcoin::hex::{DisplayHex, FromHex};
use bitcoin::{Address, Amount, Block};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::Mutex;

/// Blocks per mining call, so no single call runs for long.
const GENERATE_BATCH: u32 = 100;
/// Fee rate of funding transactions.
const FUNDING_SAT_PER_VBYTE: u64 = 3;

/// How a backend mines a block to the tool's address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mining {
    /// btcd: `generate n` mines to the address it was started with (`--miningaddr`).
    Generate,
    /// Bitcoin Core: `generatetoaddress n address`.
    GenerateToAddress,
}

/// A chain backend over JSON-RPC. Mining and funding are serialized by one lock over
/// the wallet's coins; `height` is lock-free.
pub struct RpcChain {
    http: reqwest::Client,
    url: String,
    user: String,
    pass: String,
    mining: Mining,
    wallet: MiningWallet,
    coins: Mutex<Vec<Coin>>,
    next_id: AtomicU64,
}

impl std::fmt::Debug for RpcChain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RpcChain")
            .field("url", &self.url)
            .field("mining", &self.mining)
            .field("wallet", &self.wallet)
            .finish_non_exhaustive()
    }
}

#[derive(serde::Deserialize)]
struct RpcResponse<T> {
    result: Option<T>,
    error: Option<RpcErrorBody>,
}

#[derive(serde::Deserialize)]
struct RpcErrorBody {
    code: i64,
    message: String,
}

impl RpcChain {
    /// A client of the JSON-RPC server at `url` (`http://` or `https://`; `http` is
    /// built with the TLS configuration the backend needs). Nothing is sent yet.
    pub fn new(
        http: reqwest::Client,
        url: String,
        user: &str,
        pass: &str,
        mining: Mining,
        wallet: MiningWallet,
    ) -> RpcChain {
        RpcChain {
            http,
            url,
            user: user.to_string(),
            pass: pass.to_string(),
            mining,
            wallet,
            coins: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(1),
        }
    }

    /// An HTTP client with the timeouts every chain RPC uses.
    pub fn http_client(
        builder: reqwest::ClientBuilder,
        what: &str,
    ) -> Result<reqwest::Client, ChainError> {
        builder
            .timeout(Duration::from_secs(120))
            .connect_timeout(Duration::from_secs(10))
            // bitcoind closes a connection idle for its -rpcservertimeout (30 s): a
            // pooled one taken again just then fails "connection closed before message
            // completed" (seen reading a snapshot's blocks 31 s after the chain's last
            // call). Ours are dropped well before that.
            .pool_idle_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| ChainError::Setup {
                detail: format!("cannot build the {what} RPC client: {e}"),
            })
    }

    /// The address the chain mines to.
    pub fn mining_address(&self) -> String {
        self.wallet.address()
    }

    /// Mines up to `height` (if below it): mature coinbases to fund from, and for btcd
    /// segwit active. Before any node starts: LND only serves RPC once synced.
    pub async fn prepare(&self, height: u64) -> Result<(), ChainError> {
        let now = self.height().await?;
        if now < height {
            self.mine((height - now) as u32).await?;
        }
        Ok(())
    }

    /// Satoshis the wallet can spend in the next block.
    pub async fn spendable_sat(&self) -> Result<u64, ChainError> {
        let coins = self.coins.lock().await;
        let tip = self.height().await?;
        Ok(coins
            .iter()
            .filter(|c| c.spendable_at(tip))
            .map(|c| c.value.to_sat())
            .sum())
    }

    /// Submits raw blocks (hex) in order. A block the chain has already (bitcoind keeps
    /// its regtest data across starts) is no error.
    pub async fn submit_blocks(&self, blocks: &[String]) -> Result<(), ChainError> {
        for hex in blocks {
            let refused: Option<String> = self.call_nullable("submitblock", json!([hex])).await?;
            match refused.as_deref() {
                None | Some("duplicate") | Some("inconclusive") => {}
                Some(reason) => {
                    return Err(ChainError::Setup {
                        detail: format!("a snapshot's block was refused: {reason}"),
                    });
                }
            }
        }
        Ok(())
    }

    /// One JSON-RPC call.
    pub async fn call<T: DeserializeOwned>(
        &self,
        method: &'static str,
        params: Value,
    ) -> Result<T, ChainError> {
        self.call_nullable(method, params)
            .await?
            .ok_or_else(|| ChainError::Rpc {
                method,
                source: "answer without result".into(),
            })
    }

    /// One JSON-RPC call whose result may be null (None).
    async fn call_nullable<T: DeserializeOwned>(
        &self,
        method: &'static str,
        params: Value,
    ) -> Result<Option<T>, ChainError> {
        let rpc =
            |source: Box<dyn std::error::Error + Send + Sync>| ChainError::Rpc { method, source };
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let response = self
            .http
            .post(&self.url)
            .basic_auth(&self.user, Some(&self.pass))
            .json(&json!({"jsonrpc": "1.0", "id": id, "method": method, "params": params}))
            .send()
            .await
            .map_err(|e| rpc(Box::new(e)))?;
        let status = response.status();
        let body = response.bytes().await.map_err(|e| rpc(Box::new(e)))?;
        // Both answer RPC errors with a JSON body (often with a 500 status), but
        // authentication failures with plain text or an empty body.
        let parsed: RpcResponse<T> = serde_json::from_slice(&body).map_err(|e| {
            let text = String::from_utf8_lossy(&body[..body.len().min(200)])
                .trim()
                .to_string();
            rpc(format!("HTTP {status}: {text} ({e})").into())
        })?;
        if let Some(err) = parsed.error {
            return Err(ChainError::Remote {
                method,
                code: err.code,
                message: err.message,
            });
        }
        Ok(parsed.result)
    }

    async fn block(&self, hash: &str) -> Result<Block, ChainError> {
        let hex: String = self.call("getblock", json!([hash, 0])).await?;
        let bytes = Vec::<u8>::from_hex(&hex).map_err(|e| ChainError::Rpc {
            method: "getblock",
            source: Box::new(e),
        })?;
        bitcoin::consensus::deserialize(&bytes).map_err(|e| ChainError::Rpc {
            method: "getblock",
            source: Box::new(e),
        })
    }
}

#[async_trait]
impl ChainBackend for RpcChain {
    async fn height(&self) -> Result<u64, ChainError> {
        self.call("getblockcount", json!([])).await
    }

    async fn mine(&self, blocks: u32) -> Result<(), ChainError> {
        let mut coins = self.coins.lock().await;
        let mut remaining = blocks;
        while remaining > 0 {
            let batch = remaining.min(GENERATE_BATCH);
            let before = self.height().await?;
            let hashes: Vec<String> = match self.mining {
                Mining::Generate => self.call("generate", json!([batch])).await?,
                Mining::GenerateToAddress => {
                    let to = self.wallet.address();
                    self.call("generatetoaddress", json!([batch, to])).await?
                }
            };
            // A few blocks at a time: each call may be a connection of its own (btcd
            // closes after every answer), which costs most through a port-forward.
            let mut blocks: Vec<Block> = Vec::with_capacity(hashes.len());
            for chunk in hashes.chunks(8) {
                let mut calls = Vec::with_capacity(chunk.len());
                for hash in chunk {
                    calls.push(self.block(hash));
                }
                blocks.extend(futures::future::try_join_all(calls).await?);
            }
            for (i, block) in blocks.iter().enumerate() {
                // BIP 34 puts the height in the coinbase; the count is the fallback.
                let height = block.bip34_block_height().unwrap_or(before + 1 + i as u64);
                coins.extend(self.wallet.coinbase_coins(block, height));
            }
            remaining -= batch;
        }
        Ok(())
    }

    async fn raw_blocks(&self) -> Result<Vec<String>, ChainError> {
        let tip = self.height().await?;
        let mut blocks = Vec::with_capacity(tip as usize);
        for height in 1..=tip {
            let hash: String = self.call("getblockhash", json!([height])).await?;
            blocks.push(self.call("getblock", json!([hash, 0])).await?);
        }
        Ok(blocks)
    }

    async fn fund(&self, outputs: &[(String, u64)]) -> Result<String, ChainError> {
        let wanted_sat = outputs.iter().map(|(_, sat)| sat).sum();
        let funding = |detail: String| ChainError::Funding { wanted_sat, detail };
        let mut scripts = Vec::with_capacity(outputs.len());
        for (address, sat) in outputs {
            let script = Address::from_str(address)
                .and_then(|a| a.require_network(bitcoin::Network::Regtest))
                .map_err(|e| funding(format!("bad regtest address {address:?}: {e}")))?
                .script_pubkey();
            scripts.push((script, Amount::from_sat(*sat)));
        }
        let mut coins = self.coins.lock().await;
        let tip = self.height().await?;
        let built = self
            .wallet
            .build_funding(&coins, tip, &scripts, FUNDING_SAT_PER_VBYTE)
            .map_err(|e| funding(e.to_string()))?;
        let hex = bitcoin::consensus::serialize(&built.tx).to_lower_hex_string();
        let txid: String = self.call("sendrawtransaction", json!([hex])).await?;
        coins.retain(|c| !built.spent.contains(&c.outpoint));
        coins.extend(built.change);
        tracing::debug!(%txid, fee_sat = built.fee.to_sat(), "funding transaction sent");
        Ok(txid)
    }
}
