//! What an implementation owns, apart from talking to a running node: how it is started
//! (command line, ports, the chain backends it runs on), which files it writes that a
//! client needs, how to tell it is ready, how to connect a client, the rules of opening
//! channels with it and its default images. Runtimes, setup, restart and the report ask
//! the driver of a node's implementation ([`super::driver`]); none of them names an
//! implementation. What only some implementations can do (a PostgreSQL or etcd
//! backend, external nodes, migrations in the log) is a capability each offers or not,
//! in a file of its own here.

mod channel_rules;
mod etcd;
mod external;
mod migrations;
mod postgres;
mod program;

pub use channel_rules::{ChannelRules, HtlcLimit};
pub use etcd::Etcd;
pub use external::External;
pub use migrations::Migrations;
pub use postgres::{Postgres, PostgresLogin};
pub(crate) use program::image_tag;
pub use program::{BuildTags, NodeImages, Program};

use super::{Credentials, Database, Implementation, LightningNode, NodeError};
use crate::chain::{ChainAccess, ChainKind};
use async_trait::async_trait;
use std::path::PathBuf;
use std::sync::Arc;

/// How to reach one started node.
#[derive(Debug, Clone)]
pub struct NodeEndpoint {
    /// Instance name (`alice-2`).
    pub name: String,
    pub implementation: Implementation,
    /// `127.0.0.1:port` of the RPC listener the tool's client uses.
    pub rpc_addr: String,
    /// Where peers dial this node's Lightning P2P listener (`127.0.0.1:port` locally,
    /// `<name>:9735` on a container network).
    pub p2p_addr: String,
    pub credentials: Credentials,
    pub data_dir: PathBuf,
    /// The binary (or image) that was started, for the report.
    pub binary: PathBuf,
    pub pid: Option<u32>,
    /// Core Lightning: the command its client pays invoices with.
    pub payment_engine: super::PaymentEngine,
}

/// What a workload may ask of a node beyond paying invoices; an implementation (or the
/// tool's client for it) lacking one says why ([`NodeDriver::missing`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// Paying and receiving without an invoice (keysend).
    Keysend,
    /// Custom TLV records sent with a keysend (a podcast stream's record).
    CustomRecords,
    /// A limit on the parts of a multi-part payment (`workload: max_parts:`).
    PartLimit,
    /// Invoices whose HTLC the node keeps until told to settle or cancel it (the
    /// attack's accomplice).
    HoldInvoices,
    /// A payment to itself around a chosen circle (rebalancing).
    CircularPayments,
    /// A choice of the command that pays invoices (`payment_engine:`).
    PaymentEngines,
    /// A choice of database backend by flags (`sweep: db_backend:`), with its
    /// native SQL schema where it has one.
    DbBackends,
}

impl Feature {
    /// The feature in words, as an error that names it says it ("this client has no
    /// hold invoices").
    pub fn name(self) -> &'static str {
        match self {
            Feature::Keysend => "keysend",
            Feature::CustomRecords => "custom TLV records",
            Feature::PartLimit => "part limit",
            Feature::HoldInvoices => "hold invoices",
            Feature::CircularPayments => "circular payments",
            Feature::PaymentEngines => "payment engines",
            Feature::DbBackends => "database backends",
        }
    }
}

/// What [`NodeDriver::missing`] says of [`Feature::DbBackends`] for an implementation
/// whose database is chosen by `database:` alone.
pub(crate) const DB_BACKENDS_ARE_LNDS: &str = "db_backend: chooses LND's --db.backend; other implementations choose their store with database:";

/// What [`NodeDriver::missing`] says of [`Feature::PaymentEngines`] for an
/// implementation whose client pays invoices with one call.
pub(crate) const ONE_PAYMENT_CALL: &str =
    "its client pays invoices with one call (payment_engine: chooses Core Lightning's pay command)";

/// How the tool reaches the nodes a runtime started; the runtime that started them is
/// asked for it ([`crate::runtime::Runtime::node_connector`]).
#[async_trait]
pub trait Connector: Send + Sync {
    /// A client of the node at `endpoint`.
    async fn connect(&self, endpoint: &NodeEndpoint) -> Result<Arc<dyn LightningNode>, NodeError>;
}

/// The implementations' own clients: each node's driver connects to it.
pub struct Drivers;

#[async_trait]
impl Connector for Drivers {
    async fn connect(&self, endpoint: &NodeEndpoint) -> Result<Arc<dyn LightningNode>, NodeError> {
        super::driver(endpoint.implementation)
            .connect(endpoint)
            .await
    }
}

/// Where and how one node runs, in the terms of the place it runs in (a local directory
/// and loopback ports, or a container's paths and ports).
#[derive(Debug, Clone)]
pub struct NodeLaunch<'a> {
    /// Instance name, used as the alias.
    pub name: &'a str,
    /// The node's data directory.
    pub dir: &'a str,
    /// `host:port` the RPC server listens on.
    pub rpc_listen: &'a str,
    /// `host:port` the Lightning P2P server listens on.
    pub p2p_listen: &'a str,
    /// How the node reaches the chain backend.
    pub chain: &'a ChainAccess,
    /// The daemon's binary when the runtime starts one it found (local), for files that
    /// come beside it (CLN's gRPC plugin); None in a container, whose image has its own
    /// layout.
    pub binary: Option<&'a std::path::Path>,
}

/// The container ports of a node: the same in every container (each has its own address).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodePorts {
    pub rpc: u16,
    pub p2p: u16,
}

/// What a node needs of the chain backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainNeeds {
    /// The chain backends this implementation runs on.
    pub backends: &'static [ChainKind],
    /// True when the node keeps its on-chain funds in a wallet of the chain backend
    /// (Eclair: bitcoind's), named after the node, which the runtime creates before the
    /// node starts.
    pub wallet: bool,
}

/// Everything the tool knows about one Lightning implementation. One static value per
/// implementation; see `docs/ARCHITECTURE.md`, "Adding an implementation". The required
/// methods are what every implementation answers; what only some can do is a
/// capability, offered by returning `Some` from its method (its default is `None`), and
/// the caller that needs one says which implementation lacks it.
#[async_trait]
pub trait NodeDriver: Send + Sync {
    fn implementation(&self) -> Implementation;
    /// The daemon's binary, how to build it, its default version and its images.
    fn program(&self) -> Program;
    /// The ports the node listens on in a container.
    fn ports(&self) -> NodePorts;
    /// The chain backends it runs on, and whether it needs a wallet there.
    fn chain_needs(&self) -> ChainNeeds;
    /// The command line (before the scenario's own `args:`). Never a secret: those go
    /// in [`NodeDriver::config_files`].
    fn args(&self, launch: &NodeLaunch) -> Vec<String>;
    /// Files to write into the launch's `dir` before the start (the chain's RPC password).
    fn config_files(&self, launch: &NodeLaunch) -> Vec<crate::chain::ConfigFile>;
    /// The files the node writes that its client needs, relative to its data directory.
    /// A runtime waits until all exist (copying them out of a container first).
    fn credential_files(&self) -> &'static [&'static str];
    /// The credentials, given where each of [`NodeDriver::credential_files`] is readable
    /// by the tool.
    fn credentials(&self, at: &dyn Fn(&str) -> PathBuf) -> Credentials;
    /// Ok once the node's RPC server serves (its credentials exist): more than a port
    /// that accepts TCP, which a container engine's proxy does before the node listens.
    /// Otherwise why not yet, for the error when it never is.
    async fn ready(&self, endpoint: &NodeEndpoint) -> Result<(), String>;
    /// A client of the node, connected now so an unreachable node fails here.
    async fn connect(&self, endpoint: &NodeEndpoint) -> Result<Arc<dyn LightningNode>, NodeError>;
    /// True for the errors a node gives while it is still starting (worth retrying).
    fn is_starting_up(&self, err: &NodeError) -> bool;
    /// The database a node with this `database:` and these arguments keeps its state in,
    /// as the report names it (`postgres`, `sqlite`, `bbolt`, ...).
    fn database(&self, database: Database, args: &[String]) -> String;
    /// Words in flag names whose values are this implementation's credentials, kept
    /// out of reports (besides the generic ones: passwords, secrets, tokens).
    fn secret_words(&self) -> &'static [&'static str];
    /// How channels are opened with a node of this implementation.
    fn channel_rules(&self) -> ChannelRules;
    /// Why the tool cannot use `feature` on a node of this implementation, if it
    /// cannot: validation refuses a workload that asks for it (and setup probes routes
    /// with invoices where keysend is missing).
    fn missing(&self, feature: Feature) -> Option<&'static str>;

    /// A PostgreSQL backend, for `database: postgres` and arguments that ask for the
    /// run's server.
    fn postgres(&self) -> Option<&dyn Postgres> {
        None
    }
    /// An etcd backend, for arguments that ask for the run's etcd.
    fn etcd(&self) -> Option<&dyn Etcd> {
        None
    }
    /// Nodes the tool did not start (`runtime: external`).
    fn external(&self) -> Option<&dyn External> {
        None
    }
    /// The database migrations the node's log says it ran.
    fn migrations(&self) -> Option<&dyn Migrations> {
        None
    }
}

/// `("chain", "18443")` from `chain:18443`; the whole text and no port without a colon.
pub(crate) fn split_host_port(addr: &str) -> (&str, &str) {
    addr.rsplit_once(':').unwrap_or((addr, ""))
}

/// A secret of node `name` for `purpose` (an API password or key): HMAC-SHA256 of the
/// purpose and the name under the chain's RPC password (random per run, never shown),
/// so the same launch always gives the same file and no two nodes share one.
pub(crate) fn node_secret(
    chain: &crate::chain::ChainAccess,
    purpose: &str,
    name: &str,
) -> [u8; 32] {
    use bitcoin::hashes::{Hash, HashEngine, hmac, sha256};
    let mut engine = hmac::HmacEngine::<sha256::Hash>::new(chain.rpc_pass.as_bytes());
    engine.input(purpose.as_bytes());
    engine.input(b"\0");
    engine.input(name.as_bytes());
    hmac::Hmac::<sha256::Hash>::from_engine(engine).to_byte_array()
}

#[cfg(test)]
mod tests {
    use crate::node::{Implementation, driver};

    /// Which implementation offers which capability: a driver that answered "not
    /// supported" before the capabilities existed offers none.
    #[test]
    fn each_implementation_offers_the_capabilities_its_node_has() {
        let offered = |i: Implementation| {
            let d = driver(i);
            [
                d.postgres().is_some(),
                d.etcd().is_some(),
                d.external().is_some(),
                d.migrations().is_some(),
            ]
        };
        assert_eq!(offered(Implementation::Lnd), [true, true, true, true]);
        assert_eq!(offered(Implementation::Cln), [true, false, true, false]);
        assert_eq!(offered(Implementation::Eclair), [true, false, false, false]);
        assert_eq!(offered(Implementation::Ldk), [false, false, false, false]);
    }

    /// The HTLC limit is the last value of the implementation's flag in `args:`, else
    /// its default; LDK takes no flag for it.
    #[test]
    fn max_accepted_htlcs_reads_the_flag_or_gives_the_default() {
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let rules = |i| driver(i).channel_rules();
        let eclair = rules(Implementation::Eclair);
        assert_eq!(eclair.max_accepted_htlcs(&[]), 30);
        let set = args(&[
            "-Declair.channel.max-accepted-htlcs=12",
            "-Declair.channel.max-accepted-htlcs=20",
        ]);
        assert_eq!(eclair.max_accepted_htlcs(&set), 20, "the last one");
        let lnd = rules(Implementation::Lnd);
        assert_eq!(
            lnd.max_accepted_htlcs(&args(&["--default-remote-max-htlcs=7"])),
            7
        );
        let ldk = rules(Implementation::Ldk);
        assert_eq!(
            ldk.max_accepted_htlcs(&args(&["--max-concurrent-htlcs=7"])),
            50
        );
    }
}
