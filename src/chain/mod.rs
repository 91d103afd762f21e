//! Chain backends: the regtest chain the nodes run on.

pub mod btcd;

use async_trait::async_trait;

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
}
