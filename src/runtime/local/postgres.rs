//! PostgreSQL for nodes that ask for it (`database: postgres`, LND's `--db.backend=postgres`): one server per
//! run, started like any node (its own process group, its log in
//! `<run_dir>/postgres/output.log`, stopped by `down`), one database per node. The
//! system's binaries are used (Debian's `postgresql` package; `scripts/setup.sh`
//! installs it). PostgreSQL refuses to run as root, so under root it runs as the
//! `postgres` user (through `setpriv`), with its data directory in the system temp dir
//! where that user can write.
//!
//! The server listens on a unix socket in a fresh 0700 directory owned by the server's
//! user, so no other user of the machine can connect to it (its authentication trusts
//! whoever reaches the socket). Only when a node's client speaks TCP only (Eclair's JDBC
//! driver) does it also listen on 127.0.0.1, on the same port, where `pg_hba.conf`
//! lets in that node's role alone, to that node's database alone, with a password
//! (SCRAM-SHA-256): a random one per node and run, given to the server as SQL on
//! psql's stdin and to the node in its 0600 config file, on no command line.

use super::super::RuntimeError;
use super::process::Proc;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::time::Instant;

const USER: &str = "lnbench";
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// True when `node` wants the run's server and its client speaks TCP only (Eclair's
/// JDBC driver): the server then listens on loopback TCP for it.
pub fn over_tcp(node: &crate::scenario::NodeSpec) -> bool {
    super::super::shared::postgres::wants(node)
        && (crate::node::driver(node.implementation).postgres())
            .is_some_and(|p| !p.over_unix_socket())
}

/// The `pg_hba.conf` of the run's server: whoever reaches the private socket is
/// trusted (as the socket's directory only lets in the server's user and root); over
/// TCP, from 127.0.0.1 only, each of `tcp_clients` to its own database as its own
/// role with its password; anything else is refused.
fn hba(tcp_clients: &[String]) -> String {
    let mut out = String::from("local all all trust\n");
    for name in tcp_clients {
        let name = quoted(name);
        out.push_str(&format!("host {name} {name} 127.0.0.1/32 scram-sha-256\n"));
    }
    out
}

/// An SQL identifier (and `pg_hba.conf` name), in double quotes, `"` doubled.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The SQL that gives node `name` its role with `password` and makes it the owner of
/// its database (so it may create its tables), for psql's stdin.
fn login_sql(name: &str, password: &str) -> String {
    let (role, literal) = (quoted(name), password.replace('\'', "''"));
    format!(
        "CREATE ROLE {role} LOGIN PASSWORD '{literal}';\n\
         ALTER DATABASE {role} OWNER TO {role};\n"
    )
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
    /// The nodes let in over TCP on 127.0.0.1 (empty: no TCP listener).
    tcp_clients: Vec<String>,
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
    /// With `tcp_clients`, it also listens on 127.0.0.1:`port` for those nodes (see
    /// [`hba`]); without, on its socket only.
    pub async fn start(
        dir: &Path,
        run_name: &str,
        port: u16,
        tcp_clients: &[String],
    ) -> Result<Postgres, RuntimeError> {
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
        let hba_file = data.join("pg_hba.conf");
        std::fs::write(&hba_file, hba(tcp_clients)).map_err(|source| RuntimeError::Io {
            path: hba_file.clone(),
            source,
        })?;
        let listen = if tcp_clients.is_empty() {
            "listen_addresses="
        } else {
            "listen_addresses=127.0.0.1"
        };
        let socket_dir = private_socket_dir(&data, port)?;
        let server_args: Vec<String> = vec![
            "-D".into(),
            data.display().to_string(),
            "-p".into(),
            port.to_string(),
            "-k".into(),
            socket_dir.display().to_string(),
            "-c".into(),
            listen.into(),
            "-c".into(),
            "password_encryption=scram-sha-256".into(),
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
            tcp_clients: tcp_clients.to_vec(),
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

    /// Creates the database of node `name`, a role of that name with a new random
    /// password (a secret of the run) that owns it, and returns the login over TCP.
    /// Refused for a node the server was not started for (no `pg_hba.conf` line).
    pub async fn login_over_tcp(
        &self,
        name: &str,
    ) -> Result<crate::node::driver::PostgresLogin, RuntimeError> {
        if !self.tcp_clients.iter().any(|c| c == name) {
            return Err(RuntimeError::Unsupported {
                what: format!("node {name} on the run's PostgreSQL over TCP"),
                why: "the server was started before it and lets in over TCP only the \
                      nodes it was started with"
                    .into(),
                hint: "start it with the run's first nodes, or give it a server of \
                       your own in args:"
                    .into(),
            });
        }
        self.database_for(name).await?;
        let password = crate::runtime::shared::new_password();
        self.run_sql(
            &format!("the PostgreSQL role of node {name}"),
            &login_sql(name, &password),
        )
        .await?;
        Ok(crate::node::driver::PostgresLogin {
            host: "127.0.0.1".into(),
            port: self.port,
            database: name.to_string(),
            user: name.to_string(),
            password,
        })
    }

    /// Runs `sql` through psql over the socket, as the server's superuser, the
    /// statements on its stdin (never on a command line, which any user may read).
    async fn run_sql(&self, what: &str, sql: &str) -> Result<(), RuntimeError> {
        use std::process::Stdio;
        use tokio::io::AsyncWriteExt;
        let psql = find("psql")?;
        let spawn_error = |source| RuntimeError::Spawn {
            what: what.to_string(),
            binary: psql.clone(),
            source,
        };
        let mut child = tokio::process::Command::new(&psql)
            .args(["-h", &self.socket_dir.display().to_string()])
            .args(["-p", &self.port.to_string(), "-U", USER, "-d", "postgres"])
            .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(spawn_error)?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(sql.as_bytes()).await.map_err(spawn_error)?;
        }
        let out = child.wait_with_output().await.map_err(spawn_error)?;
        if out.status.success() {
            return Ok(());
        }
        Err(RuntimeError::Exited {
            what: format!("psql creating {what}"),
            status: out.status.to_string(),
            tail: String::from_utf8_lossy(&out.stderr).into_owned(),
            log: self.proc.log.clone(),
        })
    }
}

/// The run's server as the local runtime starts it and gives it to nodes.
impl super::LocalRuntime {
    /// Starts the run's server for `nodes` (listening on TCP for those that need it),
    /// in its own directory and resource envelope.
    pub(super) async fn start_postgres(
        &mut self,
        nodes: &[crate::scenario::NodeSpec],
    ) -> Result<(), RuntimeError> {
        let dir = self.dir_for(crate::node::DATABASE_HOST)?;
        let port = self.ports(1)?[0];
        let run_name = self
            .run_dir
            .file_name()
            .map_or("run".into(), |n| n.to_string_lossy().into_owned());
        let tcp_clients: Vec<String> = (nodes.iter().filter(|n| over_tcp(n)))
            .map(|n| n.name.clone())
            .collect();
        let pg = Postgres::start(&dir, &run_name, port, &tcp_clients).await?;
        self.pids.push(pg.proc.pid);
        let (name, pid) = (pg.proc.name.clone(), pg.proc.pid);
        self.postgres = Some(pg);
        self.confine(&name, self.database_envelope.clone().as_ref(), pid)
    }

    /// Points node `spec` at its database, if it wants one: a DSN over the socket among
    /// its `args`, or (a TCP-only client) its login in its config `files`.
    pub(super) async fn postgres_for(
        &self,
        spec: &crate::scenario::NodeSpec,
        args: &mut Vec<String>,
        files: &mut Vec<crate::chain::ConfigFile>,
    ) -> Result<(), RuntimeError> {
        let Some(pg) = (self.postgres.as_ref()).filter(|_| super::shared::postgres::wants(spec))
        else {
            return Ok(());
        };
        let backend = super::shared::postgres::backend(spec)?;
        let role = if over_tcp(spec) {
            let login = pg.login_over_tcp(&spec.name).await?;
            if let Some(file) = backend.config(&login.dsn()) {
                super::config_files::merge(files, file);
            }
            login.user
        } else {
            args.extend(backend.args_for(&pg.database_for(&spec.name).await?));
            USER.to_string()
        };
        // A restored snapshot's database, before the node sees it.
        let dir = self.run_dir.join(&spec.name);
        pg.load_snapshot_dump(&spec.name, &role, &dir).await
    }
}

#[path = "postgres_snapshot.rs"]
mod snapshot;

#[cfg(test)]
#[path = "postgres_tests.rs"]
mod tests;
