//! Snapshots in the docker runtime. Each container keeps its data in `/data` of its
//! writable layer; for a snapshot the stopped containers' `/data` comes out through
//! the engine's archive API into `<run dir>/volumes/<name>/`, laid out as a local
//! run's data dirs, and a run restored from one finds the same directory and copies
//! it into each container after it is created, before its config files and its start.

use super::shared::container::{CHAIN_CERT_IN_NODE, DATA, chain_command, node_command};
use super::{DockerRuntime, RuntimeError, images};
use crate::chain::CHAIN_NAME;
use bollard::query_parameters::{DownloadFromContainerOptionsBuilder, StopContainerOptionsBuilder};
use futures::StreamExt;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Under the run dir: the containers' data dirs, saved or to restore.
pub const VOLUMES: &str = "volumes";

/// The exit code of a container stopped by SIGKILL (128 + 9).
const KILLED: i64 = 137;

impl DockerRuntime {
    /// Stops the nodes (SIGTERM, SIGKILL after `limit`), then the chain, and copies
    /// each one's `/data` out into the run dir's [`VOLUMES`], with its PostgreSQL
    /// database's dump if it has one. Returns the nodes that had to be killed.
    pub(super) async fn stop_and_copy_out(
        &mut self,
        limit: Duration,
    ) -> Result<Vec<String>, RuntimeError> {
        let nodes: Vec<String> = self.endpoints.iter().map(|e| e.name.clone()).collect();
        let order: Vec<(String, String)> = (nodes.iter().map(String::as_str))
            .chain([CHAIN_NAME])
            .filter_map(|n| {
                let c = self.containers.iter().find(|c| c.name == n)?;
                Some((c.name.clone(), c.id.clone()))
            })
            .collect();
        let secs = i32::try_from(limit.as_secs()).unwrap_or(i32::MAX);
        let mut killed = Vec::new();
        for (name, id) in &order {
            let stop = StopContainerOptionsBuilder::default().t(secs).build();
            (self.docker.stop_container(id, Some(stop)).await)
                .map_err(Self::err(format!("stopping the container of {name}")))?;
            let state = (self.docker.inspect_container(id, None).await)
                .map_err(Self::err(format!("inspecting the container of {name}")))?
                .state;
            if state.and_then(|s| s.exit_code) == Some(KILLED) && name != CHAIN_NAME {
                killed.push(name.clone());
            }
        }
        let volumes = self.run_dir.join(VOLUMES);
        for (name, id) in &order {
            self.copy_out(name, id, &volumes).await?;
        }
        // The PostgreSQL container runs until `down`: the nodes' databases come out now.
        self.dump_databases(&nodes).await?;
        Ok(killed)
    }

    /// Unpacks the container's `/data` into `volumes/<name>/`, through an archive file
    /// beside it (a node's data after a long history is hundreds of MB: never held in
    /// memory).
    async fn copy_out(&self, name: &str, id: &str, volumes: &Path) -> Result<(), RuntimeError> {
        std::fs::create_dir_all(volumes).map_err(Self::io_err(volumes))?;
        let tar_path = volumes.join(format!(".{name}.tar"));
        let what = format!("copying the data of {name} out");
        let downloaded = self.download_archive(id, DATA, &tar_path, &what).await;
        let unpacked = downloaded.and_then(|()| {
            std::fs::File::open(&tar_path)
                .and_then(|archive| unpack_data(archive, volumes, name))
                .map_err(Self::io_err(volumes))
        });
        let _ = std::fs::remove_file(&tar_path);
        unpacked
    }

    /// Copies a restored snapshot's data dir of `name`, if this run has one, into its
    /// created (not started) container, through an archive file.
    pub(super) async fn copy_in_restored(&self, name: &str, id: &str) -> Result<(), RuntimeError> {
        let volumes = self.run_dir.join(VOLUMES);
        let dir = volumes.join(name);
        if !dir.is_dir() {
            return Ok(());
        }
        let tar_path = volumes.join(format!(".{name}.in.tar"));
        let packed = std::fs::File::create(&tar_path)
            .and_then(|file| pack_data(&dir, file).map(drop))
            .map_err(Self::io_err(&tar_path));
        let what = format!("copying the snapshot's data of {name} in");
        let uploaded = match packed {
            Ok(()) => self.upload_archive(id, &tar_path, &what).await,
            Err(e) => Err(e),
        };
        let _ = std::fs::remove_file(&tar_path);
        uploaded
    }

    /// Streams the engine's archive of `path` in container `id` into the file `to`.
    pub(super) async fn download_archive(
        &self,
        id: &str,
        path: &str,
        to: &Path,
        what: &str,
    ) -> Result<(), RuntimeError> {
        let options = DownloadFromContainerOptionsBuilder::default()
            .path(path)
            .build();
        let mut file = (tokio::fs::File::create(to).await).map_err(Self::io_err(to))?;
        let mut chunks = self.docker.download_from_container(id, Some(options));
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(Self::err(what))?;
            file.write_all(&chunk).await.map_err(Self::io_err(to))?;
        }
        file.flush().await.map_err(Self::io_err(to))
    }

    /// Streams the archive file `from` into container `id`, unpacked at its `/`.
    pub(super) async fn upload_archive(
        &self,
        id: &str,
        from: &Path,
        what: &str,
    ) -> Result<(), RuntimeError> {
        // A snapshot's file: never a FIFO to wait on.
        let file = crate::files::open_regular(from).map_err(Self::io_err(from))?;
        let file = tokio::fs::File::from_std(file);
        let options = bollard::query_parameters::UploadToContainerOptionsBuilder::default()
            .path("/")
            .build();
        let body = bollard::body_try_stream(file_chunks(file));
        (self
            .docker
            .upload_to_container(id, Some(options), body)
            .await)
            .map_err(Self::err(what))
    }
}

/// The file's content as a stream of chunks of at most 1 MiB.
fn file_chunks(
    file: tokio::fs::File,
) -> impl futures::Stream<Item = std::io::Result<bytes::Bytes>> + Send + 'static {
    futures::stream::try_unfold(file, |mut file| async move {
        let mut chunk = vec![0; 1 << 20];
        let n = file.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        chunk.truncate(n);
        Ok(Some((bytes::Bytes::from(chunk), file)))
    })
}

/// Unpacks an archive of `/data` (entries `data/...`) into `volumes/<name>/`, in place
/// of what is there (the data a restored run copied into the container at its start).
pub fn unpack_data(archive: impl std::io::Read, volumes: &Path, name: &str) -> std::io::Result<()> {
    let scratch = volumes.join(format!(".{name}"));
    std::fs::create_dir_all(&scratch)?;
    tar::Archive::new(archive).unpack(&scratch)?;
    let data = scratch.join(DATA.trim_start_matches('/'));
    let into = volumes.join(name);
    if !data.is_dir() {
        std::fs::create_dir_all(&data)?;
    }
    if into.exists() {
        std::fs::remove_dir_all(&into)?;
    }
    std::fs::rename(&data, &into)?;
    std::fs::remove_dir_all(&scratch)
}

/// A tar archive of `dir` as `data/...`, to unpack at `/` of a container, written
/// into `into`.
pub fn pack_data<W: std::io::Write>(dir: &Path, into: W) -> std::io::Result<W> {
    let mut builder = tar::Builder::new(into);
    builder.follow_symlinks(false);
    builder.append_dir_all(DATA.trim_start_matches('/'), dir)?;
    builder.into_inner()
}

/// The files the docker runtime copies into the chain's and each node's `/data` at
/// every start (with that run's passwords), as `<name>/<path>`: a snapshot leaves
/// them out, and the run it is restored into copies them in again.
pub fn written_at_start(scenario: &crate::scenario::Scenario) -> Vec<String> {
    let (_, chain_files) = chain_command(scenario.chain.kind, "", "", "");
    let mut out: Vec<String> = (chain_files.iter())
        .map(|f| f.path.to_string())
        .chain(["rpc.cert".to_string(), "rpc.key".to_string()])
        .map(|p| format!("{CHAIN_NAME}/{p}"))
        .collect();
    let access = crate::chain::ChainAccess::unset(scenario.chain.kind);
    let cert = CHAIN_CERT_IN_NODE
        .trim_start_matches(DATA)
        .trim_start_matches('/');
    for spec in &scenario.nodes {
        let (_, files) = node_command(spec.implementation, &spec.name, &access);
        (out.extend(files.iter().map(|f| format!("{}/{}", spec.name, f.path))));
        out.push(format!("{}/{cert}", spec.name));
        if crate::runtime::shared::postgres::wants(spec) {
            // A node that wants a database has a PostgreSQL backend (validation).
            let noted = (crate::node::driver(spec.implementation).postgres())
                .map(|p| p.address_files())
                .unwrap_or_default();
            out.extend(noted.iter().map(|f| format!("{}/{f}", spec.name)));
        }
    }
    out
}

/// The images a docker run of `scenario` starts, as snapshots keep them: `chain` and
/// each node's name to `image (id)`, or `image (not present)`.
pub async fn versions(
    scenario: &crate::scenario::Scenario,
) -> Result<BTreeMap<String, String>, RuntimeError> {
    let docker = super::connect().await?;
    let (run, _) = images::plan(&docker, scenario).await?;
    let mut out = BTreeMap::new();
    let named = std::iter::once((CHAIN_NAME.to_string(), run.chain.clone()));
    for (name, image) in named.chain(run.nodes.iter().cloned()) {
        let id = match docker.inspect_image(&image).await {
            Ok(i) => i.id.unwrap_or_default(),
            Err(_) => "not present".to_string(),
        };
        out.insert(name, format!("{image} ({id})"));
    }
    Ok(out)
}

/// The docker runtime's data directories are the containers' volumes, under the run
/// directory's [`VOLUMES`].
pub(super) struct DockerSnapshots;

#[async_trait::async_trait]
impl crate::runtime::Snapshots for DockerSnapshots {
    async fn versions(
        &self,
        scenario: &crate::scenario::Scenario,
    ) -> Result<BTreeMap<String, String>, RuntimeError> {
        versions(scenario).await
    }

    fn data_root(&self, run_dir: &Path) -> std::path::PathBuf {
        run_dir.join(VOLUMES)
    }

    fn written_at_start(&self, scenario: &crate::scenario::Scenario) -> Vec<String> {
        written_at_start(scenario)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_packed_from_a_dir_unpacks_into_the_same_tree() {
        let tmp = tempfile::tempdir().unwrap();
        let from = tmp.path().join("alice");
        std::fs::create_dir_all(from.join("graph/regtest")).unwrap();
        std::fs::write(from.join("graph/regtest/channel.db"), b"channels").unwrap();
        std::fs::write(from.join("tls.cert"), b"cert").unwrap();
        let archive = pack_data(&from, Vec::new()).unwrap();
        let mut names: Vec<String> = (tar::Archive::new(&archive[..]).entries().unwrap())
            .map(|e| e.unwrap().path().unwrap().display().to_string())
            .collect();
        names.sort();
        assert!(names.iter().all(|n| n.starts_with("data")), "{names:?}");
        assert!(names.contains(&"data/graph/regtest/channel.db".to_string()));

        let volumes = tmp.path().join("volumes");
        unpack_data(&archive[..], &volumes, "alice").unwrap();
        let back = volumes.join("alice/graph/regtest/channel.db");
        assert_eq!(std::fs::read(back).unwrap(), b"channels");
        assert_eq!(
            std::fs::read(volumes.join("alice/tls.cert")).unwrap(),
            b"cert"
        );
        assert!(!volumes.join(".alice").exists(), "the scratch dir is gone");
    }

    #[test]
    fn data_unpacked_over_a_restored_dir_replaces_it() {
        let tmp = tempfile::tempdir().unwrap();
        let from = tmp.path().join("bob");
        std::fs::create_dir_all(&from).unwrap();
        std::fs::write(from.join("channel.db"), b"after the history").unwrap();
        let archive = pack_data(&from, Vec::new()).unwrap();
        let volumes = tmp.path().join("volumes");
        std::fs::create_dir_all(volumes.join("bob")).unwrap();
        std::fs::write(volumes.join("bob/channel.db"), b"as restored").unwrap();
        std::fs::write(volumes.join("bob/gone.log"), b"only then").unwrap();
        unpack_data(&archive[..], &volumes, "bob").unwrap();
        let db = std::fs::read(volumes.join("bob/channel.db")).unwrap();
        assert_eq!(db, b"after the history");
        assert!(!volumes.join("bob/gone.log").exists());
        assert!(!volumes.join(".bob").exists(), "the scratch dir is gone");
    }

    #[test]
    fn an_archive_without_data_leaves_an_empty_dir() {
        let tmp = tempfile::tempdir().unwrap();
        let archive = tar::Builder::new(Vec::new()).into_inner().unwrap();
        unpack_data(&archive[..], tmp.path(), "chain").unwrap();
        assert!(tmp.path().join("chain").is_dir());
    }
}
