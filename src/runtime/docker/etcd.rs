//! etcd for nodes whose driver asks for it (LND: `--db.backend=etcd`), as containers of
//! the run: one server (`etcd`) or the members of `etcd: { members: N }` (`etcd-1` ...),
//! each `lnbench-<run>-<member>` on the run's network with its member name as
//! hostname and alias, labelled like the nodes, started through the runtime's `start`
//! (log follower, exit watcher, stats and size followers: its resources are read like
//! a node's). The image is `lnbench/etcd:<version>`, built by `scripts/build-images.sh`
//! from the etcd binary (never pulled). No port is published: only the nodes on the
//! run's network reach it (plain HTTP, no auth). Data stays in the container's
//! writable layer; it stops after the nodes, with the chain.

use super::super::RuntimeError;
use super::super::shared::etcd::{self as shape, Member};
use super::DockerRuntime;
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
        Ok(cluster)
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
