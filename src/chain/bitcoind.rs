//! Bitcoin Core (bitcoind) as the regtest chain: JSON-RPC over plain HTTP with a user
//! and password, mining with `generatetoaddress` to the tool's own address, ZMQ raw
//! block and raw transaction publishers for the nodes (LND's and Eclair's way of
//! hearing about new blocks), and its wallet compiled in and enabled (Eclair keeps its
//! on-chain funds in a bitcoind wallet; the tool itself funds from its own key).

use super::rpc::{Mining, RpcChain};
use super::{
    ChainBackend, ChainDriver, ChainEndpoint, ChainError, ChainKind, ChainLaunch, ChainPorts,
    ConfigFile, MiningWallet,
};
use async_trait::async_trait;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// Height the chain is mined to before nodes start: segwit is active from the genesis
/// block on regtest; the first 150 coinbases (7,500 BTC) are mature.
pub const PREPARED_HEIGHT: u64 = 250;
/// The version of the locally built image when the build cache names none.
pub const DEFAULT_VERSION: &str = "v31.99.0";
/// The RPC error bitcoind answers while it loads its block index or wallets.
const RPC_IN_WARMUP: i64 = -28;
/// `createwallet` of a name that exists (RPC_WALLET_ERROR), and `loadwallet` of one
/// that is loaded (RPC_WALLET_ALREADY_LOADED).
const RPC_WALLET_EXISTS: i64 = -4;
const RPC_WALLET_ALREADY_LOADED: i64 = -35;

pub struct Bitcoind;

/// The Bitcoin Core driver.
pub static BITCOIND: Bitcoind = Bitcoind;

impl Bitcoind {
    fn client(
        &self,
        endpoint: &ChainEndpoint,
        wallet: MiningWallet,
    ) -> Result<RpcChain, ChainError> {
        let http = RpcChain::http_client(reqwest::Client::builder(), "bitcoind")?;
        Ok(RpcChain::new(
            http,
            format!("http://{}/", endpoint.rpc_addr),
            &endpoint.rpc_user,
            &endpoint.rpc_pass,
            Mining::GenerateToAddress,
            wallet,
        ))
    }
}

#[async_trait]
impl ChainDriver for Bitcoind {
    fn kind(&self) -> ChainKind {
        ChainKind::Bitcoind
    }

    fn binary(&self) -> &'static str {
        "bitcoind"
    }

    fn build_hint(&self) -> &'static str {
        "build it from a Bitcoin Core source tree with `BITCOIN_SRC=<tree> scripts/build-nodes.sh` \
         (docs/implementations.md, \"Bitcoin Core\")"
    }

    fn local_image(&self) -> String {
        let version = crate::cache::built_version("bitcoind")
            .and_then(|v| v.split_whitespace().next().map(str::to_string))
            .unwrap_or_else(|| DEFAULT_VERSION.to_string());
        format!("lnbench/bitcoind:{version}")
    }

    fn ports(&self) -> ChainPorts {
        ChainPorts {
            rpc: 18443,
            p2p: 18444,
            zmq: Some((28332, 28333)),
        }
    }

    fn rpc_tls(&self) -> bool {
        false
    }

    fn cli(&self) -> Option<&'static str> {
        Some("bitcoin-cli")
    }

    fn args(&self, a: &ChainLaunch) -> Vec<String> {
        let (rpc_host, rpc_port) = split_host_port(a.rpc_listen);
        let mut args = vec![
            "-regtest".into(),
            format!("-datadir={}", a.dir),
            "-server".into(),
            format!("-rpcbind={rpc_host}"),
            format!("-rpcport={rpc_port}"),
            // Loopback locally; the run's own network in a container (published on
            // 127.0.0.1 only).
            format!(
                "-rpcallowip={}",
                if rpc_host == "0.0.0.0" {
                    "0.0.0.0/0"
                } else {
                    "127.0.0.1"
                }
            ),
            // The password is in bitcoin.conf in the data dir, read at start.
            format!("-rpcuser={}", a.user),
            format!("-bind={}", a.p2p_listen),
            "-listen=1".into(),
            "-dnsseed=0".into(),
            "-fixedseeds=0".into(),
            "-listenonion=0".into(),
            "-txindex=1".into(),
            // Wallets created later (Eclair's) pay this fee when estimates are missing.
            "-fallbackfee=0.00001".into(),
            // ... and spend no more inputs than needed: at regtest's low fee rates the
            // wallet would otherwise consolidate, and one channel's funding would take
            // the outputs setup gave the node for its other channels.
            "-consolidatefeerate=0".into(),
            // Many nodes each hold RPC connections; the defaults (4 threads, 16 queued)
            // make them wait.
            "-rpcthreads=16".into(),
            "-rpcworkqueue=256".into(),
            "-printtoconsole=1".into(),
        ];
        if let Some((block, tx)) = a.zmq_listen {
            args.push(format!("-zmqpubrawblock=tcp://{block}"));
            // Eclair listens for block hashes, LND for raw blocks: both on one endpoint
            // (subscribers choose by topic).
            args.push(format!("-zmqpubhashblock=tcp://{block}"));
            args.push(format!("-zmqpubrawtx=tcp://{tx}"));
        }
        args
    }

    fn config_files(&self, a: &ChainLaunch) -> Vec<ConfigFile> {
        vec![ConfigFile {
            path: "bitcoin.conf",
            content: format!("rpcpassword={}\n", a.pass),
        }]
    }

    async fn ready(&self, endpoint: &ChainEndpoint) -> bool {
        let Ok(chain) = self.client(endpoint, MiningWallet::generate()) else {
            return false;
        };
        let answer = chain.call::<u64>("getblockcount", json!([]));
        matches!(
            tokio::time::timeout(Duration::from_secs(2), answer).await,
            Ok(Ok(_))
        )
    }

    async fn connect_with_blocks(
        &self,
        endpoint: &ChainEndpoint,
        wallet: MiningWallet,
        blocks: &[String],
    ) -> Result<Arc<dyn ChainBackend>, ChainError> {
        let chain = self.client(endpoint, wallet)?;
        // Ready means the RPC answered once; still, a warm-up answer is retried briefly.
        let mut tries = 0;
        loop {
            match chain.height().await {
                Err(ChainError::Remote { code, .. }) if code == RPC_IN_WARMUP && tries < 50 => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(e) => return Err(e),
                Ok(_) => break,
            }
        }
        chain.submit_blocks(blocks).await?;
        chain.prepare(PREPARED_HEIGHT).await?;
        Ok(Arc::new(chain))
    }

    /// `createwallet <name>` (a descriptor wallet with keys); a wallet of that name
    /// that exists already (a restarted node's) is loaded instead, or kept if loaded.
    async fn create_wallet(&self, endpoint: &ChainEndpoint, name: &str) -> Result<(), ChainError> {
        let chain = self.client(endpoint, MiningWallet::generate())?;
        match chain
            .call::<serde_json::Value>("createwallet", json!([name]))
            .await
        {
            Ok(_) => Ok(()),
            Err(ChainError::Remote { code, .. }) if code == RPC_WALLET_EXISTS => {
                match chain
                    .call::<serde_json::Value>("loadwallet", json!([name]))
                    .await
                {
                    Err(ChainError::Remote { code, .. }) if code == RPC_WALLET_ALREADY_LOADED => {
                        Ok(())
                    }
                    other => other.map(|_| ()),
                }
            }
            Err(e) => Err(e),
        }
    }
}

/// `("0.0.0.0", "18443")` from `0.0.0.0:18443`.
fn split_host_port(addr: &str) -> (&str, &str) {
    addr.rsplit_once(':').unwrap_or((addr, ""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(rpc: &str) -> Vec<String> {
        BITCOIND.args(&ChainLaunch {
            dir: "/run/chain",
            rpc_listen: rpc,
            p2p_listen: "127.0.0.1:2",
            zmq_listen: Some(("127.0.0.1:3", "127.0.0.1:4")),
            user: "u",
            pass: "p",
            mining_addr: "bcrt1qxyz",
        })
    }

    #[test]
    fn args_bind_rpc_p2p_and_zmq_where_asked() {
        let args = launch("127.0.0.1:1");
        for w in [
            "-regtest",
            "-datadir=/run/chain",
            "-rpcbind=127.0.0.1",
            "-rpcport=1",
            "-rpcallowip=127.0.0.1",
            "-bind=127.0.0.1:2",
            "-zmqpubrawblock=tcp://127.0.0.1:3",
            "-zmqpubhashblock=tcp://127.0.0.1:3",
            "-zmqpubrawtx=tcp://127.0.0.1:4",
        ] {
            assert!(args.iter().any(|a| a == w), "missing {w}: {args:?}");
        }
        assert!(
            !args.iter().any(|a| a.contains("disablewallet")),
            "Eclair needs the wallet"
        );
        assert!(!args.iter().any(|a| a.contains("rpcpassword")), "{args:?}");
    }

    #[test]
    fn in_a_container_rpc_is_allowed_from_the_run_network() {
        let args = launch("0.0.0.0:18443");
        assert!(
            args.iter().any(|a| a == "-rpcallowip=0.0.0.0/0"),
            "{args:?}"
        );
    }
}
