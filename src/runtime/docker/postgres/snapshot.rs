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
use std::path::Path;

/// Writes the first regular file of the archive file `archive` to `to`.
fn first_file_into(archive: &Path, to: &Path) -> std::io::Result<()> {
    let archive = std::fs::File::open(archive)?;
    let copied = creds::copy_first_file(archive, &mut std::fs::File::create(to)?);
    if copied.is_err() {
        let _ = std::fs::remove_file(to);
    }
    copied
}

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
        let list: Vec<&str> = (super::psql("postgres").into_iter())
            .chain(["-A", "-t", "-c", sql])
            .collect();
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
            // Through an archive file: a database after a long history is large.
            let node_dir = self.run_dir.join(VOLUMES).join(node);
            let tar_path = node_dir.join(format!(".{SNAPSHOT_DUMP}.tar"));
            let copied = self
                .download_archive(&id, &path, &tar_path, &format!("copying {what} out"))
                .await;
            let to = node_dir.join(SNAPSHOT_DUMP);
            let extracted =
                copied.and_then(|()| first_file_into(&tar_path, &to).map_err(Self::io_err(&to)));
            let _ = std::fs::remove_file(&tar_path);
            extracted?;
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
        let path = in_container(node);
        let tar_path = from.with_extension("sql.tar");
        let packed = std::fs::File::create(&tar_path)
            .and_then(|file| {
                let mut tar = tar::Builder::new(file);
                tar.append_path_with_name(&from, path.trim_start_matches('/'))?;
                tar.into_inner().map(drop)
            })
            .map_err(Self::io_err(&tar_path));
        let uploaded = match packed {
            Ok(()) => (self.upload_archive(&id, &tar_path, &format!("copying {what} in"))).await,
            Err(e) => Err(e),
        };
        let _ = std::fs::remove_file(&tar_path);
        uploaded?;
        let psql: Vec<&str> = (super::psql(node).into_iter())
            .chain(["-f", path.as_str()])
            .collect();
        self.in_postgres(&id, &psql, &what).await?;
        // The copy in the server's /tmp goes with its container at the run's end.
        std::fs::remove_file(&from).map_err(Self::io_err(&from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dump_comes_out_of_its_archive_and_an_empty_archive_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let archive = tmp.path().join("dump.tar");
        let sql = b"CREATE TABLE t (x int);\n";
        // A directory entry (tmp/) comes first, as the engine's archive has one.
        std::fs::write(
            &archive,
            creds::pack(&[("tmp/dump.sql", sql, 0o644)]).unwrap(),
        )
        .unwrap();
        let to = tmp.path().join(SNAPSHOT_DUMP);
        first_file_into(&archive, &to).unwrap();
        assert_eq!(std::fs::read(&to).unwrap(), sql);

        let empty = tmp.path().join("empty.tar");
        tar::Builder::new(std::fs::File::create(&empty).unwrap())
            .into_inner()
            .unwrap();
        let e = first_file_into(&empty, &tmp.path().join("none")).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    }
}
