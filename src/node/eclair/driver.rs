//! What the tool knows about Eclair besides its HTTP API: the JVM options it starts with
//! (Eclair takes its settings as `-Declair.<key>=<value>` system properties, above the
//! `eclair.conf` in its data directory), the bitcoind wallet and ZMQ publishers it
//! needs, the API password file, readiness and images.

use super::EclairNode;
use crate::chain::{ChainAccess, ChainKind, ConfigFile};
use crate::node::driver::{
    ChainNeeds, ChannelRules, DB_BACKENDS_ARE_LNDS, HtlcLimit, NodeDriver, NodeEndpoint,
    NodeLaunch, NodePorts, ONE_PAYMENT_CALL, Postgres, Program, node_secret, split_host_port,
};
use crate::node::{Credentials, Feature, Implementation, LightningNode, NodeError};
use async_trait::async_trait;
use std::path::PathBuf;
use std::sync::Arc;

/// The Eclair version used when a node names none.
pub const DEFAULT_VERSION: &str = "v0.13.0";
/// The API password, written by the runtime beside `eclair.conf` (which holds it too,
/// for Eclair), for the tool's client.
pub const API_PASSWORD_FILE: &str = "api-password";

pub struct Eclair;

/// The Eclair driver.
pub static ECLAIR: Eclair = Eclair;

/// Eclair's credentials: the file holding its API password (basic auth).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EclairCredentials {
    pub api_password: PathBuf,
}

impl EclairCredentials {
    pub fn files(&self) -> Vec<&std::path::Path> {
        vec![&self.api_password]
    }
}

/// The API password of node `name` ([`node_secret`], 16 bytes in hex).
pub(crate) fn api_password(chain: &ChainAccess, name: &str) -> String {
    let secret = node_secret(chain, "lnbench eclair api password", name);
    let password = bitcoin::hex::DisplayHex::to_lower_hex_string(&secret[..16]);
    crate::secrets::register_secret(&password);
    password
}

/// `(user, host, port, database)` of `postgres://user@host:port/database?options`.
fn dsn_parts(dsn: &str) -> Option<(&str, &str, &str, &str)> {
    let rest = dsn.strip_prefix("postgres://")?;
    let (user, rest) = rest.split_once('@')?;
    let (address, rest) = rest.split_once('/')?;
    let (host, port) = address.rsplit_once(':')?;
    let database = rest.split('?').next()?;
    Some((user, host, port, database))
}

/// A HOCON string: quoted, with `"` and `\` escaped.
fn hocon_string(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// `-Declair.<key>=<value>`.
fn prop(key: &str, value: impl std::fmt::Display) -> String {
    format!("-Declair.{key}={value}")
}

#[async_trait]
impl NodeDriver for Eclair {
    fn implementation(&self) -> Implementation {
        Implementation::Eclair
    }

    fn program(&self) -> Program {
        Program {
            // A script `scripts/build-nodes.sh` writes, which execs the JVM with Eclair's
            // classpath, its arguments being JVM options.
            binary: "eclair-node",
            build_hint: "build it from an Eclair source tree with `ECLAIR_SRC=<tree> scripts/build-nodes.sh` \
                         (a JDK >= 21 is needed; docs/implementations.md, \"Eclair\")",
            default_version: DEFAULT_VERSION,
            local_image: "lnbench/eclair",
            // ACINQ publishes `acinq/eclair` images, but they start Eclair from a script
            // with their own data directory; the tool's image takes JVM options as its
            // command.
            official_image: None,
            versions_variable: None,
            build_tags: None,
        }
    }

    fn ports(&self) -> NodePorts {
        NodePorts {
            // Eclair's default API port.
            rpc: 8080,
            p2p: 9735,
        }
    }

    fn chain_needs(&self) -> ChainNeeds {
        // Eclair keeps its on-chain funds in a bitcoind wallet and hears of blocks by ZMQ.
        ChainNeeds {
            backends: &[ChainKind::Bitcoind],
            wallet: true,
        }
    }

    fn args(&self, a: &NodeLaunch) -> Vec<String> {
        let (api_host, api_port) = split_host_port(a.rpc_listen);
        let (p2p_host, p2p_port) = split_host_port(a.p2p_listen);
        let (rpc_host, rpc_port) = split_host_port(&a.chain.rpc_addr);
        let mut args = vec![
            format!("-Declair.datadir={}", a.dir),
            // Logs to stdout too (the runtime's output.log), not only <datadir>/eclair.log.
            "-Declair.printToConsole=true".into(),
            prop("chain", "regtest"),
            prop("node-alias", a.name),
            prop("server.binding-ip", p2p_host),
            prop("server.port", p2p_port),
            prop("api.enabled", "true"),
            prop("api.binding-ip", api_host),
            prop("api.port", api_port),
            prop("bitcoind.host", rpc_host),
            prop("bitcoind.rpcport", rpc_port),
            prop("bitcoind.rpcuser", &a.chain.rpc_user),
            // The wallet the runtime created for this node (`ChainNeeds::wallet`).
            prop("bitcoind.wallet", a.name),
        ];
        if let Some(block) = &a.chain.zmq_block {
            args.push(prop("bitcoind.zmqblock", block));
        }
        if let Some(tx) = &a.chain.zmq_tx {
            args.push(prop("bitcoind.zmqtx", tx));
        }
        args.extend([
            // Off by default: benchmarks pay by keysend.
            prop("features.keysend", "optional"),
            // Setup mines 6 blocks after opening channels; Eclair asks 8 by default and
            // refuses fewer than 6.
            prop("channel.min-depth-blocks", 6),
            // After a restart, its UTXOs locked by an unfinished funding are released.
            prop("bitcoind.startup-locked-utxos-behavior", "unlock"),
            // Gossip is relayed every 60 s by default: a node two hops away could learn a
            // channel a minute after setup (the others gossip fast here too).
            prop("router.broadcast-interval", "2s"),
        ]);
        args
    }

    /// `eclair.conf` with the chain's RPC password and the API password (Eclair reads
    /// it from its data directory), and the API password alone for the tool's client.
    fn config_files(&self, a: &NodeLaunch) -> Vec<ConfigFile> {
        let api = api_password(a.chain, a.name);
        vec![
            ConfigFile {
                path: "eclair.conf",
                content: format!(
                    "eclair.bitcoind.rpcpassword = {}\neclair.api.password = {}\n",
                    hocon_string(&a.chain.rpc_pass),
                    hocon_string(&api)
                ),
            },
            ConfigFile {
                path: API_PASSWORD_FILE,
                content: api,
            },
        ]
    }

    fn credential_files(&self) -> &'static [&'static str] {
        &[API_PASSWORD_FILE]
    }

    fn credentials(&self, at: &dyn Fn(&str) -> PathBuf) -> Credentials {
        Credentials::Eclair(EclairCredentials {
            api_password: at(API_PASSWORD_FILE),
        })
    }

    /// The API answers `getinfo` with the password: the JVM has started and Eclair has
    /// finished its start-up (it serves the API last).
    async fn ready(&self, endpoint: &NodeEndpoint) -> Result<(), String> {
        let node = (EclairNode::connect(&endpoint.name, endpoint).await)
            .map_err(|e| crate::exit::error_chain(&e))?;
        node.get_info()
            .await
            .map(|_| ())
            .map_err(|e| crate::exit::error_chain(&e))
    }

    async fn connect(&self, endpoint: &NodeEndpoint) -> Result<Arc<dyn LightningNode>, NodeError> {
        let mut node = EclairNode::connect(&endpoint.name, endpoint).await?;
        // Reachable now, or an error now.
        node.get_info().await?;
        // Payments learn their end from the websocket: open it before any payment.
        node.open_events().await;
        Ok(Arc::new(node))
    }

    fn is_starting_up(&self, err: &NodeError) -> bool {
        super::is_starting_up(err)
    }

    fn database(&self, database: crate::node::Database, args: &[String]) -> String {
        let postgres = args.iter().any(|a| a == "-Declair.db.driver=postgres");
        if database == crate::node::Database::Postgres || postgres {
            "postgres".into()
        } else {
            "sqlite".into()
        }
    }

    fn secret_words(&self) -> &'static [&'static str] {
        &[]
    }

    fn missing(&self, feature: Feature) -> Option<&'static str> {
        match feature {
            Feature::Keysend => None,
            Feature::CustomRecords => {
                Some("Eclair's keysend call (sendtonode) has no parameter for custom TLV records")
            }
            Feature::PartLimit => Some(
                "Eclair's payinvoice takes no part limit; its node-wide one is \
                 -Declair.router.path-finding.default.mpp.max-parts in the node's args:",
            ),
            Feature::HoldInvoices => Some(
                "Eclair's API has no hold invoices: it settles every invoice it can as soon as the HTLC arrives",
            ),
            Feature::CircularPayments => Some(
                "this tool pays from Eclair through payinvoice, which chooses its own route; a circular payment would need a route built by hand for sendtoroute, which the tool's client does not build",
            ),
            Feature::PaymentEngines => Some(ONE_PAYMENT_CALL),
            Feature::DbBackends => Some(DB_BACKENDS_ARE_LNDS),
        }
    }

    fn channel_rules(&self) -> ChannelRules {
        ChannelRules {
            // `option_support_large_channel` is optional by default.
            large_channel_flag: None,
            inbound_channel_reserve_sat: 0,
            max_unconfirmed_inbound_channels: None,
            // `eclair.channel.max-accepted-htlcs`, 30 by default (reference.conf).
            htlc_limit: HtlcLimit {
                default: 30,
                flag: Some("-Declair.channel.max-accepted-htlcs="),
                min: None,
            },
            // Eclair 0.13's `PendingChannelsRateLimiter` asks its router about each
            // opener through one message adapter, which a second request replaces: two
            // inbound opens from two peers in the same few milliseconds both answer the
            // second opener's check, and the first opener waits for an `accept_channel`
            // that never comes (its log: "waitForRequest: received unhandled message
            // PendingChannelsRateLimiterResponse(AcceptOpenChannel)").
            one_inbound_open_at_a_time: true,
            dials_on_request: true,
        }
    }

    fn postgres(&self) -> Option<&dyn Postgres> {
        Some(self)
    }
}

impl Postgres for Eclair {
    /// `-Declair.db.driver=postgres` in the node's `args:` asks for the run's
    /// PostgreSQL server (without `eclair.db.postgres.host` of its own).
    fn wanted_by(&self, args: &[String]) -> bool {
        args.iter().any(|a| a == "-Declair.db.driver=postgres")
            && !args
                .iter()
                .any(|a| a.starts_with("-Declair.db.postgres.host="))
    }

    /// Eclair takes no DSN: the server's host, port, database and user apart (the
    /// password, if the DSN has one, only in [`Postgres::config`]).
    fn arg_for(&self, dsn: &str) -> String {
        self.args_for(dsn).join(" ")
    }

    fn flags(&self) -> &'static [&'static str] {
        &["-Declair.db.driver=postgres"]
    }

    /// Eclair's JDBC driver speaks TCP only.
    fn over_unix_socket(&self) -> bool {
        false
    }

    /// Eclair notes the JDBC URL of its last start beside its chain's data.
    fn address_files(&self) -> &'static [&'static str] {
        &["regtest/last_jdbcurl"]
    }

    fn args_for(&self, dsn: &str) -> Vec<String> {
        let Some((user, host, port, database)) = dsn_parts(dsn) else {
            return Vec::new();
        };
        vec![
            prop("db.postgres.host", host),
            prop("db.postgres.port", port),
            prop("db.postgres.database", database),
            // Never a password on the command line.
            prop(
                "db.postgres.username",
                user.split(':').next().unwrap_or(user),
            ),
        ]
    }

    /// The server, database, user and password in eclair.conf (HOCON), none of them on
    /// the command line.
    fn config(&self, dsn: &str) -> Option<ConfigFile> {
        let (login, host, port, database) = dsn_parts(dsn)?;
        let (user, password) = login.split_once(':').unwrap_or((login, ""));
        let key = |k: &str, v: &str| format!("eclair.db.postgres.{k} = {}\n", hocon_string(v));
        let mut content = [
            ("host", host),
            ("port", port),
            ("database", database),
            ("username", user),
        ]
        .map(|(k, v)| key(k, v))
        .concat();
        if !password.is_empty() {
            content.push_str(&key("password", password));
        }
        Some(ConfigFile {
            path: "eclair.conf",
            content,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bitcoind(rpc_addr: &str, zmq_host: &str) -> ChainAccess {
        ChainAccess {
            kind: ChainKind::Bitcoind,
            rpc_addr: rpc_addr.into(),
            rpc_user: "u".into(),
            rpc_pass: "p\"w".into(),
            rpc_cert: None,
            zmq_block: Some(format!("tcp://{zmq_host}:28332")),
            zmq_tx: Some(format!("tcp://{zmq_host}:28333")),
            cli: None,
        }
    }

    fn launch<'a>(chain: &'a ChainAccess, rpc: &'a str, p2p: &'a str) -> NodeLaunch<'a> {
        NodeLaunch {
            name: "carol",
            dir: "/run/carol",
            rpc_listen: rpc,
            p2p_listen: p2p,
            chain,
            binary: None,
        }
    }

    fn has_all(args: &[String], wanted: &[&str]) {
        for w in wanted {
            assert!(args.iter().any(|a| a == w), "missing {w}: {args:?}");
        }
    }

    #[test]
    fn args_are_jvm_options_naming_the_api_p2p_chain_wallet_and_zmq() {
        let chain = bitcoind("127.0.0.1:18443", "127.0.0.1");
        let args = ECLAIR.args(&launch(&chain, "127.0.0.1:40001", "127.0.0.1:40002"));
        has_all(
            &args,
            &[
                "-Declair.datadir=/run/carol",
                "-Declair.chain=regtest",
                "-Declair.node-alias=carol",
                "-Declair.server.binding-ip=127.0.0.1",
                "-Declair.server.port=40002",
                "-Declair.api.enabled=true",
                "-Declair.api.binding-ip=127.0.0.1",
                "-Declair.api.port=40001",
                "-Declair.bitcoind.host=127.0.0.1",
                "-Declair.bitcoind.rpcport=18443",
                "-Declair.bitcoind.rpcuser=u",
                "-Declair.bitcoind.wallet=carol",
                "-Declair.bitcoind.zmqblock=tcp://127.0.0.1:28332",
                "-Declair.bitcoind.zmqtx=tcp://127.0.0.1:28333",
                "-Declair.features.keysend=optional",
                "-Declair.router.broadcast-interval=2s",
            ],
        );
        assert!(args.iter().all(|a| a.starts_with("-D")), "{args:?}");
        let secret = api_password(&chain, "carol");
        for a in &args {
            assert!(!a.contains("password"), "{a}");
            assert!(!a.contains(&secret), "{a}");
        }
    }

    #[test]
    fn in_a_container_eclair_listens_on_every_address_and_names_the_chain() {
        let chain = bitcoind("chain:18443", "chain");
        let p = ECLAIR.ports();
        let (rpc, p2p) = (format!("0.0.0.0:{}", p.rpc), format!("0.0.0.0:{}", p.p2p));
        let args = ECLAIR.args(&launch(&chain, &rpc, &p2p));
        has_all(
            &args,
            &[
                "-Declair.api.binding-ip=0.0.0.0",
                "-Declair.api.port=8080",
                "-Declair.server.port=9735",
                "-Declair.bitcoind.host=chain",
                "-Declair.bitcoind.zmqblock=tcp://chain:28332",
            ],
        );
    }

    #[test]
    fn the_api_password_is_a_secret_of_the_run() {
        let chain = bitcoind("127.0.0.1:1", "127.0.0.1");
        let api = api_password(&chain, "erin");
        let line = format!("GET /getinfo (password {api})");
        assert_eq!(
            crate::redact::redact_text(&line),
            format!("GET /getinfo (password {})", crate::redact::REDACTED)
        );
    }

    #[test]
    fn the_passwords_go_in_files_the_api_one_per_node() {
        let chain = bitcoind("127.0.0.1:1", "127.0.0.1");
        let files = ECLAIR.config_files(&launch(&chain, "127.0.0.1:2", "127.0.0.1:3"));
        let api = api_password(&chain, "carol");
        assert_eq!(api.len(), 32);
        assert_ne!(api, api_password(&chain, "dave"), "one per node");
        let conf = &files
            .iter()
            .find(|f| f.path == "eclair.conf")
            .unwrap()
            .content;
        assert!(
            conf.contains("eclair.bitcoind.rpcpassword = \"p\\\"w\""),
            "quoted: {conf}"
        );
        assert!(conf.contains(&format!("eclair.api.password = \"{api}\"")));
        let file = files.iter().find(|f| f.path == API_PASSWORD_FILE).unwrap();
        assert_eq!(file.content, api);
        assert_eq!(ECLAIR.credential_files(), [API_PASSWORD_FILE]);
    }

    #[test]
    fn runs_on_bitcoind_with_a_wallet_of_its_own() {
        assert_eq!(ECLAIR.chain_needs().backends, [ChainKind::Bitcoind]);
        assert!(ECLAIR.chain_needs().wallet);
        assert_eq!(ECLAIR.channel_rules().large_channel_flag, None);
    }

    #[test]
    fn postgres_is_asked_for_by_the_db_driver_and_given_apart() {
        let postgres = ECLAIR.postgres().unwrap();
        let asked = ["-Declair.db.driver=postgres".to_string()];
        assert!(postgres.wanted_by(&asked));
        assert!(!postgres.wanted_by(&[]));
        let own = [
            asked[0].clone(),
            "-Declair.db.postgres.host=db.example".to_string(),
        ];
        assert!(!postgres.wanted_by(&own), "a server of its own");
        assert_eq!(
            postgres.args_for("postgres://lnbench@postgres:5432/bob?sslmode=disable"),
            [
                "-Declair.db.postgres.host=postgres",
                "-Declair.db.postgres.port=5432",
                "-Declair.db.postgres.database=bob",
                "-Declair.db.postgres.username=lnbench",
            ]
        );
        // A DSN with a password: the password stays off the command line.
        let with_password = "postgres://lnbench:s3cret@postgres:5432/bob?sslmode=disable";
        let args = postgres.args_for(with_password);
        assert!(!args.concat().contains("s3cret"), "{args:?}");
    }

    #[test]
    fn a_tcp_login_goes_in_eclair_conf_whole() {
        let login = crate::node::driver::PostgresLogin {
            host: "127.0.0.1".into(),
            port: 40123,
            database: "carol".into(),
            user: "carol".into(),
            password: "0123456789abcdef0123456789abcdef".into(),
        };
        let file = ECLAIR.postgres().unwrap().config(&login.dsn()).unwrap();
        assert_eq!(file.path, "eclair.conf");
        assert_eq!(
            file.content,
            "eclair.db.postgres.host = \"127.0.0.1\"\n\
             eclair.db.postgres.port = \"40123\"\n\
             eclair.db.postgres.database = \"carol\"\n\
             eclair.db.postgres.username = \"carol\"\n\
             eclair.db.postgres.password = \"0123456789abcdef0123456789abcdef\"\n"
        );
    }

    #[test]
    fn images_take_the_version_as_a_tag() {
        assert_eq!(
            ECLAIR.program().images(Some("0.13.0")).local,
            "lnbench/eclair:v0.13.0"
        );
        assert_eq!(
            ECLAIR.program().images(None).local,
            "lnbench/eclair:v0.13.0"
        );
    }
}
