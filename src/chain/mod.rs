//! Chain backends: the regtest chain the nodes run on. One driver per implementation
//! (`btcd.rs`, `bitcoind.rs`) owns its command line, ports and how the tool talks to it;
//! `rpc.rs` is the JSON-RPC chain both share, funding node wallets from the tool's own
//! mining wallet (`wallet.rs`).

pub mod bitcoind;
pub mod btcd;
pub mod fake;
pub mod rpc;
pub mod wallet;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;

pub use wallet::MiningWallet;

/// The name of the chain backend's process or container, directory and log.
pub const CHAIN_NAME: &str = "chain";

/// Which chain backend a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChainKind {
    Btcd,
    Bitcoind,
}

impl ChainKind {
    pub const ALL: [ChainKind; 2] = [ChainKind::Btcd, ChainKind::Bitcoind];

    pub fn as_str(self) -> &'static str {
        match self {
            ChainKind::Btcd => "btcd",
            ChainKind::Bitcoind => "bitcoind",
        }
    }
}

impl std::fmt::Display for ChainKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The driver of a chain backend: the one registration line per implementation.
pub fn driver(kind: ChainKind) -> &'static dyn ChainDriver {
    match kind {
        ChainKind::Btcd => &btcd::BTCD,
        ChainKind::Bitcoind => &bitcoind::BITCOIND,
    }
}

/// How the tool reaches the chain backend's RPC. Its `Debug` leaves the password out.
#[derive(Clone)]
pub struct ChainEndpoint {
    pub kind: ChainKind,
    /// `127.0.0.1:port` of the RPC listener.
    pub rpc_addr: String,
    pub rpc_user: String,
    pub rpc_pass: String,
    /// PEM certificate of the RPC listener, to pin, when it speaks TLS (btcd).
    pub rpc_cert: Option<PathBuf>,
    /// The version the binary states, and where it came from when known.
    pub version: String,
    /// How the nodes reach the same backend.
    pub access: ChainAccess,
}

/// How a node reaches the chain backend, in the terms of where the node runs. Its
/// `Debug` leaves the password out.
#[derive(Clone, PartialEq, Eq)]
pub struct ChainAccess {
    pub kind: ChainKind,
    /// `host:port` of the RPC listener.
    pub rpc_addr: String,
    pub rpc_user: String,
    pub rpc_pass: String,
    /// Path of the RPC listener's certificate (btcd).
    pub rpc_cert: Option<String>,
    /// `tcp://host:port` of the ZMQ raw block and raw transaction publishers (bitcoind).
    pub zmq_block: Option<String>,
    pub zmq_tx: Option<String>,
    /// The chain's command-line client as the node sees it (bitcoind's `bitcoin-cli`,
    /// which Core Lightning shells out to), when the backend has one nodes can use.
    pub cli: Option<String>,
}

impl ChainAccess {
    /// Access to a chain of `kind` with no address or credentials: what the config
    /// files a node is started with are named, without a run's values (snapshots
    /// leave those files out).
    pub fn unset(kind: ChainKind) -> ChainAccess {
        ChainAccess {
            kind,
            rpc_addr: String::new(),
            rpc_user: String::new(),
            rpc_pass: String::new(),
            rpc_cert: None,
            zmq_block: None,
            zmq_tx: None,
            cli: None,
        }
    }
}

/// In place of a password in `Debug` output (a panic message, a log line).
const HIDDEN: &str = "<redacted>";

impl std::fmt::Debug for ChainEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChainEndpoint")
            .field("kind", &self.kind)
            .field("rpc_addr", &self.rpc_addr)
            .field("rpc_user", &self.rpc_user)
            .field("rpc_pass", &HIDDEN)
            .field("rpc_cert", &self.rpc_cert)
            .field("version", &self.version)
            .field("access", &self.access)
            .finish()
    }
}

impl std::fmt::Debug for ChainAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChainAccess")
            .field("kind", &self.kind)
            .field("rpc_addr", &self.rpc_addr)
            .field("rpc_user", &self.rpc_user)
            .field("rpc_pass", &HIDDEN)
            .field("rpc_cert", &self.rpc_cert)
            .field("zmq_block", &self.zmq_block)
            .field("zmq_tx", &self.zmq_tx)
            .field("cli", &self.cli)
            .finish()
    }
}

/// The container ports of a chain backend (each container has its own address).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainPorts {
    pub rpc: u16,
    pub p2p: u16,
    /// ZMQ raw block and raw transaction publishers, for backends that have them.
    pub zmq: Option<(u16, u16)>,
}

/// Where and how the chain backend runs, in the terms of the place it runs in.
#[derive(Debug, Clone)]
pub struct ChainLaunch<'a> {
    /// Directory for its data and, for a TLS RPC, `rpc.cert` / `rpc.key`.
    pub dir: &'a str,
    /// `host:port` the RPC server listens on.
    pub rpc_listen: &'a str,
    /// `host:port` the P2P server listens on.
    pub p2p_listen: &'a str,
    /// `host:port` of the ZMQ raw block / raw transaction publishers.
    pub zmq_listen: Option<(&'a str, &'a str)>,
    pub user: &'a str,
    pub pass: &'a str,
    /// The tool's mining address (btcd mines to it on `generate`).
    pub mining_addr: &'a str,
}

/// A file a daemon reads at start, written (0600) into its directory before it starts:
/// how secrets (RPC passwords) reach it without showing on a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    /// Path relative to the daemon's directory (the launch's `dir`).
    pub path: &'static str,
    pub content: String,
}

/// Everything the tool knows about one chain backend implementation.
#[async_trait]
pub trait ChainDriver: Send + Sync {
    fn kind(&self) -> ChainKind;
    /// The daemon's binary name, looked up in the build cache and on PATH.
    fn binary(&self) -> &'static str;
    /// The command that builds the binary, for "not found" messages.
    fn build_hint(&self) -> &'static str;
    /// The image `scripts/build-images.sh` builds, for the docker runtime.
    fn local_image(&self) -> String;
    fn ports(&self) -> ChainPorts;
    /// True when the RPC speaks TLS with a certificate the runtime writes to
    /// `<dir>/rpc.cert` and `<dir>/rpc.key` before the start.
    fn rpc_tls(&self) -> bool;
    /// The binary name of its command-line client, for nodes that talk to the chain
    /// through it (Core Lightning's bcli plugin): looked up beside the chain's binary
    /// locally, expected in `/bin` of node images.
    fn cli(&self) -> Option<&'static str>;
    /// The command line (before the scenario's own `args:`). Never a secret: those go
    /// in [`ChainDriver::config_files`].
    fn args(&self, launch: &ChainLaunch) -> Vec<String>;
    /// Files to write into the launch's `dir` before the start (the RPC password).
    fn config_files(&self, launch: &ChainLaunch) -> Vec<ConfigFile>;
    /// True once the RPC serves: more than a port that accepts TCP, which a container
    /// engine's proxy does before the daemon listens.
    async fn ready(&self, endpoint: &ChainEndpoint) -> bool;
    /// Connects the tool's client, mining to `wallet`'s address, and mines until coins
    /// are mature and the chain is ready for nodes (before any node starts: LND only
    /// serves once synced).
    async fn connect(
        &self,
        endpoint: &ChainEndpoint,
        wallet: MiningWallet,
    ) -> Result<Arc<dyn ChainBackend>, ChainError> {
        self.connect_with_blocks(endpoint, wallet, &[]).await
    }
    /// [`ChainDriver::connect`], first submitting `blocks` (raw, hex, from height 1 on:
    /// a snapshot's chain, as btcd empties its regtest database at every start).
    async fn connect_with_blocks(
        &self,
        endpoint: &ChainEndpoint,
        wallet: MiningWallet,
        blocks: &[String],
    ) -> Result<Arc<dyn ChainBackend>, ChainError>;
    /// Creates the backend's wallet `name` for a node that keeps its funds there
    /// ([`crate::node::driver::ChainNeeds::wallet`]); one that exists already is kept.
    async fn create_wallet(&self, _endpoint: &ChainEndpoint, name: &str) -> Result<(), ChainError> {
        Err(ChainError::Setup {
            detail: format!("{} has no wallet for node {name}", self.binary()),
        })
    }
}

/// An error from the chain backend.
#[derive(Debug, thiserror::Error)]
pub enum ChainError {
    #[error("chain RPC {method} failed")]
    Rpc {
        method: &'static str,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("chain RPC {method} returned an error: {message} (code {code})")]
    Remote {
        method: &'static str,
        code: i64,
        message: String,
    },
    #[error("cannot fund {wanted_sat} sat: {detail}")]
    Funding { wanted_sat: u64, detail: String },
    #[error("chain backend setup: {detail}")]
    Setup { detail: String },
}

/// A regtest chain the tool controls: it mines, and it pays node wallets from coins it holds.
#[async_trait]
pub trait ChainBackend: Send + Sync {
    async fn height(&self) -> Result<u64, ChainError>;
    /// Mine `blocks` blocks (to the tool's own mining address).
    async fn mine(&self, blocks: u32) -> Result<(), ChainError>;
    /// Pay each `(address, amount_sat)` in one transaction signed by the tool;
    /// returns the txid. The transaction is in the mempool on return (not mined).
    async fn fund(&self, outputs: &[(String, u64)]) -> Result<String, ChainError>;
    /// Every block from height 1 to the tip, raw (hex), for a snapshot.
    async fn raw_blocks(&self) -> Result<Vec<String>, ChainError> {
        Err(ChainError::Setup {
            detail: "this chain cannot give its blocks".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_never_shows_the_rpc_password() {
        let access = ChainAccess {
            kind: ChainKind::Bitcoind,
            rpc_addr: "chain:18443".into(),
            rpc_user: "lnbench".into(),
            rpc_pass: "s3cret-pass".into(),
            rpc_cert: None,
            zmq_block: None,
            zmq_tx: None,
            cli: None,
        };
        let endpoint = ChainEndpoint {
            kind: ChainKind::Bitcoind,
            rpc_addr: "127.0.0.1:18443".into(),
            rpc_user: "lnbench".into(),
            rpc_pass: "s3cret-pass".into(),
            rpc_cert: None,
            version: "v1".into(),
            access,
        };
        let text = format!("{endpoint:?} {endpoint:#?}");
        assert!(!text.contains("s3cret-pass"), "{text}");
        assert!(text.contains("rpc_user: \"lnbench\"") && text.contains("<redacted>"));
    }
}
