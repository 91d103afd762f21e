//! Local runtime: the chain backend and the nodes as processes of this machine, each in
//! its own process group with its own data dir under the run directory and its output
//! in `<run_dir>/<name>/output.log`. The chain's directory is `<run_dir>/chain`. What
//! to start and how to tell it is ready comes from each one's driver.

mod binaries;
pub(crate) mod cgroup;
pub mod config_files;
mod envelopes;
pub mod etcd;
mod faults;
pub(crate) mod ports;
pub mod postgres;
pub(crate) mod process;
pub mod stats;

/// Also read by the docker runtime for its saved container logs.
use super::shared::{self, new_password, tail};
use super::{ChainEndpoint, NodeEndpoint, Restarted, Runtime, RuntimeError};
pub use crate::cache::cache_bin_dir;
use crate::chain::{ChainAccess, ChainLaunch};
use crate::node::driver::NodeLaunch;
use crate::scenario::{Capabilities, ChainSpec, NodeSpec, Support};
use async_trait::async_trait;
pub use binaries::{find_binary, find_node_binary, versions};
use config_files::{cli_beside, write_config_files, write_rpc_cert};
pub use faults::{TOXIPROXY, TOXIPROXY_NAME};
use ports::free_ports;
use process::Proc;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::time::Instant;

/// Name of the chain's directory and log, as `log_tail` takes it.
pub use crate::chain::CHAIN_NAME;

/// What the local runtime runs: everything, links and faults included (it proxies
/// peer links through Toxiproxy and signals its own processes).
pub const CAPABILITIES: Capabilities = Capabilities {
    name: "local",
    faults: Support::Runs,
    links: Support::Runs,
    starts_nodes: true,
    settings: None,
    node_sockets: true,
};

pub(super) const REGISTRATION: super::Registration = super::Registration {
    capabilities: &CAPABILITIES,
    prepare: binaries::prepare,
    preflight: binaries::preflight,
    leftovers: None,
};
pub(super) use binaries::prepare_for;
/// How long the chain backend may take until its RPC serves (generous: it only delays
/// a chain that never serves, and a loaded machine is slow).
const CHAIN_READY_TIMEOUT: Duration = Duration::from_secs(60);
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
    /// Started when a node selects `--db.backend=etcd`; `etcd_members` members.
    etcd: Option<etcd::Etcd>,
    etcd_members: u32,
    /// Nodes given an etcd member so far (each gets the next member in turn).
    etcd_nodes: usize,
    pids: Vec<u32>,
    stats: stats::Sampler,
    /// How each node was started (binary, arguments, endpoint), to start it again.
    launches: Vec<(PathBuf, Vec<String>, NodeEndpoint)>,
    /// How the chain was started (binary, arguments), to start it again after a fault.
    chain_launch: Option<(PathBuf, Vec<String>)>,
    /// Nodes a fault killed: (their place in `nodes`, their log, their name).
    killed: Vec<(usize, PathBuf, String)>,
    /// The fault proxy of the run's peer links, when the scenario has any.
    toxiproxy: Option<Proc>,
    toxiproxy_version: String,
    /// The run's cgroups, made when the first process with an envelope starts.
    cgroups: Option<cgroup::Cgroups>,
    /// `resources:` of the chain and of each database server.
    chain_envelope: Option<crate::scenario::Envelope>,
    database_envelope: Option<crate::scenario::Envelope>,
    /// How long `down` waits for each process to exit on SIGTERM before killing it.
    stop_deadline: Duration,
    /// What `down` had to kill so far.
    killed_at_down: Vec<String>,
}

impl LocalRuntime {
    /// The etcd members nodes on `--db.backend=etcd` share, each confined like the
    /// database servers.
    async fn start_etcd(&mut self) -> Result<(), RuntimeError> {
        let ports = self.ports(2 * self.etcd_members as usize)?;
        let run_name = self
            .run_dir
            .file_name()
            .map_or("run".into(), |n| n.to_string_lossy().into_owned());
        let started =
            etcd::Etcd::start(&self.run_dir, &run_name, self.etcd_members, &ports).await?;
        self.pids.extend(started.procs.iter().map(|p| p.pid));
        let members: Vec<(String, u32)> = (started.procs.iter())
            .map(|p| (p.name.clone(), p.pid))
            .collect();
        self.etcd = Some(started);
        for (name, pid) in members {
            self.confine(&name, self.database_envelope.clone().as_ref(), pid)?;
        }
        Ok(())
    }

    /// `run_dir` holds every process's data and log; it is removed by `down` unless
    /// `keep`.
    pub fn new(run_dir: PathBuf, keep: bool) -> LocalRuntime {
        LocalRuntime {
            run_dir,
            keep,
            chain: None,
            nodes: Vec::new(),
            postgres: None,
            etcd: None,
            etcd_members: 1,
            etcd_nodes: 0,
            pids: Vec::new(),
            stats: stats::Sampler::default(),
            launches: Vec::new(),
            chain_launch: None,
            killed: Vec::new(),
            stop_deadline: STOP_DEADLINE,
            killed_at_down: Vec::new(),
            toxiproxy: None,
            toxiproxy_version: String::new(),
            cgroups: None,
            chain_envelope: None,
            database_envelope: None,
        }
    }

    /// The chain's and the database servers' envelopes (`resources:`).
    pub fn with_envelopes(mut self, resources: &crate::scenario::Resources) -> LocalRuntime {
        self.chain_envelope = resources.chain.clone();
        self.database_envelope = resources.databases.clone();
        self
    }

    pub fn run_dir(&self) -> &Path {
        &self.run_dir
    }

    /// Every pid this runtime started (also the stopped ones), so callers and tests
    /// can check that none survives `down`.
    /// Where each started node answers, in start order (tests drive them from outside).
    pub fn endpoints(&self) -> Vec<NodeEndpoint> {
        self.launches.iter().map(|(_, _, ep)| ep.clone()).collect()
    }

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

    /// Every started process, for resource readings: the nodes, the chain, and the
    /// database servers under their names (PostgreSQL's data may be outside the run
    /// directory).
    fn watched(&self) -> Vec<stats::Watched> {
        let in_run_dir = |p: &Proc| stats::Watched {
            name: p.name.clone(),
            pid: p.pid,
            data_dir: self.run_dir.join(&p.name),
        };
        let pg = self.postgres.as_ref().map(|pg| stats::Watched {
            name: pg.proc.name.clone(),
            pid: pg.proc.pid,
            data_dir: pg.data.clone(),
        });
        let etcd = self.etcd.iter().flat_map(|e| &e.procs).map(in_run_dir);
        self.nodes
            .iter()
            .chain(self.chain.as_ref())
            .chain(self.toxiproxy.as_ref())
            .map(in_run_dir)
            .chain(pg)
            .chain(etcd)
            .collect()
    }

    fn ports(&self, count: usize) -> Result<Vec<u16>, RuntimeError> {
        free_ports(count).map_err(|source| RuntimeError::Io {
            path: self.run_dir.clone(),
            source,
        })
    }
}

#[async_trait]
impl super::Starts for LocalRuntime {
    async fn start_chain(
        &mut self,
        spec: &ChainSpec,
        mining_addr: &str,
    ) -> Result<ChainEndpoint, RuntimeError> {
        let driver = crate::chain::driver(spec.kind);
        let what = format!("the chain ({})", driver.binary());
        let binary = find_binary(
            spec.binary.as_deref(),
            driver.binary(),
            &what,
            driver.build_hint(),
        )?;
        let dir = self.dir_for(CHAIN_NAME)?;
        let zmq = driver.ports().zmq.is_some();
        let ports = self.ports(if zmq { 4 } else { 2 })?;
        let addr = |i: usize| format!("127.0.0.1:{}", ports[i]);
        let (rpc_addr, p2p_listen) = (addr(0), addr(1));
        let zmq = zmq.then(|| (addr(2), addr(3)));
        let (user, pass) = ("lnbench".to_string(), new_password());
        let rpc_cert = if driver.rpc_tls() {
            let cert = dir.join("rpc.cert");
            write_rpc_cert(&cert, &dir.join("rpc.key"))?;
            Some(cert)
        } else {
            None
        };
        let d = dir.display().to_string();
        let launch = ChainLaunch {
            dir: &d,
            rpc_listen: &rpc_addr,
            p2p_listen: &p2p_listen,
            zmq_listen: zmq.as_ref().map(|(b, t)| (b.as_str(), t.as_str())),
            user: &user,
            pass: &pass,
            mining_addr,
        };
        let mut args = driver.args(&launch);
        args.extend(spec.args.iter().cloned());
        write_config_files(&dir, &driver.config_files(&launch))?;
        let log = dir.join("output.log");
        let proc = Proc::spawn(CHAIN_NAME, &what, &binary, &args, log.clone())?;
        self.chain_launch = Some((binary.clone(), args.clone()));
        self.pids.push(proc.pid);
        let pid = proc.pid;
        self.chain = Some(proc);
        self.confine(CHAIN_NAME, self.chain_envelope.clone().as_ref(), pid)?;

        // Nodes run on this machine too: they reach the chain where the tool does.
        let access = ChainAccess {
            kind: spec.kind,
            rpc_addr: rpc_addr.clone(),
            rpc_user: user.clone(),
            rpc_pass: pass.clone(),
            rpc_cert: rpc_cert.as_ref().map(|c| c.display().to_string()),
            zmq_block: zmq.as_ref().map(|(b, _)| format!("tcp://{b}")),
            zmq_tx: zmq.as_ref().map(|(_, t)| format!("tcp://{t}")),
            cli: cli_beside(&binary, driver.cli()),
        };
        let endpoint = ChainEndpoint {
            kind: spec.kind,
            rpc_addr,
            rpc_user: user,
            rpc_pass: pass,
            rpc_cert,
            version: binaries::version_of(&binary).await,
            access,
        };
        let deadline = Instant::now() + CHAIN_READY_TIMEOUT;
        loop {
            if let Some(status) = self.chain.as_mut().and_then(Proc::exited) {
                return Err(RuntimeError::exited(what, status, &log));
            }
            if driver.ready(&endpoint).await {
                return Ok(endpoint);
            }
            if Instant::now() >= deadline {
                return Err(RuntimeError::not_ready(what, CHAIN_READY_TIMEOUT, &log));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    async fn start_nodes(
        &mut self,
        nodes: &[NodeSpec],
        chain: &ChainEndpoint,
    ) -> Result<Vec<NodeEndpoint>, RuntimeError> {
        // Start all, then wait for all: node start-up is mostly waiting, so in parallel.
        let mut endpoints = Vec::with_capacity(nodes.len());
        let first = self.nodes.len();
        if self.postgres.is_none() && shared::postgres::wanted_by(nodes) {
            self.start_postgres(nodes).await?;
        }
        if self.etcd.is_none() && shared::etcd::wanted_by(nodes) {
            self.start_etcd().await?;
        }
        for spec in nodes {
            let driver = crate::node::driver(spec.implementation);
            let what = format!("node {}", spec.name);
            let binary = find_node_binary(spec)?;
            let dir = self.dir_for(&spec.name)?;
            let ports = self.ports(2)?;
            let (d, rpc_addr, p2p_addr) = (
                dir.display().to_string(),
                format!("127.0.0.1:{}", ports[0]),
                format!("127.0.0.1:{}", ports[1]),
            );
            let launch = NodeLaunch {
                name: &spec.name,
                dir: &d,
                rpc_listen: &rpc_addr,
                p2p_listen: &p2p_addr,
                chain: &chain.access,
                binary: Some(&binary),
            };
            let mut args = driver.args(&launch);
            args.extend(spec.args.iter().cloned());
            let mut files = driver.config_files(&launch);
            let etcd = self.etcd.as_ref().zip(shared::etcd::backend(spec));
            if let Some((e, backend)) = etcd {
                config_files::merge(&mut files, backend.config(shared::etcd::USER, &e.password));
            }
            self.postgres_for(spec, &mut args, &mut files).await?;
            write_config_files(&dir, &files)?;
            if let Some((e, backend)) = etcd {
                let host = shared::etcd::host_for(&e.members, self.etcd_nodes);
                self.etcd_nodes += 1;
                args.extend(backend.args_for(&host, &spec.name));
            }
            super::create_chain_wallet(spec, chain).await?;
            let proc = Proc::spawn(&spec.name, &what, &binary, &args, dir.join("output.log"))?;
            self.pids.push(proc.pid);
            self.confine(&spec.name, spec.resources.as_ref(), proc.pid)?;
            let endpoint = NodeEndpoint {
                name: spec.name.clone(),
                implementation: spec.implementation,
                rpc_addr,
                p2p_addr,
                credentials: driver.credentials(&|file| dir.join(file)),
                data_dir: dir.clone(),
                binary: binary.clone(),
                pid: Some(proc.pid),
                payment_engine: spec.payment_engine,
            };
            self.launches.push((binary, args, endpoint.clone()));
            endpoints.push(endpoint);
            self.nodes.push(proc);
        }

        let procs = &mut self.nodes[first..];
        let logs: Vec<PathBuf> = procs.iter().map(|p| p.log.clone()).collect();
        let endpoints_ref = &endpoints;
        super::wait_nodes_ready(
            super::NODE_READY_TIMEOUT,
            endpoints.len(),
            POLL,
            |i| procs[i].exited(),
            |i| async move {
                let ep = &endpoints_ref[i];
                if let Some(missing) = ep.credentials.files().iter().find(|f| !f.exists()) {
                    return Err(format!("{} not written yet", missing.display()));
                }
                crate::node::driver(ep.implementation).ready(ep).await
            },
            |i| (endpoints_ref[i].name.clone(), logs[i].clone()),
        )
        .await?;
        Ok(endpoints)
    }

    /// The node keeps its data dir, ports and flags; its output goes on in the same log.
    async fn restart_node(&mut self, name: &str) -> Result<Restarted, RuntimeError> {
        let unknown = || RuntimeError::UnknownNode { name: name.into() };
        let at = self.nodes.iter().position(|p| p.name == name);
        let launch = self.launches.iter().find(|(_, _, ep)| ep.name == name);
        let (Some(at), Some((binary, args, endpoint))) = (at, launch.cloned()) else {
            return Err(unknown());
        };
        // Out of the list while it is down, so `exited` cannot see the deliberate stop.
        let mut proc = self.nodes.remove(at);
        let asked = Instant::now();
        proc.terminate();
        proc.wait_or_kill(asked + super::RESTART_STOP_DEADLINE)
            .await;
        let stop = asked.elapsed();
        let log = proc.log.clone();
        drop(proc);
        let started_at = Instant::now();
        let proc = Proc::spawn(name, &format!("node {name}"), &binary, &args, log)?;
        self.pids.push(proc.pid);
        self.rejoin(name, proc.pid)?;
        let endpoint = NodeEndpoint {
            pid: Some(proc.pid),
            ..endpoint
        };
        self.nodes.insert(at, proc);
        Ok(Restarted {
            stop,
            started_at,
            endpoint,
        })
    }
}

#[async_trait]
impl Runtime for LocalRuntime {
    fn starts(&mut self) -> Option<&mut dyn super::Starts> {
        Some(self)
    }

    fn log_tail(&self, name: &str, lines: usize) -> String {
        tail(&self.run_dir.join(name).join("output.log"), lines)
    }

    /// A database server that dies ends the run like a node that dies.
    fn exited(&mut self) -> Option<(String, String)> {
        let etcd = self.etcd.iter_mut().flat_map(|e| e.procs.iter_mut());
        self.nodes
            .iter_mut()
            .chain(self.chain.as_mut())
            .chain(etcd)
            .chain(self.toxiproxy.as_mut())
            .find_map(|p| p.exited().map(|status| (p.name.clone(), status)))
    }

    fn snapshots(&self) -> Option<&'static dyn super::Snapshots> {
        Some(&LocalSnapshots)
    }

    async fn down(&mut self) -> Result<(), RuntimeError> {
        // Nodes first: LND can hang on exit while its chain backend is gone.
        let limit = self.stop_deadline;
        let killed = process::stop_all(std::mem::take(&mut self.nodes), limit).await;
        self.killed_at_down.extend(killed);
        let pg = self.postgres.take();
        let pg_data = pg.as_ref().map(|p| p.data.clone());
        let pg_socket = pg.as_ref().map(|p| p.socket_dir.clone());
        let etcd = self.etcd.take().map(|e| e.procs).unwrap_or_default();
        let proxy = self.toxiproxy.take();
        let services = pg.map(|p| p.proc).into_iter().chain(etcd).chain(proxy);
        let killed = process::stop_all(services.collect(), limit).await;
        self.killed_at_down.extend(killed);
        let killed = process::stop_all(self.chain.take().into_iter().collect(), limit).await;
        self.killed_at_down.extend(killed);
        self.remove_cgroups().await;
        // Outside the run directory when PostgreSQL ran as another user.
        if let Some(data) = pg_data.filter(|d| !d.starts_with(&self.run_dir)) {
            let _ = tokio::fs::remove_dir_all(&data).await;
        }
        if let Some(socket_dir) = pg_socket {
            let _ = tokio::fs::remove_dir_all(&socket_dir).await;
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

    fn faults(&mut self) -> Option<&mut dyn super::Faults> {
        Some(self)
    }

    fn measures(&mut self) -> Option<&mut dyn super::Measures> {
        Some(self)
    }

    fn servers(&mut self) -> Option<&mut dyn super::Servers> {
        Some(self)
    }

    fn profiling(&mut self) -> Option<&mut dyn super::Profiling> {
        Some(self)
    }

    fn patient_down(&mut self) -> Option<&mut dyn super::PatientDown> {
        Some(self)
    }
}

#[async_trait]
impl super::Faults for LocalRuntime {
    async fn kill_node(&mut self, name: &str) -> Result<(), RuntimeError> {
        self.kill(name).await
    }

    async fn start_node(&mut self, name: &str) -> Result<Restarted, RuntimeError> {
        self.start_killed(name).await
    }

    async fn pause_node(&mut self, name: &str, paused: bool) -> Result<(), RuntimeError> {
        self.pause(name, paused)
    }

    async fn stop_chain(&mut self, kill: bool) -> Result<Duration, RuntimeError> {
        self.stop_chain_proc(kill).await
    }

    async fn start_chain_again(&mut self) -> Result<Instant, RuntimeError> {
        self.start_chain_proc()
    }
}

#[async_trait]
impl super::Measures for LocalRuntime {
    /// Every started process group from `/proc` (see [`stats`]); the data dir of each
    /// is its directory under the run directory.
    async fn resources(&mut self) -> Vec<crate::metrics::ResourceReading> {
        let watched = self.watched();
        self.stats.read(watched, false).await
    }

    async fn resources_fresh(&mut self) -> Vec<crate::metrics::ResourceReading> {
        let watched = self.watched();
        self.stats.read(watched, true).await
    }

    async fn envelopes(&mut self) -> Vec<crate::metrics::EnvelopeReading> {
        self.envelope_readings()
    }

    /// No engine works for local processes.
    async fn engine_cpu_pct(&mut self) -> Option<f64> {
        None
    }
}

#[async_trait]
impl super::Servers for LocalRuntime {
    fn set_etcd_members(&mut self, members: u32) {
        self.etcd_members = members.max(1);
    }

    fn services(&self) -> Vec<super::Service> {
        let pg = self.postgres.as_ref().map(|pg| super::Service {
            name: pg.proc.name.clone(),
            implementation: "postgresql".into(),
            version: pg.version.clone(),
        });
        let etcd = self.etcd.iter().flat_map(|e| {
            e.procs.iter().map(|p| super::Service {
                name: p.name.clone(),
                implementation: etcd::NAME.into(),
                version: e.version.clone(),
            })
        });
        let proxy = self.toxiproxy.as_ref().map(|p| super::Service {
            name: p.name.clone(),
            implementation: TOXIPROXY_NAME.into(),
            version: self.toxiproxy_version.clone(),
        });
        pg.into_iter().chain(etcd).chain(proxy).collect()
    }

    async fn start_link_proxy(&mut self, ports: usize) -> Result<super::ProxyHost, RuntimeError> {
        self.start_toxiproxy(ports).await
    }
}

#[async_trait]
impl super::Profiling for LocalRuntime {
    async fn host_pid(&mut self, name: &str) -> Option<u32> {
        (self.watched().into_iter())
            .find(|w| w.name == name)
            .map(|w| w.pid)
    }

    fn loopback_port(&self) -> Option<u16> {
        ports::free_ports(1).ok().map(|ports| ports[0])
    }
}

#[async_trait]
impl super::PatientDown for LocalRuntime {
    /// The nodes stopped, their PostgreSQL databases dumped into their data dirs, then
    /// everything else stopped.
    async fn down_for_snapshot(&mut self, limit: Duration) -> Result<Vec<String>, RuntimeError> {
        let killed = process::stop_all(std::mem::take(&mut self.nodes), limit).await;
        let dumped = match &self.postgres {
            Some(pg) => pg.dump_for_snapshot(&self.run_dir).await,
            None => Ok(()),
        };
        let down = self.down().await;
        dumped.and(down).map(|()| killed)
    }

    fn killed_at_down(&self) -> Vec<String> {
        self.killed_at_down.clone()
    }
}

impl Drop for LocalRuntime {
    /// A backstop for panics and early returns: kill every process group now. `down`
    /// is the orderly way; after it there is nothing left to do here.
    fn drop(&mut self) {
        let pg = self.postgres.take().map(|p| p.proc);
        let etcd = self.etcd.take().map(|e| e.procs).unwrap_or_default();
        let mut procs: Vec<Proc> = self
            .nodes
            .drain(..)
            .chain(pg)
            .chain(etcd)
            .chain(self.toxiproxy.take())
            .chain(self.chain.take())
            .collect();
        if procs.is_empty() {
            self.remove_cgroups_now();
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
        self.remove_cgroups_now();
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.run_dir);
        }
    }
}

#[cfg(test)]
mod tests;

/// The local runtime's data directories are the run directory's own.
struct LocalSnapshots;

#[async_trait]
impl super::Snapshots for LocalSnapshots {
    async fn versions(
        &self,
        scenario: &crate::scenario::Scenario,
    ) -> Result<std::collections::BTreeMap<String, String>, RuntimeError> {
        versions(scenario).await
    }

    fn data_root(&self, run_dir: &std::path::Path) -> std::path::PathBuf {
        run_dir.to_path_buf()
    }

    fn written_at_start(&self, scenario: &crate::scenario::Scenario) -> Vec<String> {
        config_files::written_at_start(scenario)
    }
}
