//! The fault proxy of a kubernetes run (`links:`, link faults): Toxiproxy's server
//! (toxiproxy-unix, in `lnbench/toxiproxy`, built by scripts/build-images.sh and
//! imported into the cluster, never pulled) in a pod of the run's namespace, behind a
//! ClusterIP Service. Nodes dial the proxies at the Service's address, ports 20000 and
//! up. Its API listens on the pod's loopback only (`-listen 127.0.0.1:8474`): no other
//! pod reaches it, and the tool reaches it through a port-forward with the cluster's
//! credentials, offered on a unix socket in `<run dir>/toxiproxy/api/` (0700), so the
//! links client is the one the other runtimes use.

use super::objects::{self, NODE_CONTAINER};
use super::{KubeRuntime, forward, kube_err, watch};
use crate::runtime::shared::proxy::{WHAT, api_socket};
use crate::runtime::{ProxyHost, ProxyPort, RuntimeError, Service};
use k8s_openapi::api::core::v1::Pod;
use kube::api::PostParams;
use serde_json::json;
use std::time::Duration;
use tokio::time::Instant;

pub use crate::runtime::shared::proxy::IMAGE;
/// Its pod's, Service's and directory's name in the run.
pub const NAME: &str = "toxiproxy";
/// The API's port on the pod's loopback.
const API_PORT: u16 = 8474;
/// The first proxy's port; one port per directed link after it.
const FIRST_PORT: u16 = 20000;
/// The pod is scheduled and its container created before the server answers.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// A user of no account: the server needs no file and no privilege.
const NOBODY: i64 = 65534;

/// The proxy's pod: one container (named as the nodes' are, so the exit watcher sees
/// it stop), listening on the proxies' `ports`, its API on the loopback, never pulled.
pub fn pod(run_id: &str, ports: &[u16]) -> Pod {
    let ports: Vec<_> = (ports.iter())
        .map(|port| json!({ "containerPort": port, "protocol": "TCP" }))
        .collect();
    let mut security = objects::security_context(true);
    security["runAsUser"] = json!(NOBODY);
    security["runAsGroup"] = json!(NOBODY);
    security["runAsNonRoot"] = json!(true);
    let amounts = json!({ "cpu": "100m", "memory": "64Mi" });
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": { "name": NAME, "labels": objects::labels(run_id, NAME) },
        "spec": {
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": objects::GRACE_SECS,
            "enableServiceLinks": false,
            "dnsPolicy": "Default",
            "automountServiceAccountToken": false,
            "containers": [{
                "name": NODE_CONTAINER,
                "image": IMAGE,
                "imagePullPolicy": "Never",
                "args": ["-listen", format!("127.0.0.1:{API_PORT}")],
                "ports": ports,
                "resources": { "requests": amounts },
                "securityContext": security,
            }],
            "securityContext": { "seccompProfile": { "type": "RuntimeDefault" } },
        },
    });
    serde_json::from_value(pod).expect("the proxy's pod matches the API types")
}

/// The proxies' ports for `count` links.
fn proxy_ports(count: usize) -> Vec<u16> {
    (FIRST_PORT..).take(count).collect()
}

impl KubeRuntime {
    /// Starts the proxy's Service and pod with `count` listeners, forwards its API to a
    /// private unix socket and waits until the API answers there.
    pub(super) async fn start_toxiproxy(
        &mut self,
        count: usize,
    ) -> Result<ProxyHost, RuntimeError> {
        self.ensure_namespace().await?;
        let dir = self.cred_dir(NAME)?;
        let api = api_socket(&dir)?;
        let ports = proxy_ports(count);
        let ip = self.service(NAME, &ports).await?;
        (self
            .api::<Pod>()
            .create(&PostParams::default(), &pod(&self.run_id, &ports)))
        .await
        .map_err(kube_err(format!("creating the pod of {NAME} ({IMAGE})")))?;
        self.pods.push(NAME.into());
        self.loggers.push(tokio::spawn(watch::follow_log(
            self.api(),
            NAME.into(),
            self.log_path(NAME),
        )));
        let task = forward::forward_unix(self.api(), NAME.into(), API_PORT, &api)
            .map_err(KubeRuntime::io_err(&api))?;
        self.forwards.push(task);
        let client = crate::links::toxiproxy::Toxiproxy::new(&api).map_err(|e| {
            RuntimeError::Unsupported {
                what: WHAT.into(),
                why: format!("{e:#}"),
                hint: "report this".into(),
            }
        })?;
        let deadline = Instant::now() + READY_TIMEOUT;
        while !client.answers().await {
            if let Some(status) = self.shared.exit_of(NAME) {
                return Err(RuntimeError::exited(WHAT, status, &self.log_path(NAME)));
            }
            if Instant::now() >= deadline {
                return Err(RuntimeError::not_ready_because(
                    WHAT,
                    READY_TIMEOUT,
                    format!(
                        "is {IMAGE} in the cluster? scripts/kube-cluster.sh images imports it \
                         (kubectl -n {} describe pod {NAME})",
                        self.namespace
                    ),
                    &self.log_path(NAME),
                ));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        self.services.push(Service {
            name: NAME.into(),
            implementation: NAME.into(),
            version: IMAGE.rsplit(':').next().unwrap_or_default().into(),
        });
        Ok(ProxyHost {
            api,
            ports: (ports.iter())
                .map(|p| ProxyPort {
                    listen: format!("0.0.0.0:{p}"),
                    dial: format!("{ip}:{p}"),
                })
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The API is on the loopback only, the image never pulled, the proxies' ports
    /// declared, and the server runs unprivileged on a read-only root.
    #[test]
    fn the_pod_keeps_the_api_on_its_loopback_and_never_pulls() {
        let pod = serde_json::to_value(pod("r1", &proxy_ports(2))).unwrap();
        let c = &pod["spec"]["containers"][0];
        assert_eq!(c["name"], NODE_CONTAINER);
        assert_eq!(c["image"], IMAGE);
        assert_eq!(c["imagePullPolicy"], "Never");
        assert_eq!(c["args"], json!(["-listen", "127.0.0.1:8474"]));
        let ports: Vec<_> = (c["ports"].as_array().unwrap().iter())
            .map(|p| p["containerPort"].as_u64().unwrap())
            .collect();
        assert_eq!(ports, [20000, 20001]);
        assert_eq!(c["securityContext"]["runAsNonRoot"], true);
        assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
        assert_eq!(c["securityContext"]["capabilities"]["drop"], json!(["ALL"]));
        assert_eq!(pod["spec"]["containers"].as_array().unwrap().len(), 1);
        assert_eq!(pod["metadata"]["labels"][objects::LABEL_NODE], NAME);
    }
}
