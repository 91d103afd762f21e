//! btcd as the regtest chain: JSON-RPC over HTTPS with a P-256 certificate the runtime
//! writes (btcd would make a P-521 one, which rustls with ring cannot verify) and the
//! tool pins, mining with `generate` to `--miningaddr`, the tool's own address.
//!
//! btcd has no `generatetoaddress`, and restarting it to change `--miningaddr` has lost
//! blocks here: it is started once with the tool's address.

use super::rpc::{Mining, RpcChain};
use super::{
    ChainBackend, ChainDriver, ChainEndpoint, ChainError, ChainKind, ChainLaunch, ChainPorts,
    ConfigFile, MiningWallet,
};
use crate::tls;
use async_trait::async_trait;
use std::sync::Arc;

/// btcd's regtest activates segwit by BIP 9 signalling: the deployment is ACTIVE from
/// the fourth 144-block window on.
pub const SEGWIT_ACTIVE_HEIGHT: u64 = 432;
/// Height the chain is mined to before nodes start: segwit is active, and the coinbases
/// of the first 400 blocks (over 12,000 BTC) are mature.
pub const PREPARED_HEIGHT: u64 = 500;
/// The btcd version of the locally built image.
pub const DEFAULT_VERSION: &str = "v0.24.2";

pub struct Btcd;

/// The btcd driver.
pub static BTCD: Btcd = Btcd;

#[async_trait]
impl ChainDriver for Btcd {
    fn kind(&self) -> ChainKind {
        ChainKind::Btcd
    }

    fn binary(&self) -> &'static str {
        "btcd"
    }

    fn build_hint(&self) -> &'static str {
        "run `scripts/build-nodes.sh` to build it"
    }

    fn local_image(&self) -> String {
        format!("lnbench/btcd:{DEFAULT_VERSION}")
    }

    fn ports(&self) -> ChainPorts {
        ChainPorts {
            rpc: 18556,
            p2p: 18444,
            zmq: None,
        }
    }

    fn rpc_tls(&self) -> bool {
        true
    }

    /// btcctl speaks btcd's own dialect; no node shells out to it.
    fn cli(&self) -> Option<&'static str> {
        None
    }

    fn args(&self, a: &ChainLaunch) -> Vec<String> {
        let d = a.dir;
        vec![
            "--regtest".into(),
            format!("--datadir={d}/data"),
            format!("--logdir={d}/logs"),
            // The password is in the config file, not on the command line.
            format!("--configfile={d}/btcd.conf"),
            format!("--rpcuser={}", a.user),
            format!("--rpclisten={}", a.rpc_listen),
            format!("--listen={}", a.p2p_listen),
            format!("--rpccert={d}/rpc.cert"),
            format!("--rpckey={d}/rpc.key"),
            format!("--miningaddr={}", a.mining_addr),
            "--txindex".into(),
            // Many LND nodes each hold websocket clients; the defaults (10 / 25) are small.
            "--rpcmaxclients=1000".into(),
            "--rpcmaxwebsockets=1000".into(),
            "--rpcmaxconcurrentreqs=1000".into(),
            "--debuglevel=info".into(),
        ]
    }

    fn config_files(&self, a: &ChainLaunch) -> Vec<ConfigFile> {
        vec![ConfigFile {
            path: "btcd.conf",
            content: format!("[Application Options]\nrpcpass={}\n", a.pass),
        }]
    }

    async fn ready(&self, endpoint: &ChainEndpoint) -> bool {
        match endpoint.rpc_cert.as_ref().map(std::fs::read) {
            Some(Ok(pem)) => tls::handshake_ok(&endpoint.rpc_addr, &pem).await.is_ok(),
            _ => false,
        }
    }

    async fn connect_with_blocks(
        &self,
        endpoint: &ChainEndpoint,
        wallet: MiningWallet,
        blocks: &[String],
    ) -> Result<Arc<dyn ChainBackend>, ChainError> {
        let setup = |detail: String| ChainError::Setup { detail };
        let cert_path = (endpoint.rpc_cert.as_ref())
            .ok_or_else(|| setup("btcd's RPC certificate is missing".into()))?;
        let cert = tls::read_pem_cert(cert_path).map_err(|e| setup(format!("{e:#}")))?;
        let config = tls::https_client_config(cert).map_err(|e| setup(e.to_string()))?;
        let http = RpcChain::http_client(
            reqwest::Client::builder().tls_backend_preconfigured(config),
            "btcd",
        )?;
        let chain = RpcChain::new(
            http,
            format!("https://{}/", endpoint.rpc_addr),
            &endpoint.rpc_user,
            &endpoint.rpc_pass,
            Mining::Generate,
            wallet,
        );
        chain.submit_blocks(blocks).await?;
        chain.prepare(PREPARED_HEIGHT).await?;
        Ok(Arc::new(chain))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_mine_to_the_given_address() {
        let args = BTCD.args(&ChainLaunch {
            dir: "/run/chain",
            rpc_listen: "127.0.0.1:1",
            p2p_listen: "127.0.0.1:2",
            zmq_listen: None,
            user: "u",
            pass: "p",
            mining_addr: "bcrt1qxyz",
        });
        for w in [
            "--regtest",
            "--miningaddr=bcrt1qxyz",
            "--rpclisten=127.0.0.1:1",
            "--listen=127.0.0.1:2",
            "--rpccert=/run/chain/rpc.cert",
            "--txindex",
            "--configfile=/run/chain/btcd.conf",
        ] {
            assert!(args.iter().any(|a| a == w), "missing {w}: {args:?}");
        }
        assert!(!args.iter().any(|a| a.contains("rpcpass")), "{args:?}");
    }
}
