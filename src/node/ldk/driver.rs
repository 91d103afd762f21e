//! What the tool knows about ldk-server besides its API: it takes one argument, its
//! config file (TOML), which the runtime writes 0600 before the start: network,
//! listening and REST addresses, the storage directory, the log file, Bitcoin Core's RPC
//! as the chain source (exactly one chain source may be set) and the API key. The key
//! is the tool's own (ldk-server at this commit makes none): derived per node from the
//! chain's RPC password, so it is as secret as that password, the same on every write
//! of the config (a restart), and written beside the config as the credential file
//! `api_key`, which the client reads.

use super::LdkNode;
use crate::chain::{ChainAccess, ChainKind, ConfigFile};
use crate::node::driver::{
    ChainNeeds, ChannelRules, DB_BACKENDS_ARE_LNDS, HtlcLimit, NodeDriver, NodeEndpoint,
    NodeLaunch, NodePorts, ONE_PAYMENT_CALL, Program, node_secret,
};
use crate::node::{Credentials, Feature, Implementation, LightningNode, NodeError};
use async_trait::async_trait;
use std::path::PathBuf;
use std::sync::Arc;

/// The ldk-server version used when a node names none (its crate's version; the build
/// stamp and the image label add the commit).
pub const DEFAULT_VERSION: &str = "v0.1.0";
/// The config file ldk-server is started with, in its data directory.
const CONFIG_FILE: &str = "ldk-server.toml";
/// The API key, written by the runtime beside the config.
const API_KEY_FILE: &str = "api_key";
/// Why a keysend workload cannot run with ldk-server built at the pinned commit.
const NO_KEYSEND: &str = "ldk-server at commit ee1c96c (the build script's pin: the last whose dependencies all come from crates.io) has no keysend; SpontaneousSend came in a later commit";

pub struct Ldk;

/// The ldk-server driver.
pub static LDK: Ldk = Ldk;

/// LDK's credentials: the file holding the API key the requests are signed with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LdkCredentials {
    pub api_key: PathBuf,
}

impl LdkCredentials {
    pub fn files(&self) -> Vec<&std::path::Path> {
        vec![&self.api_key]
    }

    /// The API key, without surrounding white space.
    pub(super) fn read_api_key(&self, node: &str) -> Result<String, NodeError> {
        let text = crate::files::read_text(&self.api_key, crate::files::SMALL_MAX_BYTES).map_err(
            |source| NodeError::Credentials {
                node: node.to_string(),
                what: "API key",
                path: self.api_key.clone(),
                source,
            },
        )?;
        // A key given for an external node is a secret of the run too.
        crate::secrets::register_secret(&text);
        Ok(text.trim().to_string())
    }
}

/// The node's API key ([`node_secret`], in hex).
fn api_key(chain: &ChainAccess, name: &str) -> String {
    let key = bitcoin::hex::DisplayHex::to_lower_hex_string(
        &node_secret(chain, "lnbench ldk-server api key", name)[..],
    );
    crate::secrets::register_secret(&key);
    key
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The config file's text. ldk-server parses the chain's RPC address as an IP socket
/// address (no host names): the docker runtime gives nodes the chain's IP.
fn config(a: &NodeLaunch) -> String {
    let dir = a.dir.trim_end_matches('/');
    let q = toml_string;
    format!(
        "# Written by lnbench-tui for node {name}.\n\
         [node]\n\
         network = \"regtest\"\n\
         listening_address = {listen}\n\
         rest_service_address = {rest}\n\
         alias = {alias}\n\
         api_key = {key}\n\
         \n\
         [storage.disk]\n\
         dir_path = {dir}\n\
         \n\
         # The key is `file` (`file_path`, in upstream's example, is ignored).\n\
         [log]\n\
         level = \"Info\"\n\
         file = {log}\n\
         \n\
         [bitcoind]\n\
         rpc_address = {rpc}\n\
         rpc_user = {user}\n\
         rpc_password = {pass}\n",
        name = a.name,
        listen = q(a.p2p_listen),
        rest = q(a.rpc_listen),
        // At most 32 bytes: instance names are shorter (validation).
        alias = q(a.name),
        key = q(&api_key(a.chain, a.name)),
        dir = q(dir),
        log = q(&format!("{dir}/ldk-server.log")),
        rpc = q(&a.chain.rpc_addr),
        user = q(&a.chain.rpc_user),
        pass = q(&a.chain.rpc_pass),
    )
}

#[async_trait]
impl NodeDriver for Ldk {
    fn implementation(&self) -> Implementation {
        Implementation::Ldk
    }

    fn program(&self) -> Program {
        Program {
            binary: "ldk-server",
            build_hint: "build it from an ldk-server source tree with `LDK_SERVER_SRC=<tree> scripts/build-nodes.sh` \
                         (docs/implementations.md, \"LDK\")",
            default_version: DEFAULT_VERSION,
            local_image: "lnbench/ldk",
            // No official image of ldk-server.
            official_image: None,
            versions_variable: None,
            build_tags: None,
        }
    }

    fn ports(&self) -> NodePorts {
        NodePorts {
            // The REST port of upstream's example config.
            rpc: 3002,
            p2p: 9735,
        }
    }

    fn chain_needs(&self) -> ChainNeeds {
        ChainNeeds {
            // ldk-server reads the chain from Bitcoin Core's RPC (or Esplora / Electrum
            // servers, which the tool does not run); btcd lacks calls ldk-node makes.
            backends: &[ChainKind::Bitcoind],
            wallet: false,
        }
    }

    /// The config file is the only argument ldk-server reads (it ignores the rest).
    fn args(&self, a: &NodeLaunch) -> Vec<String> {
        vec![format!("{}/{CONFIG_FILE}", a.dir.trim_end_matches('/'))]
    }

    fn config_files(&self, a: &NodeLaunch) -> Vec<ConfigFile> {
        vec![
            ConfigFile {
                path: CONFIG_FILE,
                content: config(a),
            },
            ConfigFile {
                path: API_KEY_FILE,
                content: format!("{}\n", api_key(a.chain, a.name)),
            },
        ]
    }

    fn credential_files(&self) -> &'static [&'static str] {
        &[API_KEY_FILE]
    }

    fn credentials(&self, at: &dyn Fn(&str) -> PathBuf) -> Credentials {
        Credentials::Ldk(LdkCredentials {
            api_key: at(API_KEY_FILE),
        })
    }

    /// A signed `GetNodeInfo` is answered: the REST listener opens once the node has
    /// started, and the answer proves the key is right.
    async fn ready(&self, endpoint: &NodeEndpoint) -> Result<(), String> {
        let node =
            LdkNode::connect(&endpoint.name, endpoint).map_err(|e| crate::exit::error_chain(&e))?;
        node.request::<_, super::proto::GetNodeInfoResponse>(
            "GetNodeInfo",
            &super::proto::GetNodeInfoRequest {},
        )
        .await
        .map(|_| ())
        .map_err(|e| crate::exit::error_chain(&e))
    }

    async fn connect(&self, endpoint: &NodeEndpoint) -> Result<Arc<dyn LightningNode>, NodeError> {
        Ok(Arc::new(LdkNode::connect(&endpoint.name, endpoint)?))
    }

    fn is_starting_up(&self, err: &NodeError) -> bool {
        super::is_starting_up(err)
    }

    /// ldk-server keeps its state in SQLite only (it has no database server option;
    /// validation refuses `database: postgres` for it, as it offers no
    /// [`NodeDriver::postgres`]).
    fn database(&self, _database: crate::node::Database, _args: &[String]) -> String {
        "sqlite".into()
    }

    fn secret_words(&self) -> &'static [&'static str] {
        &["api_key"]
    }

    fn missing(&self, feature: Feature) -> Option<&'static str> {
        match feature {
            Feature::Keysend => Some(NO_KEYSEND),
            Feature::CustomRecords => {
                Some("the tool's client for it sends no custom TLV records with keysend")
            }
            // `Bolt11Send` takes `max_path_count`.
            Feature::PartLimit => None,
            Feature::HoldInvoices => Some(
                "ldk-server's API does not expose hold invoices (LDK has them in its library, not in the server's RPC this tool drives)",
            ),
            Feature::CircularPayments => Some(
                "ldk-server's payment calls take no first or last hop, so the tool cannot make a node pay itself around a chosen circle",
            ),
            Feature::PaymentEngines => Some(ONE_PAYMENT_CALL),
            Feature::DbBackends => Some(DB_BACKENDS_ARE_LNDS),
        }
    }

    fn channel_rules(&self) -> ChannelRules {
        ChannelRules {
            large_channel_flag: None,
            // ldk-node's default reserve per anchor channel (`AnchorChannelsConfig::
            // per_channel_reserve_sats`): without it spendable, an inbound anchor
            // channel is refused ("insufficient available on-chain reserves").
            inbound_channel_reserve_sat: 25_000,
            // LDK refuses a fifth unconfirmed inbound channel from one peer ("Refusing
            // more than 4 unfunded channels": `MAX_UNFUNDED_CHANS_PER_PEER`).
            max_unconfirmed_inbound_channels: Some(4),
            // LDK's `ChannelHandshakeConfig::our_max_accepted_htlcs` default, 50:
            // ldk-server takes no setting for it.
            htlc_limit: HtlcLimit {
                default: 50,
                flag: None,
                min: None,
            },
            one_inbound_open_at_a_time: false,
            // ldk-server at its pin has no ConnectPeer: the tool notes the address and
            // the OpenChannel call dials it.
            dials_on_request: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bitcoind(rpc_addr: &str) -> ChainAccess {
        ChainAccess {
            kind: ChainKind::Bitcoind,
            rpc_addr: rpc_addr.into(),
            rpc_user: "lnbench".into(),
            rpc_pass: "s3cret\"pass".into(),
            rpc_cert: None,
            zmq_block: None,
            zmq_tx: None,
            cli: None,
        }
    }

    fn launch<'a>(name: &'a str, chain: &'a ChainAccess) -> NodeLaunch<'a> {
        NodeLaunch {
            name,
            dir: "/run/bob/",
            rpc_listen: "127.0.0.1:40001",
            p2p_listen: "127.0.0.1:40002",
            chain,
            binary: None,
        }
    }

    #[test]
    fn the_only_argument_is_the_config_file_and_it_holds_no_secret_on_the_command_line() {
        let chain = bitcoind("127.0.0.1:18443");
        let args = LDK.args(&launch("bob", &chain));
        assert_eq!(args, ["/run/bob/ldk-server.toml"]);
    }

    #[test]
    fn the_config_names_one_chain_source_the_addresses_and_the_log_file_key() {
        let chain = bitcoind("127.0.0.1:18443");
        let files = LDK.config_files(&launch("bob", &chain));
        let config = &files
            .iter()
            .find(|f| f.path == CONFIG_FILE)
            .unwrap()
            .content;
        for line in [
            "network = \"regtest\"",
            "listening_address = \"127.0.0.1:40002\"",
            "rest_service_address = \"127.0.0.1:40001\"",
            "alias = \"bob\"",
            "dir_path = \"/run/bob\"",
            "file = \"/run/bob/ldk-server.log\"",
            "rpc_address = \"127.0.0.1:18443\"",
            "rpc_user = \"lnbench\"",
            "rpc_password = \"s3cret\\\"pass\"",
        ] {
            assert!(config.lines().any(|l| l == line), "{line} in\n{config}");
        }
        assert!(
            !config.lines().any(|l| l.starts_with("file_path")),
            "ignored by ldk-server"
        );
        for other in ["[esplora]", "[electrum]"] {
            assert!(!config.contains(other), "exactly one chain source");
        }
    }

    #[test]
    fn the_api_key_is_a_secret_of_the_run() {
        let chain = bitcoind("127.0.0.1:18443");
        let key = api_key(&chain, "frank");
        let line = format!("HTTP 401 for key {key}");
        assert_eq!(
            crate::redact::redact_text(&line),
            format!("HTTP 401 for key {}", crate::redact::REDACTED)
        );
    }

    #[test]
    fn the_api_key_is_in_the_config_and_the_credential_file_and_differs_per_node() {
        let chain = bitcoind("127.0.0.1:18443");
        let bob = LDK.config_files(&launch("bob", &chain));
        let key = bob[1].content.trim().to_string();
        assert_eq!(bob[1].path, API_KEY_FILE);
        assert_eq!(key.len(), 64);
        assert!(bob[0].content.contains(&format!("api_key = \"{key}\"")));
        assert_eq!(
            LDK.config_files(&launch("bob", &chain))[1].content.trim(),
            key,
            "the same on a restart"
        );
        assert_ne!(
            LDK.config_files(&launch("carol", &chain))[1].content.trim(),
            key
        );
        let other = ChainAccess {
            rpc_pass: "other".into(),
            ..chain.clone()
        };
        assert_ne!(
            LDK.config_files(&launch("bob", &other))[1].content.trim(),
            key,
            "secret as the RPC password is"
        );
        assert!(!key.contains("s3cret"));
    }

    #[test]
    fn credentials_are_the_api_key_file() {
        assert_eq!(LDK.credential_files(), [API_KEY_FILE]);
        let Credentials::Ldk(c) = LDK.credentials(&|f| PathBuf::from("/run/bob").join(f)) else {
            panic!("not LDK credentials")
        };
        assert_eq!(c.api_key, PathBuf::from("/run/bob/api_key"));
    }

    #[test]
    fn runs_on_bitcoind_only_has_no_keysend_and_takes_images_by_version() {
        assert_eq!(LDK.chain_needs().backends, [ChainKind::Bitcoind]);
        assert!(
            LDK.missing(Feature::Keysend)
                .unwrap()
                .contains("no keysend")
        );
        assert_eq!(LDK.program().images(None).local, "lnbench/ldk:v0.1.0");
        assert_eq!(
            LDK.program().images(Some("0.1.0")).local,
            "lnbench/ldk:v0.1.0"
        );
        assert_eq!(LDK.program().images(None).official, None);
        assert!(LDK.postgres().is_none());
    }

    #[test]
    fn toml_strings_are_escaped() {
        assert_eq!(toml_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000A\"");
    }
}
