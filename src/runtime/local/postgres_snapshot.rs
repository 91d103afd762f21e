//! Snapshots of the nodes' PostgreSQL databases. The server's data lives outside the
//! run directory (under root) and is started afresh by every run, so a snapshot keeps
//! each node's database as a plain SQL dump in that node's data dir
//! ([`DUMP`]), taken once the nodes have stopped and before the server stops; the
//! snapshot's manifest then checks it like any other file. A restored run loads the
//! dump into the node's new database before the node starts, as the role the node logs
//! in as (so it owns its tables again), and removes it, so it is not counted in the
//! node's data dir.

use super::{Postgres, USER, find};
use crate::runtime::RuntimeError;
use std::path::Path;

/// The dump of a node's database, in its data dir.
use crate::runtime::shared::postgres::SNAPSHOT_DUMP as DUMP;

impl Postgres {
    /// The nodes' databases (every database but the server's own).
    async fn databases(&self) -> Result<Vec<String>, RuntimeError> {
        let sql = "SELECT datname FROM pg_database \
                   WHERE NOT datistemplate AND datname <> 'postgres' ORDER BY 1";
        let args = ["-U", USER, "-d", "postgres", "-X", "-A", "-t", "-c", sql];
        let out = self
            .client("psql", "listing the PostgreSQL databases", &args)
            .await?;
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect())
    }

    /// Dumps every node's database into `<run_dir>/<node>/`[`DUMP`]. The nodes must
    /// have stopped: a dump of a database in use is a consistent picture of it, but
    /// not of the node's other files.
    pub async fn dump_for_snapshot(&self, run_dir: &Path) -> Result<(), RuntimeError> {
        for name in self.databases().await? {
            let dir = run_dir.join(&name);
            if !dir.is_dir() {
                continue;
            }
            let to = dir.join(DUMP).display().to_string();
            let what = format!("pg_dump of node {name}'s database");
            let args = [
                "-U",
                USER,
                "--no-owner",
                "--no-privileges",
                "-f",
                &to,
                &name,
            ];
            self.client("pg_dump", &what, &args).await?;
        }
        Ok(())
    }

    /// Loads the dump a restored snapshot left in node `name`'s data dir `dir` into its
    /// (new, empty) database, as `role`, and removes it; nothing without one.
    pub async fn load_snapshot_dump(
        &self,
        name: &str,
        role: &str,
        dir: &Path,
    ) -> Result<(), RuntimeError> {
        let dump = dir.join(DUMP);
        if !dump.is_file() {
            return Ok(());
        }
        let what = format!("loading node {name}'s database from its snapshot");
        let file = dump.display().to_string();
        let args = [
            "-U",
            role,
            "-d",
            name,
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-f",
            &file,
        ];
        self.client("psql", &what, &args).await?;
        std::fs::remove_file(&dump).map_err(|source| RuntimeError::Io { path: dump, source })
    }

    /// Runs `program` (psql, pg_dump) with `args` against the server's socket, its
    /// stdin empty; its output, or the error of `what` with its stderr.
    async fn client(
        &self,
        program: &str,
        what: &str,
        args: &[&str],
    ) -> Result<std::process::Output, RuntimeError> {
        let binary = find(program)?;
        let out = tokio::process::Command::new(&binary)
            .args(["-h", &self.socket_dir.display().to_string()])
            .args(["-p", &self.port.to_string()])
            .args(args)
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output()
            .await
            .map_err(|source| RuntimeError::Spawn {
                what: what.to_string(),
                binary: binary.clone(),
                source,
            })?;
        if out.status.success() {
            return Ok(out);
        }
        Err(RuntimeError::Exited {
            what: what.to_string(),
            status: out.status.to_string(),
            tail: String::from_utf8_lossy(&out.stderr).into_owned(),
            log: self.proc.log.clone(),
        })
    }
}
