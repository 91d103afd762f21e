//! Snapshots of the nodes' databases in the run's PostgreSQL container. The container
//! starts from its image's empty cluster in every run, so a snapshot keeps each node's
//! database as a plain SQL dump beside that node's data (`volumes/<node>/`), taken in
//! the container once the nodes have stopped and before the server stops. A restored
//! run loads the dump into the node's new database before the node's container is
//! made, and drops it from the node's data, so it is not copied into the node.

use super::{NAME, SOCKET_DIR, USER, exec, stale_image};
use crate::runtime::RuntimeError;
use crate::runtime::docker::snapshot::VOLUMES;
use crate::runtime::docker::{DockerRuntime, creds};
use crate::runtime::shared::postgres::SNAPSHOT_DUMP;

/// Where a dump sits in the server's container on its way out or in.
fn in_container(node: &str) -> String {
    format!("{SOCKET_DIR}/lnbench-snapshot-{node}.sql")
}

impl DockerRuntime {
    /// The server's container, if this run started one.
    fn postgres_id(&self) -> Option<String> {
        (self.containers.iter().find(|c| c.name == NAME)).map(|c| c.id.clone())
    }

    /// Runs `cmd` in the server's container once; its output, or the error of `what`.
    async fn in_postgres(
        &self,
        id: &str,
        cmd: &[&str],
        what: &str,
    ) -> Result<String, RuntimeError> {
        let attempt = exec(&self.docker, id, cmd, None).await;
        if let Ok((_, out)) | Err(out) = &attempt
            && let Some(stale) = stale_image(what, cmd[0], out)
        {
            return Err(stale);
        }
        match attempt {
            Ok((0, out)) => Ok(out),
            Ok((code, out)) => Err(RuntimeError::Exited {
                what: what.to_string(),
                status: format!("exit code {code}"),
                tail: out,
                log: self.log_path(NAME),
            }),
            Err(e) => Err(RuntimeError::Exited {
                what: what.to_string(),
                status: "not run".into(),
                tail: e,
                log: self.log_path(NAME),
            }),
        }
    }

    /// Dumps the database of each of `nodes` that has one into `volumes/<node>/`
    /// (copied out already); nothing without a server.
    pub(in crate::runtime::docker) async fn dump_databases(
        &self,
        nodes: &[String],
    ) -> Result<(), RuntimeError> {
        let Some(id) = self.postgres_id() else {
            return Ok(());
        };
        let sql = "SELECT datname FROM pg_database WHERE NOT datistemplate";
        let list = [
            "psql", "-X", "-A", "-t", "-h", SOCKET_DIR, "-U", USER, "-d", "postgres", "-c", sql,
        ];
        let listed = self
            .in_postgres(&id, &list, "listing the PostgreSQL databases")
            .await?;
        let databases: Vec<&str> = listed.lines().map(str::trim).collect();
        for node in nodes.iter().filter(|n| databases.contains(&n.as_str())) {
            let what = format!("pg_dump of node {node}'s database");
            let path = in_container(node);
            let dump = [
                "pg_dump",
                "-h",
                SOCKET_DIR,
                "-U",
                USER,
                "--no-owner",
                "--no-privileges",
                "-f",
                &path,
                node,
            ];
            self.in_postgres(&id, &dump, &what).await?;
            let content = (creds::download(&self.docker, &id, &path).await)
                .map_err(Self::err(format!("copying {what} out")))?;
            let to = self.run_dir.join(VOLUMES).join(node).join(SNAPSHOT_DUMP);
            std::fs::write(&to, content).map_err(Self::io_err(&to))?;
        }
        Ok(())
    }

    /// Loads the dump a restored snapshot holds for node `node` into its (new, empty)
    /// database and drops it from the node's data; nothing without one.
    pub(in crate::runtime::docker) async fn load_dump(
        &self,
        node: &str,
    ) -> Result<(), RuntimeError> {
        let from = self.run_dir.join(VOLUMES).join(node).join(SNAPSHOT_DUMP);
        if !from.is_file() {
            return Ok(());
        }
        let what = format!("loading node {node}'s database from its snapshot");
        let id = self.postgres_id().ok_or_else(|| RuntimeError::Image {
            what: what.clone(),
            detail: "the PostgreSQL container was not started".into(),
        })?;
        let content = std::fs::read(&from).map_err(Self::io_err(&from))?;
        let path = in_container(node);
        let archive = creds::pack(&[(path.trim_start_matches('/'), &content, 0o644)])
            .map_err(Self::io_err(&from))?;
        (creds::upload(&self.docker, &id, archive).await)
            .map_err(Self::err(format!("copying {what} in")))?;
        let psql: Vec<&str> = (super::psql(node).into_iter())
            .chain(["-f", path.as_str()])
            .collect();
        self.in_postgres(&id, &psql, &what).await?;
        // The copy in the server's /tmp goes with its container at the run's end.
        std::fs::remove_file(&from).map_err(Self::io_err(&from))
    }
}
