//! btcd as the regtest chain: JSON-RPC over HTTPS with its self-signed certificate
//! pinned, mining with `generate` to the tool's own address, and funding node wallets
//! with transactions the tool signs from mature coinbase outputs.
//!
//! Order of use: [`MiningWallet::generate`], start btcd with `--miningaddr` set to
//! [`MiningWallet::address`], [`BtcdChain::connect`], [`BtcdChain::prepare`] (before
//! any LND starts), then `fund` / `mine`.

mod wallet;

pub use wallet::{COINBASE_MATURITY, Coin, MiningWallet};

use super::{ChainBackend, ChainError};
use crate::runtime::ChainEndpoint;
use crate::tls;
use async_trait::async_trait;
use bitcoin::hex::{DisplayHex, FromHex};
use bitcoin::{Address, Amount, Block};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::Mutex;

/// btcd's regtest activates segwit by BIP 9 signalling: the deployment is ACTIVE from
/// the fourth 144-block window on.
pub const SEGWIT_ACTIVE_HEIGHT: u64 = 432;
/// Height [`BtcdChain::prepare`] mines to: segwit is active, and the coinbases of the
/// first 400 blocks (over 12,000 BTC) are mature.
pub const PREPARED_HEIGHT: u64 = 500;
/// Blocks per `generate` call, so no single call runs for long.
const GENERATE_BATCH: u32 = 100;
/// Fee rate of funding transactions.
const FUNDING_SAT_PER_VBYTE: u64 = 3;

/// The btcd chain backend. Mining and funding are serialized by one lock over the
/// wallet's coins; `height` is lock-free.
pub struct BtcdChain {
    http: reqwest::Client,
    url: String,
    user: String,
    pass: String,
    wallet: MiningWallet,
    coins: Mutex<Vec<Coin>>,
    next_id: AtomicU64,
}

impl std::fmt::Debug for BtcdChain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BtcdChain")
            .field("url", &self.url)
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

impl BtcdChain {
    /// Builds the RPC client with the pinned certificate and checks that btcd answers.
    /// `wallet` must be the one whose address btcd mines to.
    pub async fn connect(
        endpoint: &ChainEndpoint,
        wallet: MiningWallet,
    ) -> Result<BtcdChain, ChainError> {
        let setup = |detail: String| ChainError::Setup { detail };
        let cert = tls::read_pem_cert(&endpoint.rpc_cert).map_err(|e| setup(format!("{e:#}")))?;
        let config = tls::https_client_config(cert).map_err(|e| setup(e.to_string()))?;
        let http = reqwest::Client::builder()
            .tls_backend_preconfigured(config)
            .timeout(Duration::from_secs(120))
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| setup(format!("cannot build the btcd RPC client: {e}")))?;
        let chain = BtcdChain {
            http,
            url: format!("https://{}/", endpoint.rpc_addr),
            user: endpoint.rpc_user.clone(),
            pass: endpoint.rpc_pass.clone(),
            wallet,
            coins: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(1),
        };
        chain.height().await?;
        Ok(chain)
    }

    /// The address btcd mines to.
    pub fn mining_address(&self) -> String {
        self.wallet.address()
    }

    /// Mines until segwit is active and many coinbases are mature
    /// ([`PREPARED_HEIGHT`]). Call it before starting LND nodes: they only serve RPC
    /// once synced, and funding needs mature coins.
    pub async fn prepare(&self) -> Result<(), ChainError> {
        let height = self.height().await?;
        if height < PREPARED_HEIGHT {
            self.mine((PREPARED_HEIGHT - height) as u32).await?;
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

    /// One JSON-RPC call.
    pub async fn call<T: DeserializeOwned>(
        &self,
        method: &'static str,
        params: Value,
    ) -> Result<T, ChainError> {
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
        // btcd answers RPC errors with a JSON body (sometimes with a 500 status), but
        // authentication failures with plain text.
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
        parsed
            .result
            .ok_or_else(|| rpc(format!("HTTP {status}: answer without result").into()))
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
impl ChainBackend for BtcdChain {
    async fn height(&self) -> Result<u64, ChainError> {
        self.call("getblockcount", json!([])).await
    }

    async fn mine(&self, blocks: u32) -> Result<(), ChainError> {
        let mut coins = self.coins.lock().await;
        let mut remaining = blocks;
        while remaining > 0 {
            let batch = remaining.min(GENERATE_BATCH);
            let before = self.height().await?;
            let hashes: Vec<String> = self.call("generate", json!([batch])).await?;
            for (i, hash) in hashes.iter().enumerate() {
                let block = self.block(hash).await?;
                // BIP 34 puts the height in the coinbase; the count is the fallback.
                let height = block.bip34_block_height().unwrap_or(before + 1 + i as u64);
                coins.extend(self.wallet.coinbase_coins(&block, height));
            }
            remaining -= batch;
        }
        Ok(())
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
