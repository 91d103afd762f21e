//! Removal of everything labelled with a run id: at the end of a run, from `Drop`
//! after a panic, and for `lnbench-tui down` after a run that was killed.

use super::{LABEL_OWNER, LABEL_RUN, LABEL_TOKEN, LABEL_USER, connect};
use crate::leftovers::{foreign, hostname, is_live_tool, judge, lock};
use crate::runtime::RuntimeError;
use crate::runtime::shared::{Down, Removed};
use bollard::Docker;
use bollard::query_parameters::{
    ListContainersOptionsBuilder, ListNetworksOptionsBuilder, ListVolumesOptionsBuilder,
    RemoveContainerOptionsBuilder, RemoveVolumeOptionsBuilder,
};
use std::collections::HashMap;
use std::time::Duration;

fn docker_err(what: &str) -> impl FnOnce(bollard::errors::Error) -> RuntimeError + '_ {
    move |source| RuntimeError::Docker {
        what: what.to_string(),
        source,
    }
}

/// A create refused because an object of that name exists (409). Names hold the run
/// id, so it is another run's: the run fails, and its teardown removes only what it
/// created itself, never by the run label (which would take the other run's).
pub(super) fn already_exists(e: &bollard::errors::Error) -> bool {
    matches!(
        e,
        bollard::errors::Error::DockerResponseServerError {
            status_code: 409,
            ..
        }
    )
}

/// Gone already is fine: someone else removed it first.
fn not_found(e: &bollard::errors::Error) -> bool {
    matches!(
        e,
        bollard::errors::Error::DockerResponseServerError {
            status_code: 404,
            ..
        }
    )
}

/// Everything carrying a label filter, listed once.
struct Labelled {
    containers: Vec<bollard::models::ContainerSummary>,
    networks: Vec<bollard::models::Network>,
    volumes: Vec<bollard::models::Volume>,
}

impl Labelled {
    /// What carries `label` (`lnbench.run` or `lnbench.run=<id>`).
    async fn list(docker: &Docker, label: &str) -> Result<Labelled, RuntimeError> {
        let filters: HashMap<&str, Vec<&str>> = HashMap::from([("label", vec![label])]);
        let containers = docker
            .list_containers(Some(
                ListContainersOptionsBuilder::default()
                    .all(true)
                    .filters(&filters)
                    .build(),
            ))
            .await
            .map_err(docker_err("listing containers"))?;
        let networks = docker
            .list_networks(Some(
                ListNetworksOptionsBuilder::default()
                    .filters(&filters)
                    .build(),
            ))
            .await
            .map_err(docker_err("listing networks"))?;
        let volumes = docker
            .list_volumes(Some(
                ListVolumesOptionsBuilder::default()
                    .filters(&filters)
                    .build(),
            ))
            .await
            .map_err(docker_err("listing volumes"))?;
        Ok(Labelled {
            containers,
            networks,
            volumes: volumes.volumes.unwrap_or_default(),
        })
    }

    /// Every item's labels.
    fn labels(&self) -> impl Iterator<Item = &HashMap<String, String>> {
        (self.containers.iter().filter_map(|c| c.labels.as_ref()))
            .chain(self.networks.iter().filter_map(|n| n.labels.as_ref()))
            .chain(self.volumes.iter().map(|v| &v.labels))
    }

    /// Removes containers (forced, with their anonymous volumes), then networks, then
    /// volumes, except those of runs `keep` names.
    async fn remove(
        self,
        docker: &Docker,
        keep: impl Fn(&str) -> bool,
    ) -> Result<Vec<Removed>, RuntimeError> {
        let run_of = |labels: Option<&HashMap<String, String>>| {
            labels
                .and_then(|l| l.get(LABEL_RUN))
                .cloned()
                .unwrap_or_default()
        };
        let mut removed = Vec::new();
        for c in self.containers {
            let run = run_of(c.labels.as_ref());
            let Some(id) = c.id.as_deref().filter(|_| !keep(&run)) else {
                continue;
            };
            let name = c
                .names
                .as_ref()
                .and_then(|n| n.first())
                .map(|n| n.trim_start_matches('/').to_string())
                .unwrap_or_else(|| id.to_string());
            let options = RemoveContainerOptionsBuilder::default()
                .force(true)
                .v(true)
                .build();
            match docker.remove_container(id, Some(options)).await {
                Ok(()) => {}
                Err(e) if not_found(&e) => continue,
                Err(source) => {
                    return Err(RuntimeError::Docker {
                        what: format!("removing container {name}"),
                        source,
                    });
                }
            }
            removed.push(Removed {
                kind: "container",
                name,
                run,
            });
        }
        for n in self.networks {
            let run = run_of(n.labels.as_ref());
            let Some(name) = n.name.filter(|_| !keep(&run)) else {
                continue;
            };
            match docker.remove_network(&name).await {
                Ok(()) => {}
                Err(e) if not_found(&e) => continue,
                Err(source) => {
                    return Err(RuntimeError::Docker {
                        what: format!("removing network {name}"),
                        source,
                    });
                }
            }
            removed.push(Removed {
                kind: "network",
                name,
                run,
            });
        }
        for v in self.volumes {
            let run = run_of(Some(&v.labels));
            if keep(&run) {
                continue;
            }
            let options = RemoveVolumeOptionsBuilder::default().force(true).build();
            match docker.remove_volume(&v.name, Some(options)).await {
                Ok(()) => {}
                Err(e) if not_found(&e) => continue,
                Err(source) => {
                    return Err(RuntimeError::Docker {
                        what: format!("removing volume {}", v.name),
                        source,
                    });
                }
            }
            removed.push(Removed {
                kind: "volume",
                name: v.name,
                run,
            });
        }
        Ok(removed)
    }
}

/// Removes containers (forced, with their anonymous volumes), then networks, then
/// volumes that carry the run label: of one run (`run = Some(id)`) or of any run.
pub async fn remove_labelled(
    docker: &Docker,
    run: Option<&str>,
) -> Result<Vec<Removed>, RuntimeError> {
    let label = match run {
        Some(id) => format!("{LABEL_RUN}={id}"),
        None => LABEL_RUN.to_string(),
    };
    Labelled::list(docker, &label)
        .await?
        .remove(docker, |_| false)
        .await
}

/// `lnbench-tui down`: removes what runs left behind and returns the list. A run whose
/// lnbench-tui still runs on this host, that was made from another host, or that is
/// another user's, is left alone unless `all`.
pub async fn down_all(all: bool, only: Option<&str>) -> Result<Down, RuntimeError> {
    let docker = connect().await?;
    let label = match only {
        Some(id) => format!("{LABEL_RUN}={id}"),
        None => LABEL_RUN.to_string(),
    };
    let items = Labelled::list(&docker, &label).await?;
    // Each run's owner, from the first of its items that names one.
    // Each run's owner, token and user.
    type Whose<'a> = (Option<&'a str>, Option<&'a str>, Option<u32>);
    let mut owners: HashMap<&str, Whose> = HashMap::new();
    for labels in items.labels() {
        let Some(run) = labels.get(LABEL_RUN) else {
            continue;
        };
        let (owner, token, user) = owners.entry(run).or_default();
        if owner.is_none() {
            *owner = labels.get(LABEL_OWNER).map(String::as_str);
        }
        if token.is_none() {
            *token = labels.get(LABEL_TOKEN).map(String::as_str);
        }
        if user.is_none() {
            *user = labels.get(LABEL_USER).and_then(|u| u.parse().ok());
        }
    }
    let host = hostname();
    let mut kept: Vec<(String, String)> = Vec::new();
    let mut others: Vec<(String, String)> = Vec::new();
    for (run, (owner, token, user)) in owners {
        let whose = foreign(user);
        let judged = judge(owner, token, &host, lock::probe_token, is_live_tool);
        let why = match judged.why_kept() {
            _ if all => {
                others.extend(whose.map(|w| (run.to_string(), w)));
                continue;
            }
            _ if whose.is_some() => format!("it belongs to {}", whose.unwrap_or_default()),
            None => continue,
            Some(why) => why,
        };
        kept.push((run.to_string(), why));
    }
    kept.sort();
    others.sort();
    let removed = items
        .remove(&docker, |run| kept.iter().any(|(k, _)| k == run))
        .await?;
    Ok(Down {
        removed,
        kept,
        others,
    })
}

/// For `Drop` (which cannot await): removes the run's containers and network on a
/// fresh thread with its own async runtime and its own engine connection, waiting
/// at most `limit`. Whatever is left then, `lnbench-tui down` removes.
pub fn remove_run_blocking(run_id: String, limit: Duration) {
    let result = crate::runtime::shared::block_on_thread(
        "lnbench-docker-cleanup",
        limit,
        move || async move {
            let docker = connect().await?;
            remove_labelled(&docker, Some(&run_id)).await
        },
    );
    match result {
        Some(Ok(removed)) if !removed.is_empty() => {
            crate::lines::errln!("removed {} leftovers of the run", removed.len());
        }
        Some(Ok(_)) => {}
        Some(Err(e)) => crate::runtime::shared::cleanup_left_behind(Some(&e)),
        None => crate::runtime::shared::cleanup_left_behind(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conflict_on_create_means_not_ours() {
        let error = |status_code| bollard::errors::Error::DockerResponseServerError {
            status_code,
            message: "Conflict. The container name is already in use".into(),
        };
        assert!(already_exists(&error(409)));
        assert!(!already_exists(&error(404)));
        assert!(!already_exists(&error(500)));
    }
}
