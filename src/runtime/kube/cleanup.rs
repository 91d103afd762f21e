//! Removal of a run's namespace: at the end of a run, from `Drop` after a panic, and
//! for `lnbench-tui down` after a run that was killed. Deleting the namespace deletes
//! everything in it; the cluster takes a few seconds to finish, and removal waits for
//! that, so "removed" means gone.

use super::objects::{ANNOTATION_OWNER, ANNOTATION_RUN, ANNOTATION_TOKEN, LABEL_RUN, LABEL_USER};
use crate::leftovers::{foreign, hostname, is_live_tool, judge, lock};
use crate::runtime::RuntimeError;
use crate::runtime::shared::{Down, Removed};
use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use kube::api::{DeleteParams, ListParams};
use std::time::Duration;
use tokio::time::Instant;

/// How long a namespace may take to go once deleted.
pub const GONE_WITHIN: Duration = Duration::from_secs(120);

fn kube_err(what: impl Into<String>) -> impl FnOnce(kube::Error) -> RuntimeError {
    let what = what.into();
    move |source| RuntimeError::Kube {
        what,
        source: Box::new(source),
    }
}

/// A create refused because the object exists (409 AlreadyExists). The namespace's
/// name holds the run id, so it is another run's: the run fails without deleting it.
pub(super) fn already_exists(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.is_already_exists())
}

fn not_found(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 404)
}

/// Deletes namespace `name` and waits until it is gone (at most `limit`).
pub async fn delete_namespace(
    client: &kube::Client,
    name: &str,
    limit: Duration,
) -> Result<(), RuntimeError> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    match namespaces.delete(name, &DeleteParams::background()).await {
        Ok(_) => {}
        Err(e) if not_found(&e) => return Ok(()),
        Err(e) => return Err(kube_err(format!("deleting namespace {name}"))(e)),
    }
    let deadline = Instant::now() + limit;
    loop {
        match namespaces.get_opt(name).await {
            Ok(None) => return Ok(()),
            Ok(Some(_)) | Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Ok(Some(_)) => {
                return Err(RuntimeError::Unsupported {
                    what: format!("namespace {name}"),
                    why: format!("it was deleted but is still there after {} s", limit.as_secs()),
                    hint: "look at it with kubectl describe namespace; `lnbench-tui down` deletes it again"
                        .into(),
                });
            }
            Err(e) => return Err(kube_err(format!("waiting for namespace {name} to go"))(e)),
        }
    }
}

/// `lnbench-tui down`'s part on the cluster of the current kubeconfig: deletes the
/// namespaces of runs whose tool is gone (or only run `only`'s), as docker's part does
/// with containers. None when no kubeconfig names a cluster.
pub async fn down_all(all: bool, only: Option<&str>) -> Result<Option<Down>, RuntimeError> {
    if !super::configured() {
        return Ok(None);
    }
    let (client, _) = super::connect(None).await?;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let list = namespaces
        .list(&ListParams::default().labels(LABEL_RUN))
        .await
        .map_err(kube_err("listing namespaces"))?;
    let host = hostname();
    let mut down = Down::default();
    for ns in list.items {
        let meta = &ns.metadata;
        let name = meta.name.clone().unwrap_or_default();
        let annotations = meta.annotations.clone().unwrap_or_default();
        let labels = meta.labels.clone().unwrap_or_default();
        let run = (annotations
            .get(ANNOTATION_RUN)
            .or_else(|| labels.get(LABEL_RUN)))
        .cloned()
        .unwrap_or_else(|| name.clone());
        if only.is_some_and(|id| id != run) {
            continue;
        }
        let whose = foreign(labels.get(LABEL_USER).and_then(|u| u.parse().ok()));
        let owner = annotations.get(ANNOTATION_OWNER).map(String::as_str);
        let token = annotations.get(ANNOTATION_TOKEN).map(String::as_str);
        let why = match judge(owner, token, &host, lock::probe_token, is_live_tool).why_kept() {
            _ if all => {
                down.others.extend(whose.map(|w| (run.clone(), w)));
                None
            }
            _ if whose.is_some() => Some(format!("it belongs to {}", whose.unwrap_or_default())),
            why => why,
        };
        if let Some(why) = why {
            down.kept.push((run, why));
            continue;
        }
        delete_namespace(&client, &name, GONE_WITHIN).await?;
        down.removed.push(Removed {
            kind: "namespace",
            name,
            run,
        });
    }
    Ok(Some(down))
}

/// For `Drop` (which cannot await): deletes the run's namespace on a fresh thread
/// with its own async runtime and API connection, waiting at most `limit`.
pub fn delete_blocking(context: Option<String>, namespace: String, limit: Duration) {
    let wait = limit + Duration::from_secs(5);
    let result =
        crate::runtime::shared::block_on_thread("lnbench-kube-cleanup", wait, move || async move {
            let (client, _) = super::connect(context.as_deref()).await?;
            delete_namespace(&client, &namespace, limit).await
        });
    match result {
        Some(Ok(())) => {}
        Some(Err(e)) => crate::runtime::shared::cleanup_left_behind(Some(&e)),
        None => crate::runtime::shared::cleanup_left_behind(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_namespace_is_not_ours() {
        let status = |reason: &str, code| {
            kube::Error::Api(
                kube::core::Status::failure("exists", reason)
                    .with_code(code)
                    .boxed(),
            )
        };
        assert!(already_exists(&status("AlreadyExists", 409)));
        assert!(!already_exists(&status("NotFound", 404)));
        assert!(!already_exists(&status("Conflict", 409)));
    }
}
