//! PostgreSQL for LND nodes whose args select `--db.backend=postgres`, as a container:
//! one per run (`lnbench-<run>-postgres`, labelled like the nodes, on the run's network
//! with the alias `postgres`), one database per node, made with `createdb` run in the
//! container. The image is `lnbench/postgres:<major>`, built by
//! `scripts/build-images.sh` from this machine's PostgreSQL server with its cluster
//! made at build time (user `lnbench`); no registry has it, so it is never pulled. Its
//! unix socket (inside the container only: `createdb` and `psql` through `docker exec`)
//! needs no password; every TCP client needs the password the run sets (scram-sha-256),
//! given on psql's stdin, never in an argument. Nodes get it in their DSN, in their
//! config file (never on their command line). No port is published. Its log goes to
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
/// The role the image's cluster was made with; the run gives it its password.
const USER: &str = "lnbench";
const REPOSITORY: &str = "lnbench/postgres";
/// The server's unix socket directory (the image's `unix_socket_directories`).
const SOCKET_DIR: &str = "/tmp";
/// From start to the password set (the image's cluster already exists).
const READY_TIMEOUT: Duration = Duration::from_secs(60);
const POLL: Duration = Duration::from_millis(250);

/// Arguments to the image's entrypoint (`postgres -D ... -c listen_addresses=* ...`).
pub fn command() -> Vec<String> {
    // Each LND node keeps up to 50 connections by default. Each connection's user,
    // database and authentication method go to the server's log (kept with the run).
    ["max_connections=500", "log_connections=on"]
        .into_iter()
        .flat_map(|setting| ["-c".to_string(), setting.to_string()])
        .collect()
}

/// The DSN of node `node`'s database on the run's network, with the run's password
/// (hex: nothing to escape).
pub fn dsn(node: &str, password: &str) -> String {
    format!("postgres://{USER}:{password}@{NAME}:{PORT}/{node}?sslmode=disable")
}

/// What psql reads on its stdin to give the role `password`: the statement is not
/// logged even if it fails (the server's log is saved in the run directory).
fn password_sql(password: &str) -> String {
    format!("SET log_min_error_statement = panic;\nALTER ROLE {USER} PASSWORD '{password}';\n\\q\n")
}

/// Points the launch of a node of `implementation` at its database `dsn` (with the
/// run's password): through its config file, never its command line.
pub(super) fn point_at(
    implementation: crate::node::Implementation,
    dsn: &str,
    configs: &mut Vec<crate::chain::ConfigFile>,
) -> Result<(), RuntimeError> {
    let backend = crate::node::driver(implementation)
        .postgres()
        .ok_or_else(|| RuntimeError::Unsupported {
            what: format!("{implementation} on the docker runtime's PostgreSQL"),
            why: format!("{implementation} has no PostgreSQL backend"),
            hint: "remove database: postgres from its nodes".into(),
        })?;
    let file = backend
        .config(dsn)
        .ok_or_else(|| RuntimeError::Unsupported {
            what: format!("{implementation:?} on the docker runtime's PostgreSQL"),
            why: "its driver cannot write the database's login into its config file, \
                  and the server asks for a password"
                .into(),
            hint: "use runtime: local for it".into(),
        })?;
    super::super::local::config_files::merge(configs, file);
    Ok(())
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

/// psql in the container, over its socket as the superuser, into `database`: quiet,
/// never asking for a password, stopping at the first error.
fn psql(database: &str) -> [&str; 12] {
    [
        "psql",
        "-X",
        "-q",
        "-w",
        "-v",
        "ON_ERROR_STOP=1",
        "-h",
        SOCKET_DIR,
        "-U",
        USER,
        "-d",
        database,
    ]
}

/// Runs `cmd` in the container with `stdin` on its standard input (closed after it);
/// its exit code and output.
async fn exec(
    docker: &Docker,
    id: &str,
    cmd: &[&str],
    stdin: Option<&str>,
) -> Result<(i64, String), String> {
    use tokio::io::AsyncWriteExt;
    let exec = docker
        .create_exec(
            id,
            bollard::exec::CreateExecOptions {
                cmd: Some(cmd.to_vec()),
                attach_stdin: Some(stdin.is_some()),
                attach_stdout: Some(true),
                attach_stderr: Some(true),
                ..Default::default()
            },
        )
        .await
        .map_err(|e| e.to_string())?;
    let mut text = Vec::new();
    if let bollard::exec::StartExecResults::Attached {
        mut output,
        mut input,
    } = docker
        .start_exec(&exec.id, None)
        .await
        .map_err(|e| e.to_string())?
    {
        if let Some(text) = stdin {
            input
                .write_all(text.as_bytes())
                .await
                .map_err(|e| e.to_string())?;
            // End of input (the text also ends psql by itself).
            let _ = input.shutdown().await;
        }
        drop(input);
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
        let password = super::super::shared::new_password();
        let sql = password_sql(&password);
        let psql = psql("postgres");
        let what = "PostgreSQL (setting the run's password)".to_string();
        self.until_done(&created.id, &psql, Some(&sql), what)
            .await?;
        self.postgres_password = Some(password);
        self.services.push(super::super::Service {
            name: NAME.to_string(),
            implementation: "postgresql".into(),
            version: image.rsplit(':').next().unwrap_or_default().to_string(),
        });
        Ok(())
    }

    /// Creates node `node`'s database (over the server's unix socket) and returns its
    /// DSN, with the run's password.
    pub(super) async fn database_for(&self, node: &str) -> Result<String, RuntimeError> {
        let what = format!("PostgreSQL (the database of node {node})");
        let not_started = || RuntimeError::Image {
            what: what.clone(),
            detail: "the PostgreSQL container was not started".into(),
        };
        let id = (self.containers.iter().find(|c| c.name == NAME))
            .map(|c| c.id.clone())
            .ok_or_else(not_started)?;
        let password = self.postgres_password.clone().ok_or_else(not_started)?;
        let createdb = ["createdb", "-h", SOCKET_DIR, "-U", USER, node];
        self.until_done(&id, &createdb, None, what).await?;
        // A restored snapshot's database, before the node's container is made.
        self.load_dump(node).await?;
        Ok(dsn(node, &password))
    }

    /// Runs `cmd` in the server's container until it succeeds (retrying while the
    /// server starts), else the error of `what`.
    async fn until_done(
        &self,
        id: &str,
        cmd: &[&str],
        stdin: Option<&str>,
        what: String,
    ) -> Result<(), RuntimeError> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Some(status) = self.exit_of(NAME) {
                return Err(RuntimeError::exited(what, status, &self.log_path(NAME)));
            }
            let attempt = exec(&self.docker, id, cmd, stdin).await;
            if let Ok((_, out)) | Err(out) = &attempt
                && let Some(stale) = stale_image(&what, cmd[0], out)
            {
                return Err(stale);
            }
            match attempt {
                Ok((0, _)) => return Ok(()),
                Ok((_, out)) | Err(out) if Instant::now() >= deadline => {
                    return Err(RuntimeError::NotReady {
                        what,
                        secs: READY_TIMEOUT.as_secs(),
                        why: String::new(),
                        tail: format!(
                            "{}\n{}: {out}",
                            crate::runtime::shared::tail(&self.log_path(NAME), 20),
                            cmd[0]
                        ),
                        log: self.log_path(NAME),
                    });
                }
                _ => tokio::time::sleep(POLL).await,
            }
        }
    }
}

/// The error for an image built before the runtime ran `tool` in it (the exec's output
/// `out` says the engine found no such file): retrying would not help.
fn stale_image(what: &str, tool: &str, out: &str) -> Option<RuntimeError> {
    out.contains("executable file not found")
        .then(|| RuntimeError::Image {
            what: what.to_string(),
            detail: format!(
                "the {REPOSITORY} image has no {tool} (it was built before the runtime \
                 used it: psql for the run's password, pg_dump for snapshots): rebuild it \
                 with scripts/build-images.sh"
            ),
        })
}

/// Stopped after the nodes, with the chain: LND can hang while its database is gone.
pub(super) fn stops_last(name: &str) -> bool {
    name == NAME || name == crate::chain::CHAIN_NAME
}

mod snapshot;
#[cfg(test)]
mod tests;
