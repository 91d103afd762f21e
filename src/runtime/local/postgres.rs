//! PostgreSQL for nodes whose driver asks for it (LND: `--db.backend=postgres`): one server per
//! run, started like any node (its own process group, its log in
//! `<run_dir>/postgres/output.log`, stopped by `down`), one database per node. The
//! system's binaries are used (Debian's `postgresql` package; `scripts/setup.sh`
//! installs it). PostgreSQL refuses to run as root, so under root it runs as the
//! `postgres` user (through `setpriv`), with its data directory in the system temp dir
//! where that user can write.

use super::super::RuntimeError;
use super::process::{Proc, accepts_tcp, tail};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::time::Instant;

const USER: &str = "lnbench";
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// Whether any of `nodes` needs a database from the runtime (its driver says so from
/// its arguments).
pub fn wanted_by(nodes: &[crate::scenario::NodeSpec]) -> bool {
    nodes.iter().any(wants)
}

/// Whether `node` needs a database from the runtime.
pub fn wants(node: &crate::scenario::NodeSpec) -> bool {
    node.database == crate::scenario::Database::Postgres
        || crate::node::driver(node.implementation).wants_postgres(&node.args)
}

/// A running server.
#[derive(Debug)]
pub struct Postgres {
    pub proc: Proc,
    port: u16,
    /// The data directory (outside the run directory when running as root).
    pub data: PathBuf,
    createdb: PathBuf,
    /// As `postgres --version` states it (`15.14`), for the report.
    pub version: String,
}

fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .and_then(|l| l.split_whitespace().nth(2))
            == Some("0")
    })
}

/// `name` on PATH, else in the newest `/usr/lib/postgresql/<version>/bin` (where
/// Debian puts the server binaries).
fn find(name: &str) -> Result<PathBuf, RuntimeError> {
    let on_path = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(name))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let mut debian: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path().join("bin").join(name))
                .collect()
        })
        .unwrap_or_default();
    debian.sort();
    debian.reverse();
    let looked: Vec<PathBuf> = on_path.into_iter().chain(debian).collect();
    looked
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .ok_or_else(|| RuntimeError::BinaryNotFound {
            binary: name.to_string(),
            what: "PostgreSQL (a node has --db.backend=postgres)".into(),
            looked: "PATH and /usr/lib/postgresql/*/bin".into(),
            hint: "install Debian's postgresql package (scripts/setup.sh does)".into(),
        })
}

/// `program args`, under root as the `postgres` user. The change of user clears the
/// parent-death signal the runtime sets on every process it starts, so setpriv sets it
/// again after the change: a SIGKILLed lnbench-tui takes the server down too.
fn command_line(program: &Path, args: &[String]) -> (PathBuf, Vec<String>) {
    if running_as_root() {
        let mut all = vec![
            "--reuid=postgres".to_string(),
            "--regid=postgres".to_string(),
            "--init-groups".to_string(),
            "--pdeathsig=SIGKILL".to_string(),
            "--".to_string(),
            program.display().to_string(),
        ];
        all.extend(args.iter().cloned());
        (PathBuf::from("setpriv"), all)
    } else {
        (program.to_path_buf(), args.to_vec())
    }
}

/// The version `postgres --version` states (`postgres (PostgreSQL) 15.14 (Debian
/// 15.14-0+deb12u1)` -> `15.14`).
async fn version_of(server: &Path) -> String {
    let out = tokio::process::Command::new(server)
        .arg("--version")
        .kill_on_drop(true)
        .output();
    match tokio::time::timeout(Duration::from_secs(10), out).await {
        Ok(Ok(out)) => String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .nth(2)
            .unwrap_or_default()
            .to_string(),
        _ => String::new(),
    }
}

impl Postgres {
    /// Initialises a cluster and starts the server on `port`; `dir` holds its log.
    pub async fn start(dir: &Path, run_name: &str, port: u16) -> Result<Postgres, RuntimeError> {
        let what = "PostgreSQL";
        let (initdb, server, createdb) = (find("initdb")?, find("postgres")?, find("createdb")?);
        let data = if running_as_root() {
            std::env::temp_dir().join(format!("lnbench-pg-{run_name}"))
        } else {
            dir.join("data")
        };
        let log = dir.join("output.log");
        let init_args: Vec<String> = [
            "-D",
            &data.display().to_string(),
            "-U",
            USER,
            "--auth=trust",
            "-E",
            "UTF8",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let (program, args) = command_line(&initdb, &init_args);
        let out = tokio::process::Command::new(&program)
            .args(&args)
            .kill_on_drop(true)
            .output()
            .await
            .map_err(|source| RuntimeError::Spawn {
                what: "initdb".into(),
                binary: program.clone(),
                source,
            })?;
        let _ = std::fs::write(&log, [out.stdout.as_slice(), &out.stderr].concat());
        if !out.status.success() {
            return Err(RuntimeError::Exited {
                what: "initdb (PostgreSQL)".into(),
                status: out.status.to_string(),
                tail: tail(&log, 20),
                log,
            });
        }
        let server_args: Vec<String> = vec![
            "-D".into(),
            data.display().to_string(),
            "-p".into(),
            port.to_string(),
            "-k".into(),
            data.display().to_string(),
            "-c".into(),
            "listen_addresses=127.0.0.1".into(),
            // Each LND node keeps up to 50 connections by default.
            "-c".into(),
            "max_connections=500".into(),
        ];
        let (program, args) = command_line(&server, &server_args);
        let mut proc = Proc::spawn("postgres", what, &program, &args, log.clone())?;
        let addr = format!("127.0.0.1:{port}");
        let deadline = Instant::now() + READY_TIMEOUT;
        while !accepts_tcp(&addr).await {
            if let Some(status) = proc.exited() {
                return Err(RuntimeError::Exited {
                    what: what.into(),
                    status,
                    tail: tail(&log, 20),
                    log,
                });
            }
            if Instant::now() >= deadline {
                return Err(RuntimeError::NotReady {
                    what: what.into(),
                    secs: READY_TIMEOUT.as_secs(),
                    tail: tail(&log, 20),
                    log,
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let version = version_of(&server).await;
        Ok(Postgres {
            proc,
            port,
            data,
            createdb,
            version,
        })
    }

    /// Creates the database of node `name` (retrying while the server finishes
    /// starting) and returns its DSN.
    pub async fn database_for(&self, name: &str) -> Result<String, RuntimeError> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let out = tokio::process::Command::new(&self.createdb)
                .args([
                    "-h",
                    "127.0.0.1",
                    "-p",
                    &self.port.to_string(),
                    "-U",
                    USER,
                    name,
                ])
                .kill_on_drop(true)
                .output()
                .await
                .map_err(|source| RuntimeError::Spawn {
                    what: format!("createdb for node {name}"),
                    binary: self.createdb.clone(),
                    source,
                })?;
            if out.status.success() {
                return Ok(format!(
                    "postgres://{USER}@127.0.0.1:{}/{name}?sslmode=disable",
                    self.port
                ));
            }
            if Instant::now() >= deadline {
                return Err(RuntimeError::NotReady {
                    what: format!("the PostgreSQL database of node {name}"),
                    secs: READY_TIMEOUT.as_secs(),
                    tail: String::from_utf8_lossy(&out.stderr).into_owned(),
                    log: self.proc.log.clone(),
                });
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}
