//! etcd for nodes whose driver asks for it (LND: `--db.backend=etcd`), as containers of
//! the run: one server (`etcd`) or the members of `etcd: { members: N }` (`etcd-1` ...),
//! each `lnbench-<run>-<member>` on the run's network with its member name as
//! hostname and alias, labelled like the nodes, started through the runtime's `start`
//! (log follower, exit watcher, stats and size followers: its resources are read like
//! a node's). The image is `lnbench/etcd:<version>`, built by `scripts/build-images.sh`
//! from the etcd binary (never pulled). No port is published: only the nodes on the
//! run's network reach it (plain HTTP). Once the members serve, the run turns etcd's
//! user auth on with a password of its own (from the host, through the run's bridge);
//! the nodes get it in their config files, never on a command line. Data stays in the container's
//! writable layer; it stops after the nodes, with the chain.

use super::super::RuntimeError;
use super::super::shared::etcd::{self as shape, Member};
use super::DockerRuntime;
use crate::chain::ConfigFile;
use crate::scenario::NodeSpec;
use bollard::Docker;
use bollard::query_parameters::ListImagesOptionsBuilder;
use std::collections::HashMap;
use std::time::Duration;
use tokio::time::Instant;

const REPOSITORY: &str = "lnbench/etcd";
const CLIENT_PORT: u16 = 2379;
const PEER_PORT: u16 = 2380;
/// Where a member keeps its data inside its container.
const DATA_DIR: &str = "/data/etcd";
/// What a member logs once it serves clients (it has joined a cluster with a leader):
/// the zap logger's words, then the older logger's.
const READY_LINES: &[&str] = &["serving client traffic", "ready to serve client requests"];
const READY_TIMEOUT: Duration = Duration::from_secs(60);
const POLL: Duration = Duration::from_millis(200);

/// The members of a cluster of `members` on the run's network.
pub fn cluster(members: u32) -> Vec<Member> {
    shape::member_names(members)
        .into_iter()
        .map(|name| Member {
            client: format!("{name}:{CLIENT_PORT}"),
            peer: format!("{name}:{PEER_PORT}"),
            bind: "0.0.0.0".into(),
            name,
        })
        .collect()
}

/// The image's version tag: `lnbench/etcd:3.4.23` -> `3.4.23`.
fn version_of(tag: &str) -> Option<Vec<u32>> {
    let version = tag.strip_prefix(REPOSITORY)?.strip_prefix(':')?;
    version.split('.').map(|p| p.parse().ok()).collect()
}

/// The image to use among the engine's tags: the highest version of
/// `lnbench/etcd:<version>`.
pub fn newest(tags: &[String]) -> Option<String> {
    tags.iter()
        .filter_map(|t| version_of(t).map(|v| (v, t)))
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, t)| t.clone())
}

/// The etcd image the engine has, else an error saying how to build it.
pub async fn image(docker: &Docker) -> Result<String, RuntimeError> {
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
        what: "etcd (a node has --db.backend=etcd)".into(),
        detail: format!(
            "no {REPOSITORY}:<version> image is present and no registry has it; run \
             scripts/build-images.sh (it needs the etcd server: Debian's etcd-server \
             package, which scripts/setup.sh installs)"
        ),
    })
}

/// Stopped after the nodes, with the chain: LND can hang while its database is gone.
pub(super) fn stops_last(name: &str) -> bool {
    super::postgres::stops_last(name)
        || name == shape::NAME
        || name
            .strip_prefix(shape::NAME)
            .and_then(|rest| rest.strip_prefix('-'))
            .is_some_and(|n| n.parse::<u32>().is_ok())
}

impl DockerRuntime {
    /// Creates and starts the run's etcd members (once) and waits until each serves
    /// clients. Returns the members, for [`shape::host_for`].
    pub(super) async fn start_etcd(&mut self) -> Result<Vec<Member>, RuntimeError> {
        let cluster = cluster(self.etcd_members);
        if self.etcd_image.is_some() {
            return Ok(cluster);
        }
        let image = image(&self.docker).await?;
        self.etcd_image = Some(image.clone());
        let version = image.rsplit(':').next().unwrap_or_default().to_string();
        let token = format!("lnbench-{}", self.run_id);
        for member in &cluster {
            let cmd = shape::args(member, &cluster, DATA_DIR, &token);
            let id = self.create(&member.name, &image, cmd, &[]).await?;
            self.start(&member.name, &id).await?;
            self.services.push(super::super::Service {
                name: member.name.clone(),
                implementation: shape::NAME.into(),
                version: version.clone(),
            });
        }
        let deadline = Instant::now() + READY_TIMEOUT;
        for member in &cluster {
            let what = format!("etcd member {}", member.name);
            loop {
                if let Some(status) = self.exit_of(&member.name) {
                    return Err(RuntimeError::exited(
                        what,
                        status,
                        &self.log_path(&member.name),
                    ));
                }
                let log = std::fs::read_to_string(self.log_path(&member.name)).unwrap_or_default();
                if READY_LINES.iter().any(|l| log.contains(l)) {
                    break;
                }
                if Instant::now() >= deadline {
                    return Err(RuntimeError::not_ready(
                        what,
                        READY_TIMEOUT,
                        &self.log_path(&member.name),
                    ));
                }
                tokio::time::sleep(POLL).await;
            }
        }
        self.enable_etcd_auth(&cluster[0]).await?;
        Ok(cluster)
    }

    /// Adds etcd's user and password to the config files of `spec`'s node, if it uses
    /// the run's etcd.
    pub(super) fn add_etcd_config(&self, spec: &NodeSpec, configs: &mut Vec<ConfigFile>) {
        let Some((password, backend)) = (self.etcd_password.as_deref()).zip(shape::backend(spec))
        else {
            return;
        };
        let file = backend.config(shape::USER, password);
        super::super::local::config_files::merge(configs, file);
    }

    /// Turns the cluster's authentication on through `first` (at its address on the
    /// run's network, which the host reaches through the bridge) with a new password
    /// of the run, kept for the nodes' config files.
    async fn enable_etcd_auth(&mut self, first: &Member) -> Result<(), RuntimeError> {
        let what = format!("etcd member {}", first.name);
        let id = (self.containers.iter())
            .find(|c| c.name == first.name)
            .map(|c| c.id.clone())
            .unwrap_or_default();
        let ip = self
            .network_ip(&id)
            .await
            .ok_or_else(|| RuntimeError::Unsupported {
                what: what.clone(),
                why: "the engine told no address of it on the run's network".into(),
                hint: "the host must reach the run's bridge network".into(),
            })?;
        let password = super::super::shared::new_password();
        shape::enable_auth(&format!("{ip}:{CLIENT_PORT}"), &password)
            .await
            .map_err(|why| RuntimeError::Unsupported {
                what,
                why: format!("turning its authentication on failed: {why}"),
                hint: "an etcd of version 3.4 or later is needed".into(),
            })?;
        self.etcd_password = Some(password);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_reached_by_their_names_on_the_run_network() {
        let all = cluster(3);
        assert_eq!(shape::host_for(&all, 1), "etcd-2:2379");
        let args = shape::args(&all[0], &all, DATA_DIR, "t");
        assert!(
            args.contains(&"http://0.0.0.0:2379".to_string()),
            "{args:?}"
        );
        assert!(args.contains(&"http://etcd-1:2379".to_string()), "{args:?}");
        assert_eq!(shape::host_for(&cluster(1), 1), "etcd:2379");
    }

    #[test]
    fn the_highest_version_is_chosen() {
        let tags = |t: &[&str]| t.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            newest(&tags(&[
                "lnbench/etcd:3.4.23",
                "lnbench/etcd:3.5.12",
                "lnbench/etcd:latest",
                "lnbench/etcdx:9.9.9",
            ])),
            Some("lnbench/etcd:3.5.12".into())
        );
        assert_eq!(newest(&tags(&["lnbench/etcd:dev"])), None);
    }

    /// The run's etcd holds LND's wallet and macaroon root key: a client on the host
    /// reaching the container through the run's bridge without the run's password can
    /// neither write nor read a key.
    #[tokio::test]
    async fn a_client_on_the_host_without_the_credentials_is_refused() {
        let Ok(docker) = super::super::connect().await else {
            eprintln!("not run: no Docker engine answers");
            return;
        };
        if image(&docker).await.is_err() {
            eprintln!("not run: no lnbench/etcd image (scripts/build-images.sh)");
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let images = super::super::RunImages {
            chain: String::new(),
            nodes: Vec::new(),
            postgres: None,
        };
        let run = format!("etcd-auth-{:08x}", rand::random::<u32>());
        let mut rt = DockerRuntime::new(docker, images, &run, "t", tmp.path().into(), false);
        let started = rt.start_etcd().await;
        let id = rt.containers.iter().find(|c| c.name == shape::NAME);
        let ip = match id {
            Some(c) => rt.network_ip(&c.id).await,
            None => None,
        };
        let ask = |path: &'static str, body: &'static str| {
            let addr = format!("{}:{CLIENT_PORT}", ip.clone().unwrap_or_default());
            async move { shape::post(&addr, path, body, None).await }
        };
        // key "k", value "v" (base64).
        let put = ask("/v3/kv/put", r#"{"key":"aw==","value":"dg=="}"#).await;
        let range = ask("/v3/kv/range", r#"{"key":"aw=="}"#).await;
        super::super::Runtime::down(&mut rt).await.unwrap();
        started.unwrap();
        assert!(ip.is_some(), "the member has no address on the run network");
        let put = put.unwrap();
        assert!(
            !put.starts_with("HTTP/1.1 200") && !put.starts_with("HTTP/1.0 200"),
            "a put without credentials was accepted: {put}"
        );
        let range = range.unwrap();
        assert!(
            !range.starts_with("HTTP/1.1 200") && !range.starts_with("HTTP/1.0 200"),
            "a read without credentials was answered: {range}"
        );
    }

    #[test]
    fn members_stop_after_the_nodes() {
        assert!(stops_last("etcd"));
        assert!(stops_last("etcd-2"));
        assert!(stops_last("postgres"));
        assert!(stops_last("chain"));
        assert!(!stops_last("alice"));
        assert!(!stops_last("etcd-alice"));
    }
}
