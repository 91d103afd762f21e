//! PostgreSQL for LND nodes whose args select `--db.backend=postgres`, as a container:
//! one per run (`lnbench-<run>-postgres`, labelled like the nodes, on the run's network
//! with the alias `postgres`), one database per node, made with `createdb` run in the
//! container. The image is `lnbench/postgres:<major>`, built by
//! `scripts/build-images.sh` from this machine's PostgreSQL server with its cluster
//! made at build time (user `lnbench`, trust auth for the container and its own
//! network only); no registry has it, so it is never pulled. No port is published:
//! only the nodes on the run's network reach it. Its log goes to
//! `<run dir>/postgres.log`; a server that exits ends the run like a node that exits.
//! Its resources are read like a node's and reported under `services`.

use super::super::RuntimeError;
use super::{DockerRuntime, spec};
use bollard::Docker;
use bollard::query_parameters::ListImagesOptionsBuilder;
use futures::StreamExt;
use std::collections::HashMap;
use std::time::Duration;
use tokio::time::Instant;

/// Container hostname, network alias and log name.
pub const NAME: &str = crate::node::DATABASE_HOST;
const PORT: u16 = 5432;
/// The role the image's cluster was made with (trust auth, no password).
const USER: &str = "lnbench";
const REPOSITORY: &str = "lnbench/postgres";
/// From start to the first database made (the image's cluster already exists).
const READY_TIMEOUT: Duration = Duration::from_secs(60);
const POLL: Duration = Duration::from_millis(250);

/// Arguments to the image's entrypoint (`postgres -D ... -c listen_addresses=* ...`).
pub fn command() -> Vec<String> {
    // Each LND node keeps up to 50 connections by default.
    vec!["-c".into(), "max_connections=500".into()]
}

/// The DSN of node `node`'s database on the run's network.
pub fn dsn(node: &str) -> String {
    format!("postgres://{USER}@{NAME}:{PORT}/{node}?sslmode=disable")
}

/// The image to use among the engine's tags: the highest major version of
/// `lnbench/postgres:<major>`.
pub fn newest(tags: &[String]) -> Option<String> {
    tags.iter()
        .filter_map(|t| {
            let major = t.strip_prefix(REPOSITORY)?.strip_prefix(':')?;
            major.parse::<u32>().ok().map(|m| (m, t))
        })
        .max_by_key(|(m, _)| *m)
        .map(|(_, t)| t.clone())
}

/// The PostgreSQL image the engine has, else an error saying how to build it.
pub async fn image(docker: &Docker) -> Result<String, RuntimeError> {
    let what = "PostgreSQL (a node has --db.backend=postgres)".to_string();
    let filters = HashMap::from([("reference", vec![REPOSITORY])]);
    let options = ListImagesOptionsBuilder::default()
        .filters(&filters)
        .build();
    let listed =
        docker
            .list_images(Some(options))
            .await
            .map_err(|source| RuntimeError::Docker {
                what: format!("listing the {REPOSITORY} images"),
                source,
            })?;
    let tags: Vec<String> = listed.into_iter().flat_map(|i| i.repo_tags).collect();
    newest(&tags).ok_or_else(|| RuntimeError::Image {
        what,
        detail: format!(
            "no {REPOSITORY}:<major> image is present and no registry has it; run \
             scripts/build-images.sh (it needs PostgreSQL's server installed: Debian's \
             postgresql package, which scripts/setup.sh installs)"
        ),
    })
}

/// The container body: on the run's network, no published port, the run's labels.
pub fn body(
    image: &str,
    network: &str,
    labels: HashMap<String, String>,
    envelope: Option<&crate::scenario::Envelope>,
) -> bollard::models::ContainerCreateBody {
    spec::container_body(&spec::ContainerSpec {
        name: NAME,
        image,
        cmd: command(),
        ports: &[],
        network,
        labels,
        envelope,
    })
}

/// Runs `cmd` in the container; its exit code and output.
async fn exec(docker: &Docker, id: &str, cmd: &[&str]) -> Result<(i64, String), String> {
    let exec = docker
        .create_exec(
            id,
            bollard::exec::CreateExecOptions {
                cmd: Some(cmd.to_vec()),
                attach_stdout: Some(true),
                attach_stderr: Some(true),
                ..Default::default()
            },
        )
        .await
        .map_err(|e| e.to_string())?;
    let mut text = Vec::new();
    if let bollard::exec::StartExecResults::Attached { mut output, .. } = docker
        .start_exec(&exec.id, None)
        .await
        .map_err(|e| e.to_string())?
    {
        while let Some(Ok(chunk)) = output.next().await {
            text.extend_from_slice(&chunk.into_bytes());
        }
    }
    let code = docker
        .inspect_exec(&exec.id)
        .await
        .map_err(|e| e.to_string())?
        .exit_code
        .unwrap_or(-1);
    Ok((code, String::from_utf8_lossy(&text).trim().to_string()))
}

impl DockerRuntime {
    /// Creates and starts the run's PostgreSQL container (once), with its log follower
    /// and exit watcher. Its databases are made by [`DockerRuntime::database_for`].
    pub(super) async fn start_postgres(&mut self) -> Result<(), RuntimeError> {
        if self.containers.iter().any(|c| c.name == NAME) {
            return Ok(());
        }
        let image = match &self.images.postgres {
            Some(i) => i.clone(),
            None => image(&self.docker).await?,
        };
        let network = self.ensure_network().await?;
        let container_name = self.object_name(Some(NAME));
        let options = bollard::query_parameters::CreateContainerOptionsBuilder::default()
            .name(&container_name)
            .build();
        let envelope = self.envelope_of(NAME);
        let body = body(&image, &network, self.labels(Some(NAME)), envelope.as_ref());
        let created = self.docker.create_container(Some(options), body).await;
        let created = created.map_err(|e| {
            self.not_ours |= super::cleanup::already_exists(&e);
            Self::err(format!(
                "creating container {container_name} from image {image}"
            ))(e)
        })?;
        self.containers.push(super::Started {
            name: NAME.to_string(),
            id: created.id.clone(),
        });
        // Through `start`: its log, its exit, and its resources like a node's.
        self.start(NAME, &created.id).await?;
        self.services.push(super::super::Service {
            name: NAME.to_string(),
            implementation: "postgresql".into(),
            version: image.rsplit(':').next().unwrap_or_default().to_string(),
        });
        Ok(())
    }

    /// Creates node `node`'s database (retrying while the server starts) and returns
    /// its DSN.
    pub(super) async fn database_for(&self, node: &str) -> Result<String, RuntimeError> {
        let what = format!("PostgreSQL (the database of node {node})");
        let id = self
            .containers
            .iter()
            .find(|c| c.name == NAME)
            .map(|c| c.id.clone())
            .ok_or_else(|| RuntimeError::Image {
                what: what.clone(),
                detail: "the PostgreSQL container was not started".into(),
            })?;
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Some(status) = self.exit_of(NAME) {
                return Err(RuntimeError::exited(what, status, &self.log_path(NAME)));
            }
            let attempt = exec(
                &self.docker,
                &id,
                &["createdb", "-h", "127.0.0.1", "-U", USER, node],
            )
            .await;
            match attempt {
                Ok((0, _)) => return Ok(dsn(node)),
                Ok((_, out)) | Err(out) if Instant::now() >= deadline => {
                    return Err(RuntimeError::NotReady {
                        what,
                        secs: READY_TIMEOUT.as_secs(),
                        why: String::new(),
                        tail: format!(
                            "{}\ncreatedb: {out}",
                            crate::runtime::shared::tail(&self.log_path(NAME), 20)
                        ),
                        log: self.log_path(NAME),
                    });
                }
                _ => tokio::time::sleep(POLL).await,
            }
        }
    }
}

/// Stopped after the nodes, with the chain: LND can hang while its database is gone.
pub(super) fn stops_last(name: &str) -> bool {
    name == NAME || name == crate::chain::CHAIN_NAME
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_container_publishes_nothing_and_carries_the_run_labels() {
        let labels = spec::labels("r1", "s", Some(NAME));
        let body = body("lnbench/postgres:15", "lnbench-r1", labels, None);
        let host = body.host_config.unwrap();
        // Trust auth: nothing may reach it from outside the run's network.
        assert!(host.port_bindings.unwrap_or_default().is_empty());
        assert!(body.exposed_ports.unwrap_or_default().is_empty());
        assert_eq!(host.network_mode.as_deref(), Some("lnbench-r1"));
        let aliases = body.networking_config.unwrap().endpoints_config.unwrap()["lnbench-r1"]
            .aliases
            .clone();
        assert_eq!(aliases, Some(vec!["postgres".to_string()]));
        assert_eq!(body.hostname.as_deref(), Some("postgres"));
        let labels = body.labels.unwrap();
        assert_eq!(labels["lnbench.run"], "r1");
        assert_eq!(labels["lnbench.scenario"], "s");
        assert_eq!(labels["lnbench.node"], "postgres");
        assert_eq!(body.image.as_deref(), Some("lnbench/postgres:15"));
        assert_eq!(
            body.cmd.unwrap(),
            vec!["-c".to_string(), "max_connections=500".into()]
        );
    }

    #[test]
    fn each_node_gets_its_own_database_at_the_postgres_alias() {
        assert_eq!(
            dsn("alice"),
            "postgres://lnbench@postgres:5432/alice?sslmode=disable"
        );
        assert_ne!(dsn("alice"), dsn("bob"));
    }

    #[test]
    fn the_highest_major_version_is_chosen() {
        let tags = |t: &[&str]| t.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            newest(&tags(&[
                "lnbench/postgres:9",
                "lnbench/postgres:15",
                "lnbench/postgres:latest",
                "lnbench/postgresql:99",
                "other/postgres:17"
            ])),
            Some("lnbench/postgres:15".into())
        );
        assert_eq!(newest(&tags(&["lnbench/postgres:dev"])), None);
        assert_eq!(newest(&[]), None);
    }

    #[test]
    fn the_server_stops_after_the_nodes() {
        assert!(stops_last("postgres"));
        assert!(stops_last("chain"));
        assert!(!stops_last("alice"));
    }
}
