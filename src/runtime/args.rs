//! The btcd and LND command lines, shared by every runtime so one scenario gives the
//! same node flags whether the nodes run as local processes or in containers. Only the
//! directories and listen / connect addresses differ between runtimes.

/// Where and how btcd runs.
#[derive(Debug, Clone)]
pub struct BtcdArgs<'a> {
    /// Directory for data, logs and the RPC certificate (`rpc.cert`, `rpc.key`).
    pub dir: &'a str,
    /// `host:port` the RPC server listens on.
    pub rpc_listen: &'a str,
    /// `host:port` the P2P server listens on.
    pub p2p_listen: &'a str,
    pub user: &'a str,
    pub pass: &'a str,
    pub mining_addr: &'a str,
}

/// The command line for btcd.
pub fn btcd_args(a: &BtcdArgs) -> Vec<String> {
    let d = a.dir;
    vec![
        "--regtest".into(),
        format!("--datadir={d}/data"),
        format!("--logdir={d}/logs"),
        format!("--rpcuser={}", a.user),
        format!("--rpcpass={}", a.pass),
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

/// Where and how one LND node runs, and how it reaches btcd.
#[derive(Debug, Clone)]
pub struct LndArgs<'a> {
    /// Instance name, used as the alias.
    pub name: &'a str,
    /// `--lnddir`: data, tls.cert, macaroons.
    pub dir: &'a str,
    pub grpc_listen: &'a str,
    pub p2p_listen: &'a str,
    /// `host:port` of btcd's RPC as LND sees it.
    pub btcd_rpc: &'a str,
    pub btcd_user: &'a str,
    pub btcd_pass: &'a str,
    /// Path of btcd's RPC certificate as LND sees it.
    pub btcd_cert: &'a str,
}

/// The command line for LND.
pub fn lnd_args(a: &LndArgs) -> Vec<String> {
    vec![
        format!("--lnddir={}", a.dir),
        "--bitcoin.active".into(),
        "--bitcoin.regtest".into(),
        "--bitcoin.node=btcd".into(),
        format!("--btcd.rpchost={}", a.btcd_rpc),
        format!("--btcd.rpcuser={}", a.btcd_user),
        format!("--btcd.rpcpass={}", a.btcd_pass),
        format!("--btcd.rpccert={}", a.btcd_cert),
        format!("--rpclisten={}", a.grpc_listen),
        "--norest".into(),
        format!("--listen={}", a.p2p_listen),
        "--noseedbackup".into(),
        "--nobootstrap".into(),
        "--accept-keysend".into(),
        "--maxpendingchannels=100".into(),
        // Channels above 16.7 M sat need wumbo.
        "--protocol.wumbo-channels".into(),
        // Gossip fast, so new channels are known (and routable) soon on regtest.
        "--trickledelay=50".into(),
        format!("--alias={}", a.name),
        "--debuglevel=info".into(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has_all(args: &[String], wanted: &[&str]) {
        for w in wanted {
            assert!(args.iter().any(|a| a == w), "missing {w}: {args:?}");
        }
    }

    #[test]
    fn lnd_args_point_at_the_chain_and_enable_what_benchmarks_need() {
        let args = lnd_args(&LndArgs {
            name: "alice",
            dir: "/run/alice",
            grpc_listen: "127.0.0.1:10009",
            p2p_listen: "127.0.0.1:9735",
            btcd_rpc: "127.0.0.1:1000",
            btcd_user: "u",
            btcd_pass: "p",
            btcd_cert: "/run/chain/rpc.cert",
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
    }

    #[test]
    fn btcd_args_mine_to_the_given_address() {
        let args = btcd_args(&BtcdArgs {
            dir: "/run/chain",
            rpc_listen: "127.0.0.1:1",
            p2p_listen: "127.0.0.1:2",
            user: "u",
            pass: "p",
            mining_addr: "bcrt1qxyz",
        });
        has_all(
            &args,
            &[
                "--regtest",
                "--miningaddr=bcrt1qxyz",
                "--rpclisten=127.0.0.1:1",
                "--listen=127.0.0.1:2",
                "--rpccert=/run/chain/rpc.cert",
                "--txindex",
            ],
        );
    }
}
