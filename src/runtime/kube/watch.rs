//! What runs beside a run's pods: one poller that notices a node container that
//! stopped (or cannot start) and reads each pod's CPU, memory, network and data
//! volume from the kubelet's summary API (through the API server), and a log follower
//! per pod.

use super::objects::{LABEL_RUN, NODE_CONTAINER, label_value};
use crate::metrics::ResourceReading;
use k8s_openapi::api::core::v1::{ContainerStateTerminated, ContainerStatus, Pod};
use kube::Api;
use kube::api::{ListParams, LogParams};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// How often the poller looks at the pods and reads the summary.
const POLL: Duration = Duration::from_secs(1);
/// Waiting reasons after which a container will not start by itself.
const STUCK: &[&str] = &[
    "ErrImageNeverPull",
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
    "CrashLoopBackOff",
];

/// What the poller shares with the runtime. Never locked across an await.
#[derive(Default)]
pub struct Shared {
    /// `(pod, why)` of node containers that stopped or cannot start, first first.
    pub exited: Mutex<Vec<(String, String)>>,
    pub latest: Mutex<HashMap<String, ResourceReading>>,
    /// Set when the summary API could not be read: resources are not measured.
    pub unmeasured: AtomicBool,
    /// Deliberate restarts asked per pod: restarts beyond them are deaths.
    pub restarts_asked: Mutex<HashMap<String, i32>>,
}

impl Shared {
    /// Counts a deliberate restart of `pod`, before its node is signalled.
    pub fn ask_restart(&self, pod: &str) {
        let mut asked = self
            .restarts_asked
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        *asked.entry(pod.to_string()).or_default() += 1;
    }

    fn restarts_asked(&self, pod: &str) -> i32 {
        let asked = self
            .restarts_asked
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        asked.get(pod).copied().unwrap_or(0)
    }

    pub fn exit_of(&self, pod: &str) -> Option<String> {
        let exited = self.exited.lock().unwrap_or_else(|e| e.into_inner());
        exited
            .iter()
            .find(|(n, _)| n == pod)
            .map(|(_, s)| s.clone())
    }
}

/// The node container's status in `pod`.
pub fn node_status(pod: &Pod) -> Option<&ContainerStatus> {
    let statuses = pod.status.as_ref()?.container_statuses.as_ref()?;
    statuses.iter().find(|c| c.name == NODE_CONTAINER)
}

/// Why the node container of `pod` stopped or cannot start, if it did. The kubelet
/// starts a container that ended again (restartPolicy Always, so that a node keeps its
/// data over a restart); of its `asked` restarts, the last may be under way (its
/// container terminated, not started yet), and any beyond them was a death.
pub fn stopped(pod: &Pod, asked: i32) -> Option<String> {
    let status = pod.status.as_ref()?;
    if status.phase.as_deref() == Some("Failed") && status.container_statuses.is_none() {
        let reason = status.reason.clone().unwrap_or_else(|| "Failed".into());
        let message = status.message.clone().unwrap_or_default();
        return Some(format!("pod {reason}: {message}"));
    }
    let c = node_status(pod)?;
    let exit = |t: &ContainerStateTerminated| {
        let reason = t.reason.clone().unwrap_or_default();
        format!("exit code {} ({reason})", t.exit_code)
    };
    if c.restart_count > asked {
        let last = c.last_state.as_ref().and_then(|s| s.terminated.as_ref());
        return Some(last.map_or_else(|| "it was restarted by the kubelet".into(), exit));
    }
    let state = c.state.as_ref()?;
    if let Some(t) = &state.terminated
        && c.restart_count == asked
    {
        return Some(exit(t));
    }
    let waiting = state.waiting.as_ref()?;
    let reason = waiting.reason.as_deref().unwrap_or_default();
    // The kubelet's back-off before a restart asked for (a second kill or restart).
    if reason == "CrashLoopBackOff" && c.restart_count < asked {
        return None;
    }
    STUCK.contains(&reason).then(|| {
        format!(
            "it cannot start: {reason}: {}",
            waiting.message.clone().unwrap_or_default()
        )
    })
}

/// Polls the run's pods in `namespace` until aborted: exits into `shared.exited`,
/// readings into `shared.latest` (keyed by pod name).
pub async fn poll(
    client: kube::Client,
    namespace: String,
    run_id: String,
    shared: std::sync::Arc<Shared>,
) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), &namespace);
    let selector = format!("{LABEL_RUN}={}", label_value(&run_id));
    let mut reported: HashSet<String> = HashSet::new();
    loop {
        let mut hosts: HashSet<String> = HashSet::new();
        if let Ok(list) = pods.list(&ListParams::default().labels(&selector)).await {
            for pod in &list.items {
                let name = pod.metadata.name.clone().unwrap_or_default();
                if let Some(host) = pod.spec.as_ref().and_then(|s| s.node_name.clone()) {
                    hosts.insert(host);
                }
                if let Some(why) = stopped(pod, shared.restarts_asked(&name))
                    && reported.insert(name.clone())
                {
                    (shared.exited.lock().unwrap_or_else(|e| e.into_inner())).push((name, why));
                }
            }
        }
        for host in hosts {
            match summary(&client, &host).await {
                Ok(summary) => {
                    let readings = readings(&summary, &namespace);
                    let mut latest = shared.latest.lock().unwrap_or_else(|e| e.into_inner());
                    for r in readings {
                        latest.insert(r.name.clone(), r);
                    }
                }
                Err(_) => shared.unmeasured.store(true, Ordering::Relaxed),
            }
        }
        tokio::time::sleep(POLL).await;
    }
}

/// The kubelet's summary of cluster node `host` (`/stats/summary` through the API
/// server's node proxy).
async fn summary(client: &kube::Client, host: &str) -> Result<serde_json::Value, String> {
    let request = http::Request::get(format!("/api/v1/nodes/{host}/proxy/stats/summary"))
        .body(Vec::new())
        .map_err(|e| e.to_string())?;
    let text = client
        .request_text(request)
        .await
        .map_err(|e| format!("the kubelet summary of {host}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("the kubelet summary of {host}: {e}"))
}

/// One reading per pod of `namespace` in a kubelet summary: the node container's CPU
/// (the kubelet's rate over its last two samples) and working set, the pod's network
/// bytes, and the used bytes of its `data` volume.
pub fn readings(summary: &serde_json::Value, namespace: &str) -> Vec<ResourceReading> {
    let empty = Vec::new();
    let pods = summary["pods"].as_array().unwrap_or(&empty);
    pods.iter()
        .filter(|p| p["podRef"]["namespace"] == namespace)
        .filter_map(|p| {
            let name = p["podRef"]["name"].as_str()?.to_string();
            let containers = p["containers"].as_array()?;
            let node = containers.iter().find(|c| c["name"] == NODE_CONTAINER)?;
            let data = (p["volume"].as_array().unwrap_or(&empty).iter())
                .find(|v| v["name"] == "data")
                .and_then(|v| v["usedBytes"].as_u64());
            Some(ResourceReading {
                name,
                cpu_pct: node["cpu"]["usageNanoCores"]
                    .as_u64()
                    .map(|n| n as f64 / 1e7),
                mem_bytes: node["memory"]["workingSetBytes"].as_u64(),
                net_rx_bytes: p["network"]["rxBytes"].as_u64(),
                net_tx_bytes: p["network"]["txBytes"].as_u64(),
                data_dir_bytes: data,
                ..ResourceReading::default()
            })
        })
        .collect()
}

/// Follows the node container's log of `pod` into `path` until the pod is gone,
/// waiting for the container to start first.
pub async fn follow_log(pods: Api<Pod>, pod: String, path: PathBuf) {
    let params = LogParams {
        container: Some(NODE_CONTAINER.into()),
        follow: true,
        ..LogParams::default()
    };
    let Ok(mut file) = tokio::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .await
    else {
        return;
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(300);
    let stream = loop {
        match pods.log_stream(&pod, &params).await {
            Ok(stream) => break stream,
            Err(_) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            Err(_) => return,
        }
    };
    let mut lines = std::pin::pin!(futures::AsyncBufReadExt::lines(stream));
    while let Some(Ok(line)) = futures::StreamExt::next(&mut lines).await {
        if file.write_all(line.as_bytes()).await.is_err() || file.write_all(b"\n").await.is_err() {
            return;
        }
    }
    let _ = file.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn readings_take_the_node_container_and_the_data_volume_of_the_runs_pods() {
        let summary = json!({
            "node": { "nodeName": "n1" },
            "pods": [
                {
                    "podRef": { "name": "alice", "namespace": "lnbench-r" },
                    "containers": [
                        { "name": "files", "cpu": { "usageNanoCores": 1 }, "memory": { "workingSetBytes": 5 } },
                        { "name": "node", "cpu": { "usageNanoCores": 250_000_000u64 }, "memory": { "workingSetBytes": 123_456u64 } }
                    ],
                    "network": { "rxBytes": 10, "txBytes": 20 },
                    "volume": [ { "name": "config", "usedBytes": 9 }, { "name": "data", "usedBytes": 4096 } ]
                },
                {
                    "podRef": { "name": "other", "namespace": "kube-system" },
                    "containers": [ { "name": "node" } ]
                }
            ]
        });
        let r = readings(&summary, "lnbench-r");
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].name, "alice");
        assert_eq!(r[0].cpu_pct, Some(25.0));
        assert_eq!(r[0].mem_bytes, Some(123_456));
        assert_eq!(r[0].data_dir_bytes, Some(4096));
        assert_eq!((r[0].net_rx_bytes, r[0].net_tx_bytes), (Some(10), Some(20)));
        assert_eq!(r[0].disk_write_bytes, None);
    }

    fn pod(status: serde_json::Value) -> Pod {
        serde_json::from_value(json!({ "metadata": { "name": "bob" }, "status": status })).unwrap()
    }

    #[test]
    fn a_terminated_or_stuck_node_container_is_an_exit() {
        let running = pod(json!({ "phase": "Running", "containerStatuses": [
            { "name": "node", "image": "i", "imageID": "", "ready": true, "restartCount": 0, "state": { "running": {} } }
        ]}));
        assert_eq!(stopped(&running, 0), None);
        let killed = pod(json!({ "phase": "Failed", "containerStatuses": [
            { "name": "node", "image": "i", "imageID": "", "ready": false, "restartCount": 0,
              "state": { "terminated": { "exitCode": 137, "reason": "Error" } } }
        ]}));
        assert_eq!(
            stopped(&killed, 0).as_deref(),
            Some("exit code 137 (Error)")
        );
        // Killed while a restart was asked: the kubelet starts it again.
        assert_eq!(stopped(&killed, 1), None);
        let never = pod(json!({ "phase": "Pending", "containerStatuses": [
            { "name": "node", "image": "i", "imageID": "", "ready": false, "restartCount": 0,
              "state": { "waiting": { "reason": "ErrImageNeverPull", "message": "image not present" } } }
        ]}));
        let why = stopped(&never, 0).unwrap();
        assert!(
            why.contains("ErrImageNeverPull") && why.contains("not present"),
            "{why}"
        );
        let creating = pod(json!({ "phase": "Pending", "containerStatuses": [
            { "name": "node", "image": "i", "imageID": "", "ready": false, "restartCount": 0,
              "state": { "waiting": { "reason": "ContainerCreating" } } }
        ]}));
        assert_eq!(stopped(&creating, 0), None);
    }

    #[test]
    fn a_restart_nobody_asked_for_is_a_death() {
        let restarted = |count: i32| {
            pod(json!({ "phase": "Running", "containerStatuses": [
                { "name": "node", "image": "i", "imageID": "", "ready": true, "restartCount": count,
                  "state": { "running": {} },
                  "lastState": { "terminated": { "exitCode": 2, "reason": "Error" } } }
            ]}))
        };
        assert_eq!(stopped(&restarted(1), 1), None, "the restart asked for");
        assert_eq!(
            stopped(&restarted(1), 0).as_deref(),
            Some("exit code 2 (Error)")
        );
        assert_eq!(
            stopped(&restarted(2), 1).as_deref(),
            Some("exit code 2 (Error)")
        );
        let ended_again = pod(json!({ "phase": "Running", "containerStatuses": [
            { "name": "node", "image": "i", "imageID": "", "ready": false, "restartCount": 1,
              "state": { "terminated": { "exitCode": 1, "reason": "Error" } } }
        ]}));
        assert_eq!(
            stopped(&ended_again, 1).as_deref(),
            Some("exit code 1 (Error)")
        );
    }

    /// A node killed or restarted on purpose a second time is held back by the
    /// kubelet (CrashLoopBackOff, 10 s at first) before it starts again: while that
    /// restart is the one asked for, it is a wait, not a death.
    #[test]
    fn a_back_off_before_an_asked_restart_is_no_death() {
        let backing_off = pod(json!({ "phase": "Running", "containerStatuses": [
            { "name": "node", "image": "i", "imageID": "", "ready": false, "restartCount": 1,
              "state": { "waiting": { "reason": "CrashLoopBackOff", "message": "back-off 10s" } },
              "lastState": { "terminated": { "exitCode": 137, "reason": "Error" } } }
        ]}));
        assert_eq!(stopped(&backing_off, 2), None, "the second restart asked");
        let why = stopped(&backing_off, 1).expect("no restart pending: a death");
        assert!(why.contains("CrashLoopBackOff"), "{why}");
    }
}
