//! What the tool knows about Core Lightning besides its gRPC API: the command line (on
//! Bitcoin Core only: CLN reads the chain through `bitcoin-cli`), ports, the gRPC
//! plugin's credential files, readiness and images.

use super::{ClnNode, SERVER_NAME};
use crate::chain::{ChainAccess, ChainKind};
use crate::node::driver::{
    ChainNeeds, ChannelRules, DB_BACKENDS_ARE_LNDS, External, HtlcLimit, NodeDriver, NodeEndpoint,
    NodeLaunch, NodePorts, Postgres, Program, split_host_port,
};
use crate::node::{Credentials, Feature, Implementation, LightningNode, NodeError};
use async_trait::async_trait;
use std::path::PathBuf;
use std::sync::Arc;

/// The CLN version used when a node names none.
pub const DEFAULT_VERSION: &str = "v26.06.6";
/// The gRPC plugin's CA, and the client certificate and key it signed, under
/// `--lightning-dir` (the plugin writes into the network's directory).
const CA_CERT: &str = "regtest/ca.pem";
const CLIENT_CERT: &str = "regtest/client.pem";
const CLIENT_KEY: &str = "regtest/client-key.pem";
/// The gRPC plugin's binary.
const GRPC_PLUGIN: &str = "cln-grpc";

pub struct Cln;

/// CLN's credentials: the CA that signed the gRPC server's certificate, and the
/// client certificate and key the server requires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClnCredentials {
    pub ca_cert: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
}

impl ClnCredentials {
    pub fn files(&self) -> Vec<&std::path::Path> {
        vec![&self.ca_cert, &self.client_cert, &self.client_key]
    }
}

/// The Core Lightning driver.
pub static CLN: Cln = Cln;

/// Where the gRPC plugin is: beside `lightningd` when it is there (the build cache
/// builds CLN without its Rust part and the plugin apart, so it is no built-in plugin);
/// else none to name (an installed build with Rust loads its own). In a container:
/// `/bin/cln-grpc`, where the tool's image (`scripts/build-images.sh`) has it.
fn grpc_plugin(lightningd: Option<&std::path::Path>) -> Option<PathBuf> {
    let Some(lightningd) = lightningd else {
        return Some(PathBuf::from("/bin").join(GRPC_PLUGIN));
    };
    let plugin = lightningd.with_file_name(GRPC_PLUGIN);
    plugin.is_file().then_some(plugin)
}

/// CLN's flags for Bitcoin Core: its RPC, and the `bitcoin-cli` its bcli plugin runs.
fn chain_args(dir: &str, chain: &ChainAccess) -> Vec<String> {
    let (host, port) = split_host_port(&chain.rpc_addr);
    let mut args = vec![
        format!("--bitcoin-rpcconnect={host}"),
        format!("--bitcoin-rpcport={port}"),
        format!("--bitcoin-rpcuser={}", chain.rpc_user),
        // No --bitcoin-rpcpassword: bcli would pass it to every bitcoin-cli on its
        // command line. bitcoin-cli reads it from bitcoin.conf in this data dir instead
        // (written 0600 by the runtime: `config_files`).
        format!("--bitcoin-datadir={dir}"),
    ];
    if let Some(cli) = &chain.cli {
        args.push(format!("--bitcoin-cli={cli}"));
    }
    args
}

#[async_trait]
impl NodeDriver for Cln {
    fn implementation(&self) -> Implementation {
        Implementation::Cln
    }

    fn program(&self) -> Program {
        Program {
            binary: "lightningd",
            build_hint: "build it from a Core Lightning source tree with `CLN_SRC=<tree> scripts/build-nodes.sh` \
                         (docs/implementations.md, \"Core Lightning\")",
            default_version: DEFAULT_VERSION,
            local_image: "lnbench/cln",
            // No official image: `elementsproject/lightningd` builds the gRPC plugin in
            // (the tool's image has it at `/bin/cln-grpc`, which the command line names)
            // and starts lightningd from a script watching its own data directory.
            official_image: None,
            versions_variable: None,
            build_tags: None,
        }
    }

    fn ports(&self) -> NodePorts {
        NodePorts {
            // The gRPC plugin's default port.
            rpc: 9736,
            p2p: 9735,
        }
    }

    fn chain_needs(&self) -> ChainNeeds {
        ChainNeeds {
            // CLN reads the chain through bitcoin-cli; btcd has no such client.
            backends: &[ChainKind::Bitcoind],
            wallet: false,
        }
    }

    fn args(&self, a: &NodeLaunch) -> Vec<String> {
        let (grpc_host, grpc_port) = split_host_port(a.rpc_listen);
        let mut args = vec![
            // Developer options (fast block polling and gossip) need this first.
            "--developer".into(),
            "--network=regtest".into(),
            format!("--lightning-dir={}", a.dir),
            format!("--addr={}", a.p2p_listen),
            format!("--alias={}", a.name),
        ];
        args.extend(chain_args(a.dir, a.chain));
        if let Some(plugin) = grpc_plugin(a.binary) {
            args.push(format!("--plugin={}", plugin.display()));
        }
        args.extend([
            format!("--grpc-host={grpc_host}"),
            format!("--grpc-port={grpc_port}"),
            // lightningd asks bitcoind for new blocks every 30 s by default; setup
            // mines and waits for nodes to see the blocks.
            "--dev-bitcoind-poll=1".into(),
            // Gossip fast, so new channels are known (and routable) soon on regtest.
            "--dev-fast-gossip".into(),
            // After a restart, peers come back in seconds rather than after a backoff.
            "--dev-fast-reconnect".into(),
            "--log-level=info".into(),
        ]);
        args
    }

    fn config_files(&self, a: &NodeLaunch) -> Vec<crate::chain::ConfigFile> {
        vec![crate::chain::ConfigFile {
            path: "bitcoin.conf",
            content: format!("rpcpassword={}\n", a.chain.rpc_pass),
        }]
    }

    fn credential_files(&self) -> &'static [&'static str] {
        &[CA_CERT, CLIENT_CERT, CLIENT_KEY]
    }

    fn credentials(&self, at: &dyn Fn(&str) -> PathBuf) -> Credentials {
        Credentials::Cln(ClnCredentials {
            ca_cert: at(CA_CERT),
            client_cert: at(CLIENT_CERT),
            client_key: at(CLIENT_KEY),
        })
    }

    /// A mutual-TLS handshake with the plugin's gRPC server succeeds.
    async fn ready(&self, endpoint: &NodeEndpoint) -> Result<(), String> {
        let Credentials::Cln(credentials) = &endpoint.credentials else {
            return Err(format!("not CLN credentials: {:?}", endpoint.credentials));
        };
        let config =
            super::client_config(&endpoint.name, credentials).map_err(|e| e.to_string())?;
        crate::tls::handshake_with(&endpoint.rpc_addr, config, SERVER_NAME).await
    }

    async fn connect(&self, endpoint: &NodeEndpoint) -> Result<Arc<dyn LightningNode>, NodeError> {
        Ok(Arc::new(ClnNode::connect(&endpoint.name, endpoint).await?))
    }

    fn is_starting_up(&self, err: &NodeError) -> bool {
        super::is_starting_up(err)
    }

    fn database(&self, database: crate::node::Database, args: &[String]) -> String {
        let own = args.iter().any(|a| a.starts_with("--wallet=postgres"));
        if database == crate::node::Database::Postgres || own {
            "postgres".into()
        } else {
            "sqlite".into()
        }
    }

    fn secret_words(&self) -> &'static [&'static str] {
        &["rune"]
    }

    fn missing(&self, feature: Feature) -> Option<&'static str> {
        match feature {
            // `xkeysend` takes `extratlvs`.
            Feature::Keysend | Feature::CustomRecords => None,
            Feature::PartLimit => Some("xpay takes no part limit (it chooses one itself)"),
            Feature::HoldInvoices => Some(
                "Core Lightning has hold invoices only through a plugin (holdinvoice), not in its core RPC, and this tool starts no plugins",
            ),
            Feature::CircularPayments => Some(
                "this tool pays from Core Lightning through xpay, which chooses its own route; a circular payment would need a route built by hand for sendpay, which the tool's client does not build",
            ),
            // xpay, pay, renepay.
            Feature::PaymentEngines => None,
            Feature::DbBackends => Some(DB_BACKENDS_ARE_LNDS),
        }
    }

    fn channel_rules(&self) -> ChannelRules {
        ChannelRules {
            // Large channels (wumbo) are CLN's default; `--large-channels` is a no-op.
            large_channel_flag: None,
            inbound_channel_reserve_sat: 0,
            max_unconfirmed_inbound_channels: None,
            // `--max-concurrent-htlcs`: 483 by default on test networks such as regtest
            // (30 on mainnet; `testnet_config` in lightningd/options.c).
            htlc_limit: HtlcLimit {
                default: 483,
                flag: Some("--max-concurrent-htlcs="),
                min: None,
            },
            one_inbound_open_at_a_time: false,
            dials_on_request: true,
        }
    }

    fn postgres(&self) -> Option<&dyn Postgres> {
        Some(self)
    }

    fn external(&self) -> Option<&dyn External> {
        Some(self)
    }
}

/// lightningd stores in PostgreSQL when its `--wallet` is a PostgreSQL DSN; no other
/// flag chooses the backend.
impl Postgres for Cln {
    /// `database: postgres` asks for the run's PostgreSQL server (the runtime sees it on
    /// the node); a DSN of the scenario's own (`--wallet=postgres://...` in `args:`) needs
    /// none.
    fn wanted_by(&self, _args: &[String]) -> bool {
        false
    }

    fn flags(&self) -> &'static [&'static str] {
        &[]
    }

    fn arg_for(&self, dsn: &str) -> String {
        format!("--wallet={dsn}")
    }

    /// lightningd reads `config` in its lightning directory.
    fn config(&self, dsn: &str) -> Option<crate::chain::ConfigFile> {
        Some(crate::chain::ConfigFile {
            path: "config",
            content: format!("wallet={dsn}\n"),
        })
    }
}

impl External for Cln {
    fn credential_fields(&self) -> &'static [&'static str] {
        &["ca_cert", "client_cert", "client_key"]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bitcoind(rpc_addr: &str, cli: Option<&str>) -> ChainAccess {
        ChainAccess {
            kind: ChainKind::Bitcoind,
            rpc_addr: rpc_addr.into(),
            rpc_user: "u".into(),
            rpc_pass: "p".into(),
            rpc_cert: None,
            zmq_block: Some("tcp://chain:28332".into()),
            zmq_tx: Some("tcp://chain:28333".into()),
            cli: cli.map(str::to_string),
        }
    }

    fn args(rpc_listen: &str, p2p_listen: &str, chain: &ChainAccess) -> Vec<String> {
        CLN.args(&NodeLaunch {
            name: "bob",
            dir: "/run/bob",
            rpc_listen,
            p2p_listen,
            chain,
            binary: None,
        })
    }

    fn has_all(args: &[String], wanted: &[&str]) {
        for w in wanted {
            assert!(args.iter().any(|a| a == w), "missing {w}: {args:?}");
        }
    }

    #[test]
    fn locally_args_name_the_chain_rpc_the_cli_and_the_grpc_listener() {
        let chain = bitcoind("127.0.0.1:18443", Some("/cache/bin/bitcoin-cli"));
        let args = args("127.0.0.1:40001", "127.0.0.1:40002", &chain);
        has_all(
            &args,
            &[
                "--network=regtest",
                "--lightning-dir=/run/bob",
                "--addr=127.0.0.1:40002",
                "--alias=bob",
                "--bitcoin-rpcconnect=127.0.0.1",
                "--bitcoin-rpcport=18443",
                "--bitcoin-rpcuser=u",
                "--bitcoin-cli=/cache/bin/bitcoin-cli",
                "--bitcoin-datadir=/run/bob",
                "--grpc-host=127.0.0.1",
                "--grpc-port=40001",
                "--dev-bitcoind-poll=1",
                "--log-level=info",
            ],
        );
        assert_eq!(args[0], "--developer", "dev options need it first");
        assert!(!args.iter().any(|a| a.contains("rpcpassword")), "{args:?}");
        assert!(!args.iter().any(|a| a.contains("zmq")), "{args:?}");
    }

    #[test]
    fn in_a_container_grpc_listens_on_every_address_and_the_chain_is_named() {
        let chain = bitcoind("chain:18443", Some("/bin/bitcoin-cli"));
        let p = CLN.ports();
        let args = args(
            &format!("0.0.0.0:{}", p.rpc),
            &format!("0.0.0.0:{}", p.p2p),
            &chain,
        );
        has_all(
            &args,
            &[
                "--grpc-host=0.0.0.0",
                "--grpc-port=9736",
                "--addr=0.0.0.0:9735",
                "--bitcoin-rpcconnect=chain",
                "--bitcoin-cli=/bin/bitcoin-cli",
            ],
        );
    }

    #[test]
    fn the_grpc_plugin_beside_lightningd_is_loaded_explicitly() {
        let dir = tempfile::tempdir().unwrap();
        let lightningd = dir.path().join("lightningd");
        let launch = |binary| {
            CLN.args(&NodeLaunch {
                name: "bob",
                dir: "/run/bob",
                rpc_listen: "127.0.0.1:1",
                p2p_listen: "127.0.0.1:2",
                chain: &bitcoind("127.0.0.1:3", None),
                binary,
            })
        };
        let plugin_args = |args: Vec<String>| -> Vec<String> {
            args.into_iter()
                .filter(|a| a.starts_with("--plugin"))
                .collect()
        };
        assert!(
            plugin_args(launch(Some(&lightningd))).is_empty(),
            "none there"
        );
        std::fs::write(dir.path().join("cln-grpc"), "").unwrap();
        assert_eq!(
            plugin_args(launch(Some(&lightningd))),
            [format!(
                "--plugin={}",
                dir.path().join("cln-grpc").display()
            )]
        );
        assert_eq!(
            plugin_args(launch(None)),
            ["--plugin=/bin/cln-grpc"],
            "in the image's place"
        );
    }

    #[test]
    fn without_a_cli_path_cln_looks_for_its_own() {
        let args = args("127.0.0.1:1", "127.0.0.1:2", &bitcoind("127.0.0.1:3", None));
        assert!(
            !args.iter().any(|a| a.starts_with("--bitcoin-cli")),
            "{args:?}"
        );
    }

    #[test]
    fn runs_on_bitcoind_only_and_needs_no_channel_flag() {
        assert_eq!(CLN.chain_needs().backends, [ChainKind::Bitcoind]);
        assert_eq!(CLN.channel_rules().large_channel_flag, None);
        let postgres = CLN.postgres().unwrap();
        assert!(!postgres.wanted_by(&["--wallet=postgres://x".to_string()]));
    }

    #[test]
    fn credentials_are_the_plugins_files_under_the_network_dir() {
        let c = CLN.credentials(&|f| PathBuf::from("/run/bob").join(f));
        let Credentials::Cln(c) = c else {
            panic!("{c:?}")
        };
        assert_eq!(c.ca_cert, PathBuf::from("/run/bob/regtest/ca.pem"));
        assert_eq!(c.client_cert, PathBuf::from("/run/bob/regtest/client.pem"));
        assert_eq!(
            c.client_key,
            PathBuf::from("/run/bob/regtest/client-key.pem")
        );
        // Copied out of a container flat, the names do not collide.
        let names: std::collections::HashSet<_> = CLN
            .credential_files()
            .iter()
            .map(|f| f.rsplit('/').next())
            .collect();
        assert_eq!(names.len(), 3);
    }

    #[test]
    fn images_take_the_version_as_a_tag() {
        assert_eq!(
            CLN.program().images(Some("26.06.6")).local,
            "lnbench/cln:v26.06.6"
        );
        assert_eq!(CLN.program().images(None).local, "lnbench/cln:v26.06.6");
        assert_eq!(
            CLN.program().images(None).official,
            None,
            "laid out otherwise"
        );
    }

    #[test]
    fn runes_given_in_args_stay_out_of_reports() {
        use crate::report::redact::{REDACTED, redact_scenario_text};
        let text = "args: [\"--rune=abc123\"]\n";
        assert_eq!(
            redact_scenario_text(text),
            format!("args: [\"--rune={REDACTED}\"]\n")
        );
    }
}
