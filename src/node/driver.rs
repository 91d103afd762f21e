//! What an implementation owns, apart from talking to a running node: how it is started
//! (command line, ports, the chain backends it runs on), which files it writes that a
//! client needs, how to tell it is ready, how to connect a client, its database flags
//! and its default images. Runtimes, setup, restart and the report ask the driver of a
//! node's implementation ([`super::driver`]); none of them names an implementation.

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
}

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

/// A node's login to a PostgreSQL server over TCP with a password (the local runtime's
/// server, for a client that speaks TCP only).
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresLogin {
    pub host: String,
    pub port: u16,
    pub database: String,
    pub user: String,
    /// A secret of the run (registered for redaction).
    pub password: String,
}

/// Everything but the password, which a log line or a panic message must not carry.
impl std::fmt::Debug for PostgresLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresLogin")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("database", &self.database)
            .field("user", &self.user)
            .field("password", &crate::secrets::REDACTED)
            .finish()
    }
}

impl PostgresLogin {
    /// As a DSN with its password, for [`NodeDriver::postgres_config`] (the password
    /// is the run's own: letters and digits, nothing to escape).
    pub fn dsn(&self) -> String {
        let PostgresLogin {
            host,
            port,
            database,
            user,
            password,
        } = self;
        format!("postgres://{user}:{password}@{host}:{port}/{database}?sslmode=disable")
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

/// Images for the docker runtime, best first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeImages {
    /// Built locally by `scripts/build-images.sh`.
    pub local: String,
    /// Published by the implementation's project, pullable from a registry.
    pub official: Option<String>,
}

/// Everything the tool knows about one Lightning implementation. One static value per
/// implementation; see `docs/ARCHITECTURE.md`, "Adding an implementation".
#[async_trait]
pub trait NodeDriver: Send + Sync {
    fn implementation(&self) -> Implementation;
    /// The daemon's binary name, looked up in the build cache and on PATH.
    fn binary(&self) -> &'static str;
    /// The command that builds the binary, for "not found" messages.
    fn build_hint(&self) -> &'static str;
    /// The version a node runs when the scenario names none (the image tag).
    fn default_version(&self) -> &'static str;
    fn images(&self, version: Option<&str>) -> NodeImages;
    fn ports(&self) -> NodePorts;
    /// Chain backends this implementation runs on.
    fn chains(&self) -> &'static [ChainKind];
    /// True when `connect_peer` dials the peer at once. False where the client only
    /// notes the address for the channel's opening (ldk-server at its pin has no
    /// call that dials): such a node, restored from a snapshot, dials only the
    /// addresses it kept, which were the saving run's.
    fn dials_on_request(&self) -> bool {
        true
    }
    /// True when the node keeps its on-chain funds in a wallet of the chain backend
    /// (Eclair: bitcoind's), named after the node, which the runtime creates before the
    /// node starts.
    fn chain_wallet(&self) -> bool {
        false
    }
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
    /// The scenario fields with which an external node of this implementation
    /// (`runtime: external`) names its credential files: one per entry of
    /// [`NodeDriver::credential_files`], in that order, so [`NodeDriver::credentials`]
    /// builds its credentials. None while the tool drives no external node of it.
    fn external_credential_fields(&self) -> Option<&'static [&'static str]> {
        None
    }
    /// Ok once the node's RPC server serves (its credentials exist): more than a port
    /// that accepts TCP, which a container engine's proxy does before the node listens.
    /// Otherwise why not yet, for the error when it never is.
    async fn ready(&self, endpoint: &NodeEndpoint) -> Result<(), String>;
    /// A client of the node, connected now so an unreachable node fails here.
    async fn connect(&self, endpoint: &NodeEndpoint) -> Result<Arc<dyn LightningNode>, NodeError>;
    /// True for the errors a node gives while it is still starting (worth retrying).
    fn is_starting_up(&self, err: &NodeError) -> bool;
    /// True when the node's arguments ask for a PostgreSQL database the runtime provides.
    fn wants_postgres(&self, args: &[String]) -> bool;
    /// The argument that points the node at its PostgreSQL database.
    fn postgres_arg(&self, dsn: &str) -> String;
    /// The flags that choose a PostgreSQL backend (besides [`NodeDriver::postgres_arg`]),
    /// for `database: postgres`; `None` when the implementation has no such backend.
    fn postgres_flags(&self) -> Option<&'static [&'static str]> {
        Some(&[])
    }
    /// The database a node with this `database:` and these arguments keeps its state in,
    /// as the report names it (`postgres`, `sqlite`, `bbolt`, ...).
    fn database(&self, database: Database, _args: &[String]) -> String {
        match database {
            Database::Postgres => "postgres".into(),
            Database::Default => "sqlite".into(),
        }
    }
    /// The database migrations the node's log (`log`, its output from its start) says
    /// it ran; none where the implementation logs none this reads.
    fn migrations_in_log(&self, _log: &str) -> Vec<super::LoggedMigration> {
        Vec::new()
    }
    /// True when the node can reach PostgreSQL over a unix socket; false for clients
    /// that speak TCP only, for whom the local runtime's server also listens on
    /// loopback TCP (their login through [`NodeDriver::postgres_config`]).
    fn postgres_over_unix_socket(&self) -> bool {
        true
    }
    /// Files in its data dir where the node notes its database's address, and refuses
    /// to start on another (Eclair's `last_jdbcurl`): a snapshot leaves them out, as
    /// the run it is restored into gives the node the same data on another server.
    fn database_address_files(&self) -> &'static [&'static str] {
        &[]
    }
    /// The arguments that point the node at its PostgreSQL database: the one of
    /// [`NodeDriver::postgres_arg`], unless the implementation needs several (Eclair:
    /// host, port, database and user apart).
    fn postgres_args(&self, dsn: &str) -> Vec<String> {
        vec![self.postgres_arg(dsn)]
    }
    /// The config file lines that point the node at its PostgreSQL database `dsn`
    /// (which carries the run's password), merged into its config file of that path, so
    /// that the password is never on its command line. `None` for an implementation that
    /// takes its database on the command line only.
    fn postgres_config(&self, _dsn: &str) -> Option<crate::chain::ConfigFile> {
        None
    }
    /// True when the node's arguments ask for an etcd server the runtime provides.
    /// Implementations without an etcd backend keep the default.
    fn wants_etcd(&self, _args: &[String]) -> bool {
        false
    }
    /// The arguments that point the node at the etcd endpoints `hosts` (`host:port`,
    /// comma-separated), its keys under `namespace` (one per node).
    fn etcd_args(&self, _hosts: &str, _namespace: &str) -> Vec<String> {
        Vec::new()
    }
    /// The config file lines that give the node etcd's `user` and `password` (never its
    /// command line), merged into its config file of that path.
    fn etcd_config(&self, _user: &str, _password: &str) -> Option<crate::chain::ConfigFile> {
        None
    }
    /// Words in flag names whose values are this implementation's credentials, kept
    /// out of reports (besides the generic ones: passwords, secrets, tokens).
    fn secret_words(&self) -> &'static [&'static str];
    /// Channels above this many satoshis need `flag` on both ends, if the
    /// implementation caps channel size: `(largest without it, flag)`.
    fn large_channel_flag(&self) -> Option<(u64, &'static str)>;
    /// Why the tool cannot use `feature` on a node of this implementation, if it
    /// cannot: validation refuses a workload that asks for it (and setup probes routes
    /// with invoices where keysend is missing).
    fn missing(&self, feature: Feature) -> Option<&'static str>;
    /// Satoshis the node must hold on chain for each channel it accepts (setup funds
    /// the accepting node with them): LDK refuses an inbound anchor channel without
    /// that reserve.
    fn inbound_channel_reserve_sat(&self) -> u64 {
        0
    }
    /// How many channels from one peer the node accepts while their funding is
    /// unconfirmed, if it caps them (setup then opens the rest after a block).
    fn max_unconfirmed_inbound_channels(&self) -> Option<u32> {
        None
    }
    /// The most HTLCs the node accepts at once on a channel (`max_accepted_htlcs`),
    /// given its `args:` (an attack's `share:` is of the smallest in the scenario).
    fn max_accepted_htlcs(&self, _args: &[String]) -> u32 {
        483
    }
    /// True when the node loses an inbound open that arrives while another peer's is
    /// being checked (setup then lets one peer at a time open to it).
    fn one_inbound_open_at_a_time(&self) -> bool {
        false
    }
}

/// The image tag of a version: `26.06.6` and `v26.06.6` both give `v26.06.6`.
pub(crate) fn image_tag(version: &str) -> String {
    let v = version.trim();
    if v.starts_with(|c: char| c.is_ascii_digit()) {
        format!("v{v}")
    } else {
        v.to_string()
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

/// The number after `prefix` in the last of `args` that starts with it.
pub(crate) fn flag_value(args: &[String], prefix: &str) -> Option<u32> {
    (args.iter().rev())
        .find_map(|a| a.strip_prefix(prefix))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::PostgresLogin;

    #[test]
    fn a_postgres_login_shows_no_password_in_debug_and_keeps_it_in_its_dsn() {
        let login = PostgresLogin {
            host: "127.0.0.1".into(),
            port: 5432,
            database: "alice".into(),
            user: "alice".into(),
            password: "s3cretpassw0rd".into(),
        };
        let debug = format!("{login:?}");
        assert!(!debug.contains("s3cretpassw0rd"), "{debug}");
        assert!(
            debug.contains(crate::secrets::REDACTED) && debug.contains("5432"),
            "{debug}"
        );
        assert!(login.dsn().contains(":s3cretpassw0rd@127.0.0.1:5432/alice"));
    }
}
