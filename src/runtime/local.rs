//! Local runtime: btcd and LND as processes of this machine, each in its own process
//! group with its own data dir under the run directory and its output in
//! `<run_dir>/<name>/output.log`. The chain's directory is `<run_dir>/chain`.

mod binaries;
mod postgres;
mod process;

pub use binaries::{cache_bin_dir, find_binary};

use super::{ChainEndpoint, NodeEndpoint, Runtime, RuntimeError};
use crate::node::Implementation;
use crate::scenario::{ChainKind, ChainSpec, NodeSpec};
use async_trait::async_trait;
use bitcoin::hex::DisplayHex;
use process::{Proc, accepts_tcp, free_ports, tail};
use rand::RngCore;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::time::Instant;

/// Name of the chain's directory and log, as `log_tail` takes it.
pub const CHAIN_NAME: &str = "chain";
/// How long btcd may take until its RPC listens.
const CHAIN_READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long LND may take until its credentials exist and its gRPC port listens.
const NODE_READY_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a process may take to exit on SIGTERM before it is killed.
const STOP_DEADLINE: Duration = Duration::from_secs(15);
const POLL: Duration = Duration::from_millis(100);

/// Runs the chain and nodes as local processes.
#[derive(Debug)]
pub struct LocalRuntime {
    run_dir: PathBuf,
    keep: bool,
    chain: Option<Proc>,
    nodes: Vec<Proc>,
    /// Started when a node selects `--db.backend=postgres`.
    postgres: Option<postgres::Postgres>,
    pids: Vec<u32>,
}

impl LocalRuntime {
    /// `run_dir` holds every process's data and log; it is removed by `down` unless
    /// `keep`.
    pub fn new(run_dir: PathBuf, keep: bool) -> LocalRuntime {
        LocalRuntime {
            run_dir,
            keep,
            chain: None,
            nodes: Vec::new(),
            postgres: None,
            pids: Vec::new(),
        }
    }

    pub fn run_dir(&self) -> &Path {
        &self.run_dir
    }

    /// Every pid this runtime started (also the stopped ones), so callers and tests
    /// can check that none survives `down`.
    pub fn pids(&self) -> &[u32] {
        &self.pids
    }

    fn dir_for(&self, name: &str) -> Result<PathBuf, RuntimeError> {
        let dir = self.run_dir.join(name);
        std::fs::create_dir_all(&dir).map_err(|source| RuntimeError::Io {
            path: dir.clone(),
            source,
        })?;
        Ok(dir)
    }

    fn ports(&self, count: usize) -> Result<Vec<u16>, RuntimeError> {
        free_ports(count).map_err(|source| RuntimeError::Io {
            path: self.run_dir.clone(),
            source,
        })
    }

    /// SIGTERM to all, then wait for each until one shared deadline; SIGKILL the rest.
    async fn stop(procs: Vec<Proc>) {
        for p in &procs {
            p.terminate();
        }
        let deadline = Instant::now() + STOP_DEADLINE;
        for mut p in procs {
            p.wait_or_kill(deadline).await;
        }
    }
}

/// The command line for btcd.
pub fn btcd_args(
    dir: &Path,
    rpc_port: u16,
    p2p_port: u16,
    user: &str,
    pass: &str,
    mining_addr: &str,
) -> Vec<String> {
    let d = dir.display();
    vec![
        "--regtest".into(),
        format!("--datadir={d}/data"),
        format!("--logdir={d}/logs"),
        format!("--rpcuser={user}"),
        format!("--rpcpass={pass}"),
        format!("--rpclisten=127.0.0.1:{rpc_port}"),
        format!("--listen=127.0.0.1:{p2p_port}"),
        format!("--rpccert={d}/rpc.cert"),
        format!("--rpckey={d}/rpc.key"),
        format!("--miningaddr={mining_addr}"),
        "--txindex".into(),
        // Many LND nodes each hold websocket clients; the defaults (10 / 25) are small.
        "--rpcmaxclients=1000".into(),
        "--rpcmaxwebsockets=1000".into(),
        "--rpcmaxconcurrentreqs=1000".into(),
        "--debuglevel=info".into(),
    ]
}

/// The command line for LND.
pub fn lnd_args(
    name: &str,
    dir: &Path,
    grpc_port: u16,
    p2p_port: u16,
    chain: &ChainEndpoint,
) -> Vec<String> {
    let d = dir.display();
    vec![
        format!("--lnddir={d}"),
        "--bitcoin.active".into(),
        "--bitcoin.regtest".into(),
        "--bitcoin.node=btcd".into(),
        format!("--btcd.rpchost={}", chain.rpc_addr),
        format!("--btcd.rpcuser={}", chain.rpc_user),
        format!("--btcd.rpcpass={}", chain.rpc_pass),
        format!("--btcd.rpccert={}", chain.rpc_cert.display()),
        format!("--rpclisten=127.0.0.1:{grpc_port}"),
        "--norest".into(),
        format!("--listen=127.0.0.1:{p2p_port}"),
        "--noseedbackup".into(),
        "--nobootstrap".into(),
        "--accept-keysend".into(),
        "--maxpendingchannels=100".into(),
        // Channels above 16.7 M sat need wumbo.
        "--protocol.wumbo-channels".into(),
        // Gossip fast, so new channels are known (and routable) soon on regtest.
        "--trickledelay=50".into(),
        format!("--alias={name}"),
        "--debuglevel=info".into(),
    ]
}

/// Writes a P-256 certificate and key for btcd's RPC listener (btcd would make a
/// P-521 one, which rustls with ring cannot verify).
fn write_rpc_cert(cert_path: &Path, key_path: &Path) -> Result<(), RuntimeError> {
    let (cert, key) =
        crate::tls::self_signed_pem(&["localhost", "127.0.0.1"]).map_err(|e| RuntimeError::Io {
            path: cert_path.to_path_buf(),
            source: std::io::Error::other(e),
        })?;
    for (path, pem) in [(cert_path, cert), (key_path, key)] {
        std::fs::write(path, pem).map_err(|source| RuntimeError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    }
    Ok(())
}

fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buf);
    buf.to_lower_hex_string()
}

/// The first line a binary prints for `--version`, for the report.
async fn version_of(binary: &Path) -> String {
    let output = tokio::process::Command::new(binary)
        .arg("--version")
        .kill_on_drop(true)
        .output();
    match tokio::time::timeout(Duration::from_secs(10), output).await {
        Ok(Ok(out)) => String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_string(),
        _ => String::new(),
    }
}

#[async_trait]
impl Runtime for LocalRuntime {
    async fn start_chain(
        &mut self,
        spec: &ChainSpec,
        mining_addr: &str,
    ) -> Result<ChainEndpoint, RuntimeError> {
        let ChainKind::Btcd = spec.kind;
        let what = "the chain (btcd)";
        let binary = find_binary(spec.binary.as_deref(), "btcd", what)?;
        let dir = self.dir_for(CHAIN_NAME)?;
        let ports = self.ports(2)?;
        let (user, pass) = ("lnbench".to_string(), random_hex(16));
        let rpc_cert = dir.join("rpc.cert");
        write_rpc_cert(&rpc_cert, &dir.join("rpc.key"))?;
        let mut args = btcd_args(&dir, ports[0], ports[1], &user, &pass, mining_addr);
        args.extend(spec.args.iter().cloned());
        let log = dir.join("output.log");
        let proc = Proc::spawn(CHAIN_NAME, what, &binary, &args, log.clone())?;
        self.pids.push(proc.pid);
        let proc = self.chain.insert(proc);

        let rpc_addr = format!("127.0.0.1:{}", ports[0]);
        let deadline = Instant::now() + CHAIN_READY_TIMEOUT;
        loop {
            if let Some(status) = proc.exited() {
                return Err(RuntimeError::Exited {
                    what: what.into(),
                    status,
                    tail: tail(&log, 30),
                    log,
                });
            }
            if rpc_cert.exists() && accepts_tcp(&rpc_addr).await {
                break;
            }
            if Instant::now() >= deadline {
                return Err(RuntimeError::NotReady {
                    what: what.into(),
                    secs: CHAIN_READY_TIMEOUT.as_secs(),
                    tail: tail(&log, 30),
                    log,
                });
            }
            tokio::time::sleep(POLL).await;
        }
        Ok(ChainEndpoint {
            rpc_addr,
            rpc_user: user,
            rpc_pass: pass,
            rpc_cert,
            p2p_addr: format!("127.0.0.1:{}", ports[1]),
            version: version_of(&binary).await,
        })
    }

    async fn start_nodes(
        &mut self,
        nodes: &[NodeSpec],
        chain: &ChainEndpoint,
    ) -> Result<Vec<NodeEndpoint>, RuntimeError> {
        // Start all, then wait for all: LND start-up is mostly waiting, so in parallel.
        let mut endpoints = Vec::with_capacity(nodes.len());
        let first = self.nodes.len();
        if self.postgres.is_none() && nodes.iter().any(|n| postgres::wanted(&n.args)) {
            let dir = self.dir_for("postgres")?;
            let port = self.ports(1)?[0];
            let run_name = self
                .run_dir
                .file_name()
                .map_or("run".into(), |n| n.to_string_lossy().into_owned());
            let pg = postgres::Postgres::start(&dir, &run_name, port).await?;
            self.pids.push(pg.proc.pid);
            self.postgres = Some(pg);
        }
        for spec in nodes {
            let Implementation::Lnd = spec.implementation;
            let what = format!("node {}", spec.name);
            let binary = find_binary(spec.binary.as_deref(), "lnd", &what)?;
            let dir = self.dir_for(&spec.name)?;
            let ports = self.ports(2)?;
            let mut args = lnd_args(&spec.name, &dir, ports[0], ports[1], chain);
            args.extend(spec.args.iter().cloned());
            if let Some(pg) = self
                .postgres
                .as_ref()
                .filter(|_| postgres::wanted(&spec.args))
            {
                args.push(pg.database_for(&spec.name).await?);
            }
            let proc = Proc::spawn(&spec.name, &what, &binary, &args, dir.join("output.log"))?;
            self.pids.push(proc.pid);
            endpoints.push(NodeEndpoint {
                name: spec.name.clone(),
                grpc_addr: format!("127.0.0.1:{}", ports[0]),
                p2p_addr: format!("127.0.0.1:{}", ports[1]),
                tls_cert: dir.join("tls.cert"),
                macaroon: dir.join("data/chain/bitcoin/regtest/admin.macaroon"),
                data_dir: dir,
                binary,
                pid: Some(proc.pid),
            });
            self.nodes.push(proc);
        }

        let deadline = Instant::now() + NODE_READY_TIMEOUT;
        let mut pending: Vec<usize> = (0..endpoints.len()).collect();
        while !pending.is_empty() {
            let mut still = Vec::new();
            for i in pending {
                let ep = &endpoints[i];
                let proc = &mut self.nodes[first + i];
                if let Some(status) = proc.exited() {
                    return Err(RuntimeError::Exited {
                        what: format!("node {}", ep.name),
                        status,
                        tail: tail(&proc.log, 30),
                        log: proc.log.clone(),
                    });
                }
                let ready = ep.tls_cert.exists()
                    && ep.macaroon.exists()
                    && accepts_tcp(&ep.grpc_addr).await;
                if !ready {
                    still.push(i);
                }
            }
            pending = still;
            if let Some(&i) = pending.first()
                && Instant::now() >= deadline
            {
                let proc = &self.nodes[first + i];
                return Err(RuntimeError::NotReady {
                    what: format!("node {}", endpoints[i].name),
                    secs: NODE_READY_TIMEOUT.as_secs(),
                    tail: tail(&proc.log, 30),
                    log: proc.log.clone(),
                });
            }
            if !pending.is_empty() {
                tokio::time::sleep(POLL).await;
            }
        }
        Ok(endpoints)
    }

    fn log_tail(&self, name: &str, lines: usize) -> String {
        tail(&self.run_dir.join(name).join("output.log"), lines)
    }

    fn exited(&mut self) -> Option<(String, String)> {
        self.nodes
            .iter_mut()
            .chain(self.chain.as_mut())
            .find_map(|p| p.exited().map(|status| (p.name.clone(), status)))
    }

    async fn down(&mut self) -> Result<(), RuntimeError> {
        // Nodes first: LND can hang on exit while its chain backend is gone.
        Self::stop(std::mem::take(&mut self.nodes)).await;
        let pg = self.postgres.take();
        let pg_data = pg.as_ref().map(|p| p.data.clone());
        Self::stop(pg.map(|p| p.proc).into_iter().collect()).await;
        Self::stop(self.chain.take().into_iter().collect()).await;
        // Outside the run directory when PostgreSQL ran as another user.
        if let Some(data) = pg_data.filter(|d| !d.starts_with(&self.run_dir)) {
            let _ = tokio::fs::remove_dir_all(&data).await;
        }
        if !self.keep {
            match tokio::fs::remove_dir_all(&self.run_dir).await {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(RuntimeError::Io {
                        path: self.run_dir.clone(),
                        source,
                    });
                }
            }
        }
        Ok(())
    }
}

impl Drop for LocalRuntime {
    /// A backstop for panics and early returns: kill every process group now. `down`
    /// is the orderly way; after it there is nothing left to do here.
    fn drop(&mut self) {
        let pg = self.postgres.take().map(|p| p.proc);
        let mut procs: Vec<Proc> = self
            .nodes
            .drain(..)
            .chain(pg)
            .chain(self.chain.take())
            .collect();
        if procs.is_empty() {
            return;
        }
        for p in &mut procs {
            p.kill_now();
        }
        // Reap briefly so the directory is not removed under a live process.
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        while procs.iter_mut().any(|p| !p.reaped()) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.run_dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain() -> ChainEndpoint {
        ChainEndpoint {
            rpc_addr: "127.0.0.1:1000".into(),
            rpc_user: "u".into(),
            rpc_pass: "p".into(),
            rpc_cert: PathBuf::from("/run/chain/rpc.cert"),
            p2p_addr: "127.0.0.1:1001".into(),
            version: String::new(),
        }
    }

    #[test]
    fn lnd_args_point_at_the_chain_and_enable_what_benchmarks_need() {
        let args = lnd_args("alice", Path::new("/run/alice"), 10009, 9735, &chain());
        for wanted in [
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
        ] {
            assert!(
                args.iter().any(|a| a == wanted),
                "missing {wanted}: {args:?}"
            );
        }
    }

    #[test]
    fn btcd_args_mine_to_the_given_address() {
        let args = btcd_args(Path::new("/run/chain"), 1, 2, "u", "p", "bcrt1qxyz");
        for wanted in [
            "--regtest",
            "--miningaddr=bcrt1qxyz",
            "--rpclisten=127.0.0.1:1",
            "--listen=127.0.0.1:2",
            "--rpccert=/run/chain/rpc.cert",
            "--txindex",
        ] {
            assert!(
                args.iter().any(|a| a == wanted),
                "missing {wanted}: {args:?}"
            );
        }
    }

    #[tokio::test]
    async fn down_is_idempotent_and_removes_the_run_dir() {
        let dir = tempfile::tempdir().unwrap();
        let run_dir = dir.path().join("run");
        let mut rt = LocalRuntime::new(run_dir.clone(), false);
        let sleeper = rt.dir_for("sleeper").unwrap();
        let proc = Proc::spawn(
            "sleeper",
            "test sleeper",
            Path::new("/bin/sleep"),
            &["300".into()],
            sleeper.join("output.log"),
        )
        .unwrap();
        rt.pids.push(proc.pid);
        rt.nodes.push(proc);
        rt.down().await.unwrap();
        rt.down().await.unwrap();
        assert!(!run_dir.exists());
        assert!(!std::path::Path::new(&format!("/proc/{}", rt.pids()[0])).exists());
    }

    #[test]
    fn drop_kills_what_down_did_not_stop() {
        let dir = tempfile::tempdir().unwrap();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let pid = runtime.block_on(async {
            let mut rt = LocalRuntime::new(dir.path().join("run"), true);
            let d = rt.dir_for("sleeper").unwrap();
            let proc = Proc::spawn(
                "sleeper",
                "test sleeper",
                Path::new("/bin/sleep"),
                &["300".into()],
                d.join("output.log"),
            )
            .unwrap();
            let pid = proc.pid;
            rt.chain = Some(proc);
            drop(rt);
            pid
        });
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "pid {pid} survived Drop"
        );
        assert!(
            dir.path().join("run").exists(),
            "keep = true keeps the logs"
        );
    }
}
