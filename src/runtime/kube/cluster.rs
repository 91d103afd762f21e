//! Reaching the cluster and checking, before anything is created, that it can run the
//! scenario: its images on a cluster node (or pullable), its pins on existing nodes.

use super::{kube_err, objects};
use crate::runtime::RuntimeError;
use crate::runtime::shared;
use crate::runtime::shared::images::{self, Choice, RunImages};
use crate::scenario::{KubeSettings, Scenario};
use k8s_openapi::api::core::v1::Node;
use kube::Api;
use kube::api::ListParams;
use std::path::Path;
use std::time::Duration;

/// How long the API server may take to answer the first request.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// True when a kubeconfig (or the in-cluster service account) may name a cluster.
pub fn configured() -> bool {
    let env_set = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
    env_set("KUBECONFIG")
        || env_set("KUBERNETES_SERVICE_HOST")
        || std::env::var_os("HOME")
            .is_some_and(|h| Path::new(&h).join(".kube").join("config").exists())
}

/// Connects to the cluster of the kubeconfig (its `context`, else the current one; in
/// a pod, the pod's own cluster) and checks that the API server answers. Returns the
/// client and what the report calls the cluster (its address and version).
pub async fn connect(context: Option<&str>) -> Result<(kube::Client, String), RuntimeError> {
    let no = |detail: String| RuntimeError::NoCluster { detail };
    let config = match context {
        None => kube::Config::infer().await.map_err(|e| no(e.to_string()))?,
        Some(c) => kube::Config::from_kubeconfig(&kube::config::KubeConfigOptions {
            context: Some(c.to_string()),
            ..Default::default()
        })
        .await
        .map_err(|e| no(e.to_string()))?,
    };
    let url = config.cluster_url.to_string();
    let client = kube::Client::try_from(config).map_err(|e| no(e.to_string()))?;
    match tokio::time::timeout(CONNECT_TIMEOUT, client.apiserver_version()).await {
        Ok(Ok(v)) => Ok((client, format!("{} at {url}", v.git_version))),
        Ok(Err(e)) => Err(no(format!("{url}: {e}"))),
        Err(_) => Err(no(format!(
            "{url}: no answer in {} s",
            CONNECT_TIMEOUT.as_secs()
        ))),
    }
}

/// What a run on the cluster needs, checked before anything is created.
pub struct Prepared {
    pub(super) client: kube::Client,
    pub(super) cluster: String,
    pub(super) images: RunImages,
    pub(super) settings: KubeSettings,
    pub(super) pull: &'static str,
    /// `resources:` of each node and the chain, by name.
    pub(super) envelopes: Vec<(String, crate::scenario::Envelope)>,
}

/// Checks the cluster and the images: every image the scenario runs (and the file
/// reader's) must be on a cluster node unless the pull policy lets the kubelet pull
/// it; pinned nodes must exist; nodes needing a database server are refused (none is
/// started on a cluster yet).
pub async fn preflight(scenario: &Scenario) -> Result<Prepared, RuntimeError> {
    let settings = scenario.kubernetes.clone().unwrap_or_default();
    if shared::postgres::wanted_by(&scenario.nodes) || shared::etcd::wanted_by(&scenario.nodes) {
        return Err(RuntimeError::Unsupported {
            what: "nodes on PostgreSQL or etcd".into(),
            why: "the kubernetes runtime starts no database server yet".into(),
            hint: "run them with runtime: local or docker".into(),
        });
    }
    let (client, cluster) = connect(settings.context.as_deref()).await?;
    let nodes: Api<Node> = Api::all(client.clone());
    let list = nodes
        .list(&ListParams::default())
        .await
        .map_err(kube_err("listing the cluster's nodes"))?;
    let present: std::collections::HashSet<String> = (list.items.iter())
        .filter_map(|n| n.status.as_ref()?.images.as_ref())
        .flatten()
        .flat_map(|i| i.names.clone().unwrap_or_default())
        .collect();
    let has = |image: &str| present.contains(&objects::full_image_name(image));
    let on_cluster = |e: RuntimeError| match e {
        RuntimeError::Image { what, detail } => RuntimeError::Image {
            what,
            detail: format!(
                "{detail}; on kubernetes the image must be on a cluster node \
                 (scripts/kube-cluster.sh images imports the local ones)"
            ),
        },
        other => other,
    };
    let pick = |c: &images::Candidates| -> Result<String, RuntimeError> {
        match images::choose(c, scenario.pull, &has).map_err(on_cluster)? {
            Choice::Use(i) | Choice::Pull(i) => Ok(i),
        }
    };
    let (chain, node_candidates) = images::candidates(scenario);
    let images = RunImages {
        chain: pick(&chain)?,
        nodes: (node_candidates.iter())
            .map(|(name, c)| pick(c).map(|i| (name.clone(), i)))
            .collect::<Result<_, _>>()?,
        postgres: None,
    };
    if !has(objects::FILES_IMAGE) && scenario.pull == crate::scenario::PullPolicy::Never {
        return Err(RuntimeError::Image {
            what: "the file reader beside each node".into(),
            detail: format!(
                "{} is on no cluster node: scripts/kube-cluster.sh builds and imports it; \
                 on another cluster load it there (see docs/kubernetes.md)",
                objects::FILES_IMAGE
            ),
        });
    }
    let hosts: Vec<String> = (list.items.iter())
        .filter_map(|n| n.metadata.name.clone())
        .collect();
    if let Some((node, host)) = settings.pin.iter().find(|(_, h)| !hosts.contains(h)) {
        return Err(RuntimeError::Unsupported {
            what: format!("pinning node {node}"),
            why: format!(
                "the cluster has no node {host} (it has {})",
                hosts.join(", ")
            ),
            hint: "fix kubernetes: pin: in the scenario".into(),
        });
    }
    Ok(Prepared {
        client,
        cluster,
        images,
        pull: objects::pull_policy(scenario.pull),
        settings,
        envelopes: envelopes(scenario),
    })
}

/// The envelope of each node and the chain that has one.
fn envelopes(scenario: &Scenario) -> Vec<(String, crate::scenario::Envelope)> {
    let chain =
        (scenario.resources.chain.clone()).map(|e| (crate::chain::CHAIN_NAME.to_string(), e));
    (scenario.nodes.iter())
        .filter_map(|n| Some((n.name.clone(), n.resources.clone()?)))
        .chain(chain)
        .collect()
}

impl crate::runtime::Prepared for Prepared {
    fn create(self: Box<Self>, at: &crate::runtime::Place<'_>) -> Box<dyn crate::runtime::Runtime> {
        Box::new(super::KubeRuntime::new(
            *self,
            at.run_id,
            at.scenario,
            at.run_dir.to_path_buf(),
            at.keep,
        ))
    }
}

/// Checks the cluster and the images ([`preflight`]).
pub(super) fn prepare(
    scenario: &Scenario,
) -> futures::future::BoxFuture<'_, anyhow::Result<Box<dyn crate::runtime::Prepared>>> {
    Box::pin(async move {
        let prepared = preflight(scenario).await?;
        Ok(Box::new(prepared) as Box<dyn crate::runtime::Prepared>)
    })
}
