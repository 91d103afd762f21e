//! PostgreSQL for nodes that ask for it (`database: postgres`, LND's `--db.backend=postgres`): one server per
//! run, started like any node (its own process group, its log in
//! `<run_dir>/postgres/output.log`, stopped by `down`), one database per node. The
//! system's binaries are used (Debian's `postgresql` package; `scripts/setup.sh`
//! installs it). PostgreSQL refuses to run as root, so under root it runs as the
//! `postgres` user (through `setpriv`), with its data directory in the system temp dir
//! where that user can write.
//!
//! The server listens on no TCP port: only on a unix socket in a fresh 0700 directory
//! owned by the server's user, so no other user of the machine can connect to it (its
//! authentication trusts whoever reaches the socket).

use super::super::RuntimeError;
use super::process::Proc;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::time::Instant;

const USER: &str = "lnbench";
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// Refuses a node on PostgreSQL whose client cannot use the local server (Eclair's
/// JDBC driver speaks TCP only; the server listens on a private unix socket only).
pub fn reachable_by(node: &crate::scenario::NodeSpec) -> Result<(), RuntimeError> {
    if super::super::shared::postgres::wants(node)
        && !crate::node::driver(node.implementation).postgres_over_unix_socket()
    {
        return Err(RuntimeError::Unsupported {
            what: format!("node {} ({}) on PostgreSQL", node.name, node.implementation),
            why: "its PostgreSQL client speaks TCP only, and the local runtime's \
                  server listens on a private unix socket only"
                .into(),
            hint: "run it with runtime: docker (the server is a container of the \
                   run), or give it a server of your own in args:"
                .into(),
        });
    }
    Ok(())
}

/// A running server.
#[derive(Debug)]
pub struct Postgres {
    pub proc: Proc,
    port: u16,
    /// The 0700 directory of its unix socket (removed by the runtime's teardown).
    pub socket_dir: PathBuf,
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

/// A DSN over the unix socket in `socket_dir` (libpq's and pgx's `host=` query
/// parameter names a socket directory).
fn socket_dsn(socket_dir: &Path, port: u16, database: &str) -> String {
    format!(
        "postgres://{USER}@/{database}?host={}&port={port}&sslmode=disable",
        socket_dir.display()
    )
}

/// A fresh directory for the server's socket: short (a socket path has at most 107
/// bytes), mode 0700, refused if the path exists, owned by the server's user (that of
/// its initialised data directory `data`).
fn private_socket_dir(data: &Path, port: u16) -> Result<PathBuf, RuntimeError> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let dir = std::env::temp_dir().join(format!("lnbench-pg-{}-{port}", std::process::id()));
    let io = |source| RuntimeError::Io {
        path: dir.clone(),
        source,
    };
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(io)?;
    let owner = std::fs::metadata(data).map_err(io)?;
    if let Err(e) = std::os::unix::fs::chown(&dir, Some(owner.uid()), Some(owner.gid())) {
        let _ = std::fs::remove_dir(&dir);
        return Err(io(e));
    }
    Ok(dir)
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
            return Err(RuntimeError::exited(
                "initdb (PostgreSQL)",
                out.status.to_string(),
                &log,
            ));
        }
        let socket_dir = private_socket_dir(&data, port)?;
        let server_args: Vec<String> = vec![
            "-D".into(),
            data.display().to_string(),
            "-p".into(),
            port.to_string(),
            "-k".into(),
            socket_dir.display().to_string(),
            "-c".into(),
            "listen_addresses=".into(),
            // Each LND node keeps up to 50 connections by default.
            "-c".into(),
            "max_connections=500".into(),
        ];
        let (program, args) = command_line(&server, &server_args);
        let mut proc = Proc::spawn("postgres", what, &program, &args, log.clone())?;
        let socket = socket_dir.join(format!(".s.PGSQL.{port}"));
        let deadline = Instant::now() + READY_TIMEOUT;
        while tokio::net::UnixStream::connect(&socket).await.is_err() {
            if let Some(status) = proc.exited() {
                let _ = std::fs::remove_dir_all(&socket_dir);
                return Err(RuntimeError::exited(what, status, &log));
            }
            if Instant::now() >= deadline {
                return Err(RuntimeError::not_ready(what, READY_TIMEOUT, &log));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let version = version_of(&server).await;
        Ok(Postgres {
            proc,
            port,
            socket_dir,
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
                    &self.socket_dir.display().to_string(),
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
                return Ok(socket_dsn(&self.socket_dir, self.port, name));
            }
            if Instant::now() >= deadline {
                return Err(RuntimeError::NotReady {
                    what: format!("the PostgreSQL database of node {name}"),
                    secs: READY_TIMEOUT.as_secs(),
                    why: String::new(),
                    tail: String::from_utf8_lossy(&out.stderr).into_owned(),
                    log: self.proc.log.clone(),
                });
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_socket_dsn_names_the_directory_port_and_database() {
        assert_eq!(
            socket_dsn(Path::new("/tmp/lnbench-pg-1-5432"), 5432, "alice"),
            "postgres://lnbench@/alice?host=/tmp/lnbench-pg-1-5432&port=5432&sslmode=disable"
        );
    }

    /// The real server (Debian's postgresql, which scripts/setup.sh installs): no TCP
    /// listener, its socket in a fresh 0700 directory, databases created through it.
    #[tokio::test]
    async fn the_server_listens_on_a_private_socket_only() {
        if find("initdb").is_err() {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must have PostgreSQL (scripts/setup.sh installs it)"
            );
            eprintln!("not run: PostgreSQL is not installed");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let port = super::super::ports::free_ports(1).unwrap()[0];
        let run_name = format!("pgtest-{}", std::process::id());
        let mut pg = Postgres::start(dir.path(), &run_name, port).await.unwrap();
        let mode = std::fs::metadata(&pg.socket_dir)
            .unwrap()
            .permissions()
            .mode();
        let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port)).await;
        let dsn = pg.database_for("alice").await;
        // A second server on the same port cannot reuse the socket directory.
        let again = private_socket_dir(&pg.data, port);
        pg.proc.kill_now();
        let _ = std::fs::remove_dir_all(&pg.socket_dir);
        if !pg.data.starts_with(dir.path()) {
            let _ = std::fs::remove_dir_all(&pg.data);
        }
        assert_eq!(mode & 0o777, 0o700);
        assert!(tcp.is_err(), "PostgreSQL accepted TCP on 127.0.0.1:{port}");
        let dsn = dsn.unwrap();
        assert!(dsn.contains(&pg.socket_dir.display().to_string()), "{dsn}");
        assert!(again.is_err(), "an existing socket directory was reused");
    }
}
