//! What the tool knows about LND besides its gRPC API: the command line (on btcd or
//! Bitcoin Core), ports, credential files, readiness, database flags and images.

use super::LndNode;
use crate::chain::{ChainAccess, ChainKind, ConfigFile};
use crate::node::driver::{
    BuildTags, ChainNeeds, ChannelRules, Etcd, External, HtlcLimit, Migrations, NodeDriver,
    NodeEndpoint, NodeLaunch, NodePorts, Postgres, Program,
};
use crate::node::{Credentials, Feature, Implementation, LightningNode, NodeError};
use async_trait::async_trait;
use std::path::PathBuf;
use std::sync::Arc;

/// The LND version used when a node names none.
pub const DEFAULT_VERSION: &str = "v0.21.1-beta";
/// Selects PostgreSQL as LND's database.
const POSTGRES_BACKEND: &str = "--db.backend=postgres";
/// Points LND at its PostgreSQL database.
const POSTGRES_DSN: &str = "--db.postgres.dsn";
/// Selects etcd as LND's database (built with the `kvdb_etcd` tag).
const ETCD_BACKEND: &str = "--db.backend=etcd";
/// An etcd of the scenario's own (or LND's embedded test instance): nothing to start.
const ETCD_HOST: &str = "--db.etcd.host";
const ETCD_EMBEDDED: &str = "--db.etcd.embedded";
/// LND refuses channels above 2^24 - 1 sat unless both peers enable wumbo channels.
const WUMBO_FLAG: &str = "--protocol.wumbo-channels";
const MAX_NON_WUMBO_SAT: u64 = (1 << 24) - 1;
/// The gRPC listener's certificate and the admin macaroon, under `--lnddir`.
const TLS_CERT: &str = "tls.cert";
const MACAROON: &str = "data/chain/bitcoin/regtest/admin.macaroon";

pub struct Lnd;

/// LND's credentials: the gRPC listener's certificate (pinned) and the admin macaroon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LndCredentials {
    pub tls_cert: PathBuf,
    pub macaroon: PathBuf,
}

impl LndCredentials {
    pub fn files(&self) -> Vec<&std::path::Path> {
        vec![&self.tls_cert, &self.macaroon]
    }
}

/// The LND driver.
pub static LND: Lnd = Lnd;

/// LND's flags for its chain backend.
fn chain_args(chain: &ChainAccess) -> Vec<String> {
    match chain.kind {
        ChainKind::Btcd => vec![
            "--bitcoin.node=btcd".into(),
            format!("--btcd.rpchost={}", chain.rpc_addr),
            format!("--btcd.rpcuser={}", chain.rpc_user),
            format!("--btcd.rpccert={}", chain.rpc_cert.as_deref().unwrap_or("")),
        ],
        ChainKind::Bitcoind => vec![
            "--bitcoin.node=bitcoind".into(),
            format!("--bitcoind.rpchost={}", chain.rpc_addr),
            format!("--bitcoind.rpcuser={}", chain.rpc_user),
            format!(
                "--bitcoind.zmqpubrawblock={}",
                chain.zmq_block.as_deref().unwrap_or("")
            ),
            format!(
                "--bitcoind.zmqpubrawtx={}",
                chain.zmq_tx.as_deref().unwrap_or("")
            ),
        ],
    }
}

#[async_trait]
impl NodeDriver for Lnd {
    fn implementation(&self) -> Implementation {
        Implementation::Lnd
    }

    fn program(&self) -> Program {
        Program {
            binary: "lnd",
            build_hint: "run `scripts/build-nodes.sh` to build it",
            default_version: DEFAULT_VERSION,
            local_image: "lnbench/lnd",
            official_image: Some("lightninglabs/lnd"),
            versions_variable: Some("LND_VERSIONS"),
            // The quick start's lnd (`scripts/setup.sh` without `--dev`) leaves out
            // the PostgreSQL and etcd backends (lnd itself would exit with "postgres
            // backend not available").
            build_tags: Some(BuildTags {
                stamp: ".lnd.tags",
                backends: &[("postgres", "kvdb_postgres"), ("etcd", "kvdb_etcd")],
                build_all: "run scripts/build-nodes.sh (or scripts/setup.sh --dev), which builds lnd with both",
            }),
        }
    }

    fn ports(&self) -> NodePorts {
        NodePorts {
            rpc: 10009,
            p2p: 9735,
        }
    }

    fn chain_needs(&self) -> ChainNeeds {
        ChainNeeds {
            backends: &[ChainKind::Btcd, ChainKind::Bitcoind],
            wallet: false,
        }
    }

    fn args(&self, a: &NodeLaunch) -> Vec<String> {
        let mut args = vec![
            format!("--lnddir={}", a.dir),
            "--bitcoin.active".into(),
            "--bitcoin.regtest".into(),
        ];
        args.extend(chain_args(a.chain));
        args.extend([
            format!("--rpclisten={}", a.rpc_listen),
            "--norest".into(),
            format!("--listen={}", a.p2p_listen),
            "--noseedbackup".into(),
            "--nobootstrap".into(),
            "--accept-keysend".into(),
            "--maxpendingchannels=100".into(),
            // Channels above 16.7 M sat need wumbo.
            WUMBO_FLAG.into(),
            // Gossip fast, so new channels are known (and routable) soon on regtest.
            "--trickledelay=50".into(),
            format!("--alias={}", a.name),
            "--debuglevel=info".into(),
        ]);
        args
    }

    /// LND reads `<lnddir>/lnd.conf` at start: the chain's RPC password goes there.
    fn config_files(&self, a: &NodeLaunch) -> Vec<ConfigFile> {
        let (section, key) = match a.chain.kind {
            ChainKind::Btcd => ("Btcd", "btcd.rpcpass"),
            ChainKind::Bitcoind => ("Bitcoind", "bitcoind.rpcpass"),
        };
        vec![ConfigFile {
            path: "lnd.conf",
            content: format!("[{section}]\n{key}={}\n", a.chain.rpc_pass),
        }]
    }

    fn credential_files(&self) -> &'static [&'static str] {
        &[TLS_CERT, MACAROON]
    }

    fn credentials(&self, at: &dyn Fn(&str) -> PathBuf) -> Credentials {
        Credentials::Lnd(LndCredentials {
            tls_cert: at(TLS_CERT),
            macaroon: at(MACAROON),
        })
    }

    async fn ready(&self, endpoint: &NodeEndpoint) -> Result<(), String> {
        let Credentials::Lnd(LndCredentials { tls_cert, .. }) = &endpoint.credentials else {
            return Err(format!("not LND credentials: {:?}", endpoint.credentials));
        };
        let pem = crate::files::read_bytes(tls_cert, crate::files::SMALL_MAX_BYTES)
            .map_err(|e| format!("reading its TLS certificate {}: {e}", tls_cert.display()))?;
        crate::tls::handshake_ok(&endpoint.rpc_addr, &pem).await
    }

    async fn connect(&self, endpoint: &NodeEndpoint) -> Result<Arc<dyn LightningNode>, NodeError> {
        Ok(Arc::new(LndNode::connect(&endpoint.name, endpoint).await?))
    }

    fn is_starting_up(&self, err: &NodeError) -> bool {
        super::is_starting_up(err)
    }

    fn database(&self, database: crate::node::Database, args: &[String]) -> String {
        let chosen = args
            .iter()
            .rev()
            .find_map(|a| a.strip_prefix("--db.backend="));
        let backend: String = match (database, chosen) {
            (crate::node::Database::Postgres, _) => "postgres".into(),
            (_, Some(backend)) => backend.into(),
            (_, None) => "bbolt".into(),
        };
        // LND's native SQL schema (`--db.use-native-sql`) applies on SQL backends only.
        let native = args.iter().any(|a| NATIVE_SQL.contains(&a.as_str()));
        if native && (backend == "sqlite" || backend == "postgres") {
            format!("{backend}-native")
        } else {
            backend
        }
    }

    fn secret_words(&self) -> &'static [&'static str] {
        &["macaroon"]
    }

    fn channel_rules(&self) -> ChannelRules {
        ChannelRules {
            large_channel_flag: Some((MAX_NON_WUMBO_SAT, WUMBO_FLAG)),
            inbound_channel_reserve_sat: 0,
            max_unconfirmed_inbound_channels: None,
            // `--default-remote-max-htlcs`, 483 by default.
            htlc_limit: HtlcLimit {
                default: 483,
                flag: Some("--default-remote-max-htlcs="),
                // LND refuses a channel whose `max_accepted_htlcs` is below 5.
                min: Some(5),
            },
            one_inbound_open_at_a_time: false,
            dials_on_request: true,
        }
    }

    /// LND's client does all of them (`SendPaymentV2` takes `dest_custom_records` and
    /// `max_parts`; hold invoices and routes built by hand are in its RPC).
    fn missing(&self, feature: Feature) -> Option<&'static str> {
        match feature {
            Feature::PaymentEngines => Some(
                "LND pays through SendPaymentV2 only (payment_engine: chooses Core Lightning's pay command)",
            ),
            _ => None,
        }
    }

    fn postgres(&self) -> Option<&dyn Postgres> {
        Some(self)
    }

    fn etcd(&self) -> Option<&dyn Etcd> {
        Some(self)
    }

    fn external(&self) -> Option<&dyn External> {
        Some(self)
    }

    fn migrations(&self) -> Option<&dyn Migrations> {
        Some(self)
    }
}

impl Postgres for Lnd {
    fn wanted_by(&self, args: &[String]) -> bool {
        args.iter().any(|a| a == POSTGRES_BACKEND)
            && !args.iter().any(|a| a.starts_with(POSTGRES_DSN))
    }

    fn flags(&self) -> &'static [&'static str] {
        &[POSTGRES_BACKEND]
    }

    fn arg_for(&self, dsn: &str) -> String {
        format!("{POSTGRES_DSN}={dsn}")
    }

    fn config(&self, dsn: &str) -> Option<ConfigFile> {
        Some(ConfigFile {
            path: "lnd.conf",
            content: format!("[postgres]\ndb.postgres.dsn={dsn}\n"),
        })
    }
}

impl Etcd for Lnd {
    fn wanted_by(&self, args: &[String]) -> bool {
        args.iter().any(|a| a == ETCD_BACKEND)
            && !args
                .iter()
                .any(|a| a.starts_with(ETCD_HOST) || a.starts_with(ETCD_EMBEDDED))
    }

    /// Plain gRPC: the server listens on loopback or the run's private network only.
    fn args_for(&self, hosts: &str, namespace: &str) -> Vec<String> {
        vec![
            format!("{ETCD_HOST}={hosts}"),
            format!("--db.etcd.namespace={namespace}"),
            "--db.etcd.disabletls".into(),
        ]
    }

    /// In `lnd.conf`, the `[etcd]` group's options.
    fn config(&self, user: &str, password: &str) -> ConfigFile {
        ConfigFile {
            path: "lnd.conf",
            content: format!("[etcd]\ndb.etcd.user={user}\ndb.etcd.pass={password}\n"),
        }
    }
}

impl External for Lnd {
    fn credential_fields(&self) -> &'static [&'static str] {
        &["tls_cert", "macaroon"]
    }
}

impl Migrations for Lnd {
    fn in_log(&self, log: &str) -> Vec<crate::node::LoggedMigration> {
        super::migrations::in_log(log)
    }

    fn schema_args(&self) -> &'static [&'static str] {
        NATIVE_SQL
    }
}

/// LND's flag for its native SQL schema, in each form it takes: on a SQLite or
/// PostgreSQL database kept in key-value form, LND migrates invoices, payments and the
/// graph to it at its start.
const NATIVE_SQL: &[&str] = &["--db.use-native-sql", "--db.use-native-sql=true"];

#[cfg(test)]
mod tests {
    use super::*;

    fn has_all(args: &[String], wanted: &[&str]) {
        for w in wanted {
            assert!(args.iter().any(|a| a == w), "missing {w}: {args:?}");
        }
    }

    fn args_on(chain: ChainAccess) -> Vec<String> {
        LND.args(&NodeLaunch {
            name: "alice",
            dir: "/run/alice",
            rpc_listen: "127.0.0.1:10009",
            p2p_listen: "127.0.0.1:9735",
            chain: &chain,
            binary: None,
        })
    }

    #[test]
    fn on_btcd_args_point_at_the_chain_and_enable_what_benchmarks_need() {
        let args = args_on(ChainAccess {
            kind: ChainKind::Btcd,
            rpc_addr: "127.0.0.1:1000".into(),
            rpc_user: "u".into(),
            rpc_pass: "p".into(),
            rpc_cert: Some("/run/chain/rpc.cert".into()),
            zmq_block: None,
            zmq_tx: None,
            cli: None,
        });
        has_all(
            &args,
            &[
                "--lnddir=/run/alice",
                "--bitcoin.regtest",
                "--bitcoin.node=btcd",
                "--btcd.rpchost=127.0.0.1:1000",
                "--btcd.rpccert=/run/chain/rpc.cert",
                "--rpclisten=127.0.0.1:10009",
                "--listen=127.0.0.1:9735",
                "--accept-keysend",
                "--maxpendingchannels=100",
                "--noseedbackup",
                "--alias=alice",
            ],
        );
        assert!(!args.iter().any(|a| a.contains("bitcoind")), "{args:?}");
        assert!(!args.iter().any(|a| a.contains("rpcpass")), "{args:?}");
    }

    #[test]
    fn on_bitcoind_args_name_its_rpc_and_zmq() {
        let args = args_on(ChainAccess {
            kind: ChainKind::Bitcoind,
            rpc_addr: "chain:18443".into(),
            rpc_user: "u".into(),
            rpc_pass: "p".into(),
            rpc_cert: None,
            zmq_block: Some("tcp://chain:28332".into()),
            zmq_tx: Some("tcp://chain:28333".into()),
            cli: None,
        });
        has_all(
            &args,
            &[
                "--bitcoin.node=bitcoind",
                "--bitcoind.rpchost=chain:18443",
                "--bitcoind.rpcuser=u",
                "--bitcoind.zmqpubrawblock=tcp://chain:28332",
                "--bitcoind.zmqpubrawtx=tcp://chain:28333",
            ],
        );
        assert!(!args.iter().any(|a| a.starts_with("--btcd")), "{args:?}");
    }

    #[test]
    fn the_chain_password_goes_in_lnd_conf() {
        let chain = ChainAccess {
            kind: ChainKind::Bitcoind,
            rpc_addr: "chain:18443".into(),
            rpc_user: "u".into(),
            rpc_pass: "s3cr3t".into(),
            rpc_cert: None,
            zmq_block: None,
            zmq_tx: None,
            cli: None,
        };
        let launch = NodeLaunch {
            name: "alice",
            dir: "/data",
            rpc_listen: "0.0.0.0:10009",
            p2p_listen: "0.0.0.0:9735",
            chain: &chain,
            binary: None,
        };
        assert!(!LND.args(&launch).iter().any(|a| a.contains("s3cr3t")));
        let files = LND.config_files(&launch);
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].path, "lnd.conf");
        assert_eq!(files[0].content, "[Bitcoind]\nbitcoind.rpcpass=s3cr3t\n");
    }

    #[test]
    fn postgres_is_wanted_only_without_a_dsn_of_its_own() {
        let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let postgres = LND.postgres().unwrap();
        assert!(postgres.wanted_by(&a(&["--db.backend=postgres"])));
        assert!(!postgres.wanted_by(&a(&[
            "--db.backend=postgres",
            "--db.postgres.dsn=postgres://x"
        ])));
        assert!(!postgres.wanted_by(&a(&["--db.backend=sqlite"])));
        assert_eq!(
            postgres.arg_for("postgres://h/db"),
            "--db.postgres.dsn=postgres://h/db"
        );
    }

    #[test]
    fn etcd_is_wanted_only_without_a_server_of_its_own() {
        let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let etcd = LND.etcd().unwrap();
        assert!(etcd.wanted_by(&a(&["--db.backend=etcd"])));
        assert!(!etcd.wanted_by(&a(&["--db.backend=etcd", "--db.etcd.host=h:2379"])));
        assert!(!etcd.wanted_by(&a(&["--db.backend=etcd", "--db.etcd.embedded"])));
        assert!(!etcd.wanted_by(&a(&["--db.backend=postgres"])));
        assert_eq!(
            etcd.args_for("127.0.0.1:1,127.0.0.1:2", "alice"),
            a(&[
                "--db.etcd.host=127.0.0.1:1,127.0.0.1:2",
                "--db.etcd.namespace=alice",
                "--db.etcd.disabletls"
            ])
        );
    }

    /// etcd's password goes into `lnd.conf`, under the `[etcd]` group, not on the
    /// command line.
    #[test]
    fn the_etcd_password_is_in_lnd_conf_not_in_the_args() {
        let etcd = LND.etcd().unwrap();
        let file = etcd.config("root", "s3cret");
        assert_eq!(file.path, "lnd.conf");
        assert_eq!(
            file.content,
            "[etcd]\ndb.etcd.user=root\ndb.etcd.pass=s3cret\n"
        );
        let args = etcd.args_for("127.0.0.1:1", "alice");
        assert!(!args.iter().any(|a| a.contains("s3cret")), "{args:?}");
    }

    #[test]
    fn macaroons_given_in_args_stay_out_of_reports() {
        use crate::report::redact::{REDACTED, redact_scenario_text};
        for flag in ["--macaroon", "--admin-macaroon-hex"] {
            let text = format!("args: [\"{flag}=0201036c6e64\"]\n");
            let redacted = redact_scenario_text(&text);
            assert_eq!(redacted, format!("args: [\"{flag}={REDACTED}\"]\n"));
        }
        let flag_only = "args: [\"--no-macaroons\", \"--debuglevel=info\"]\n";
        assert_eq!(redact_scenario_text(flag_only), flag_only);
    }

    #[test]
    fn images_take_the_version_as_a_tag() {
        assert_eq!(
            LND.program().images(Some("0.20.0-beta")).local,
            "lnbench/lnd:v0.20.0-beta"
        );
        assert_eq!(
            LND.program().images(None).official.as_deref(),
            Some("lightninglabs/lnd:v0.21.1-beta")
        );
    }
}
