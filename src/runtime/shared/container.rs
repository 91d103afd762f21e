//! The command lines of the chain and the nodes in a container (docker's, or a pod's
//! on kubernetes): both runtimes run the same images the same way, with the data
//! directory at [`DATA`] and the chain at [`CHAIN_NAME`] on the run's network.

use crate::chain::{CHAIN_NAME, ChainAccess, ChainKind, ChainLaunch, ConfigFile};
use crate::node::Implementation;
use crate::node::driver::NodeLaunch;

/// Data directory inside every container.
pub const DATA: &str = "/data";
/// The chain's RPC certificate inside node containers (chains whose RPC speaks TLS).
pub const CHAIN_CERT_IN_NODE: &str = "/data/chain-rpc.cert";

/// The chain backend's command line in its container (before the scenario's own
/// `args:`), and the config files it reads (its RPC password). Public so the hand-run
/// compose files can be checked against it (tests/compose.rs, through `docker`).
pub fn chain_command(
    kind: ChainKind,
    user: &str,
    pass: &str,
    mining_addr: &str,
) -> (Vec<String>, Vec<ConfigFile>) {
    let driver = crate::chain::driver(kind);
    let ports = driver.ports();
    let zmq = ports
        .zmq
        .map(|(b, t)| (format!("0.0.0.0:{b}"), format!("0.0.0.0:{t}")));
    let (rpc_listen, p2p_listen) = (
        format!("0.0.0.0:{}", ports.rpc),
        format!("0.0.0.0:{}", ports.p2p),
    );
    let launch = ChainLaunch {
        dir: DATA,
        rpc_listen: &rpc_listen,
        p2p_listen: &p2p_listen,
        zmq_listen: zmq.as_ref().map(|(b, t)| (b.as_str(), t.as_str())),
        user,
        pass,
        mining_addr,
    };
    (driver.args(&launch), driver.config_files(&launch))
}

/// How nodes on the run's network reach the chain backend.
pub fn chain_access(kind: ChainKind, user: &str, pass: &str) -> ChainAccess {
    let driver = crate::chain::driver(kind);
    let ports = driver.ports();
    ChainAccess {
        kind,
        rpc_addr: format!("{CHAIN_NAME}:{}", ports.rpc),
        rpc_user: user.to_string(),
        rpc_pass: pass.to_string(),
        rpc_cert: driver.rpc_tls().then(|| CHAIN_CERT_IN_NODE.to_string()),
        zmq_block: ports.zmq.map(|(b, _)| format!("tcp://{CHAIN_NAME}:{b}")),
        zmq_tx: ports.zmq.map(|(_, t)| format!("tcp://{CHAIN_NAME}:{t}")),
        // Node images that need it carry the chain's client (CLN's: bitcoin-cli).
        cli: driver.cli().map(|cli| format!("/bin/{cli}")),
    }
}

/// A node's command line in the container of node `name` (before the scenario's own
/// `args:`), reaching the chain at `chain` on the run's network, and the config files
/// it reads (the chain's RPC password).
pub fn node_command(
    implementation: Implementation,
    name: &str,
    chain: &ChainAccess,
) -> (Vec<String>, Vec<ConfigFile>) {
    let driver = crate::node::driver(implementation);
    let ports = driver.ports();
    let (rpc_listen, p2p_listen) = (
        format!("0.0.0.0:{}", ports.rpc),
        format!("0.0.0.0:{}", ports.p2p),
    );
    let launch = NodeLaunch {
        name,
        dir: DATA,
        rpc_listen: &rpc_listen,
        p2p_listen: &p2p_listen,
        chain,
        binary: None,
    };
    (driver.args(&launch), driver.config_files(&launch))
}
