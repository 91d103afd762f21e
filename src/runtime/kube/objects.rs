//! The Kubernetes objects of a run, as plain data: its namespace, and per node (and
//! for the chain) a Secret with its config files, a ClusterIP Service for its ports and
//! a Pod. The pod runs the node's image (`node` container, the same command line as
//! in Docker, data in an emptyDir at `/data`) beside a small `files` container
//! (busybox) through which the runtime reads the credentials the node writes.

use crate::chain::ConfigFile;
use k8s_openapi::api::core::v1::{Namespace, Pod, Secret, Service};
use serde_json::json;
use std::collections::BTreeMap;

/// Labels and annotations every object of a run carries. Label values are limited
/// (63 characters, no `/`), so the owner and the full run id are annotations.
pub const LABEL_RUN: &str = "lnbench.run";
pub const LABEL_NODE: &str = "lnbench.node";
pub const LABEL_USER: &str = "lnbench.user";
pub const ANNOTATION_RUN: &str = "lnbench.run/id";
pub const ANNOTATION_OWNER: &str = "lnbench.run/owner";
pub const ANNOTATION_SCENARIO: &str = "lnbench.run/scenario";
/// The token whose lock the run's lnbench-tui holds (see `leftovers::lock`); empty when
/// it has none.
pub const ANNOTATION_TOKEN: &str = "lnbench.run/token";

/// The node's container, and the file reader beside it.
pub const NODE_CONTAINER: &str = "node";
pub const FILES_CONTAINER: &str = "files";
/// The reader's image (`scripts/kube-cluster.sh` builds it from Debian's busybox).
pub const FILES_IMAGE: &str = "lnbench/busybox:1";
/// Data directory inside the node container (as in Docker).
pub const DATA: &str = "/data";
/// Seconds a pod gets to stop on SIGTERM before it is killed.
pub const GRACE_SECS: i64 = 5;

/// `s` cut to what a label value may be: at most 63 of `[A-Za-z0-9-_.]`, starting and
/// ending with a letter or digit.
pub fn label_value(s: &str) -> String {
    let kept: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .take(63)
        .collect();
    kept.trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_string()
}

/// The namespace of run `run_id` (`lnbench-<run id>` in the characters a namespace
/// name allows; its tail, which holds the start time and pid, is kept when cut).
pub fn namespace_for(run_id: &str) -> String {
    let cleaned: String = run_id
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9') => c,
            _ => '-',
        })
        .collect();
    let room = 63 - "lnbench-".len();
    let tail = if cleaned.len() > room {
        &cleaned[cleaned.len() - room..]
    } else {
        &cleaned[..]
    };
    format!("lnbench-{}", tail.trim_matches('-'))
}

/// Who made a run's namespace, for `down`.
#[derive(Debug, Clone)]
pub struct Owner<'a> {
    pub run_id: &'a str,
    pub scenario: &'a str,
    /// `<hostname>/<pid>`.
    pub owner: &'a str,
    /// The token of the owner's lock, if it has one.
    pub token: Option<&'a str>,
    pub uid: u32,
}

pub fn namespace(name: &str, who: &Owner) -> Namespace {
    let mut ns = json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": name,
            "labels": {
                LABEL_RUN: label_value(who.run_id),
                LABEL_USER: who.uid.to_string(),
            },
            "annotations": {
                ANNOTATION_RUN: who.run_id,
                ANNOTATION_OWNER: who.owner,
                ANNOTATION_SCENARIO: who.scenario,
            },
        },
    });
    if let Some(token) = who.token {
        ns["metadata"]["annotations"][ANNOTATION_TOKEN] = json!(token);
    }
    from(ns)
}

pub fn labels(run_id: &str, node: &str) -> serde_json::Value {
    json!({ LABEL_RUN: label_value(run_id), LABEL_NODE: node })
}

/// The Secret of `name`'s config files (and certificates), with the key each file
/// has in it (`f0`, `f1`, ...), as [`pod`] mounts them.
pub fn secret(run_id: &str, name: &str, files: &[ConfigFile]) -> Secret {
    let data: BTreeMap<String, String> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (format!("f{i}"), f.content.clone()))
        .collect();
    from(json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": { "name": format!("{name}-config"), "labels": labels(run_id, name) },
        "type": "Opaque",
        "stringData": data,
    }))
}

/// A ClusterIP Service for `ports` of `name`'s pod: the stable address peers and the
/// nodes reach it at.
pub fn service(run_id: &str, name: &str, ports: &[u16]) -> Service {
    let ports: Vec<_> = ports
        .iter()
        .map(|p| json!({ "name": format!("p{p}"), "port": p, "targetPort": p, "protocol": "TCP" }))
        .collect();
    from(json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": { "name": name, "labels": labels(run_id, name) },
        "spec": {
            "type": "ClusterIP",
            "selector": { LABEL_RUN: label_value(run_id), LABEL_NODE: name },
            "ports": ports,
        },
    }))
}

/// What a pod runs and where.
#[derive(Debug, Clone)]
pub struct PodSpec<'a> {
    pub run_id: &'a str,
    pub name: &'a str,
    pub image: &'a str,
    /// `Always`, `IfNotPresent` or `Never`.
    pub pull: &'a str,
    pub args: &'a [String],
    pub ports: &'a [u16],
    /// Paths (under [`DATA`]) of the files in the pod's Secret, in its key order.
    pub files: &'a [String],
    /// Prefer a cluster node of its own (anti-affinity to the run's other pods).
    pub spread: bool,
    /// The cluster node it must run on.
    pub pin: Option<&'a str>,
    /// Its share (`resources:`): requests = limits (the file reader's too), so the pod
    /// is Guaranteed; without one, small requests and no limits.
    pub envelope: Option<&'a crate::scenario::Envelope>,
}

/// The node's requests without an envelope (no limits then).
const DEFAULT_CPU_REQUEST: &str = "100m";
const DEFAULT_MEMORY_REQUEST: &str = "256Mi";

/// Requests and limits alike for an envelope's CPU and memory (a pod spec cannot pin
/// CPUs: `cpuset:` is left to the kubelet's CPU manager).
fn resources(envelope: Option<&crate::scenario::Envelope>) -> serde_json::Value {
    let mut amounts = serde_json::Map::new();
    if let Some(e) = envelope {
        if let Some(cpus) = e.cpus {
            amounts.insert(
                "cpu".into(),
                json!(format!("{}m", (cpus * 1000.0).round() as u64)),
            );
        }
        if let Some(bytes) = e.memory_bytes {
            amounts.insert("memory".into(), json!(bytes.to_string()));
        }
    }
    let mut requests = amounts.clone();
    requests
        .entry("cpu")
        .or_insert_with(|| json!(DEFAULT_CPU_REQUEST));
    requests
        .entry("memory")
        .or_insert_with(|| json!(DEFAULT_MEMORY_REQUEST));
    json!({ "requests": requests, "limits": amounts })
}

/// The file reader's share: requests = limits (it sleeps, and runs `cat` now and then).
fn files_resources() -> serde_json::Value {
    let amounts = json!({ "cpu": "50m", "memory": "32Mi" });
    json!({ "requests": amounts, "limits": amounts })
}

/// A container's confinement. Not `runAsNonRoot`: the node images run as root (no
/// `USER`), and the file reader reads the node's root-owned, mode 0600 credentials.
/// With every capability dropped, root in the container is root only over its own
/// files; the two containers' processes (same user, same capabilities) can still
/// signal and read each other, which the restart and the file reader need.
pub fn security_context(read_only_root: bool) -> serde_json::Value {
    json!({
        "privileged": false,
        "allowPrivilegeEscalation": false,
        "capabilities": { "drop": ["ALL"] },
        "seccompProfile": { "type": "RuntimeDefault" },
        "readOnlyRootFilesystem": read_only_root,
    })
}

pub fn pod(p: &PodSpec) -> Pod {
    let mut mounts = vec![json!({ "name": "data", "mountPath": DATA })];
    mounts.extend(p.files.iter().enumerate().map(|(i, path)| {
        json!({
            "name": "config",
            "mountPath": format!("{DATA}/{path}"),
            "subPath": format!("f{i}"),
            "readOnly": true,
        })
    }));
    let ports: Vec<_> = p
        .ports
        .iter()
        .map(|port| json!({ "containerPort": port, "protocol": "TCP" }))
        .collect();
    let mut spec = json!({
        // A node restarted on purpose (its process signalled) comes back in the same
        // pod, with its data volume; an unasked restart is taken for a death (watch.rs).
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": GRACE_SECS,
        "enableServiceLinks": false,
        // Nodes are given addresses, not names: no cluster DNS is needed.
        "dnsPolicy": "Default",
        "automountServiceAccountToken": false,
        // The file reader sees the node's processes (and pid 1 is the pod's pause).
        "shareProcessNamespace": true,
        "containers": [
            {
                "name": NODE_CONTAINER,
                "image": p.image,
                "imagePullPolicy": p.pull,
                "args": p.args,
                "ports": ports,
                "volumeMounts": mounts,
                "resources": resources(p.envelope),
                // The root filesystem stays writable: not every node keeps to its data
                // directory (a JVM writes /tmp, for one).
                "securityContext": security_context(false),
            },
            {
                "name": FILES_CONTAINER,
                "image": FILES_IMAGE,
                "imagePullPolicy": p.pull,
                "command": ["/bin/sleep", "2147483647"],
                "volumeMounts": [{ "name": "data", "mountPath": DATA, "readOnly": true }],
                "resources": files_resources(),
                "securityContext": security_context(true),
            },
        ],
        "securityContext": { "seccompProfile": { "type": "RuntimeDefault" } },
        "volumes": [
            { "name": "data", "emptyDir": {} },
            { "name": "config", "secret": { "secretName": format!("{}-config", p.name), "defaultMode": 0o600 } },
        ],
    });
    if let Some(host) = p.pin {
        spec["nodeSelector"] = json!({ "kubernetes.io/hostname": host });
    }
    if p.spread {
        spec["affinity"] = json!({
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [{
                    "weight": 100,
                    "podAffinityTerm": {
                        "topologyKey": "kubernetes.io/hostname",
                        "labelSelector": { "matchLabels": { LABEL_RUN: label_value(p.run_id) } },
                    },
                }],
            },
        });
    }
    from(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": { "name": p.name, "labels": labels(p.run_id, p.name) },
        "spec": spec,
    }))
}

fn from<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> T {
    serde_json::from_value(value).expect("objects built here match the API types")
}

/// `pull:` as an image pull policy.
pub fn pull_policy(pull: crate::scenario::PullPolicy) -> &'static str {
    match pull {
        crate::scenario::PullPolicy::IfMissing => "IfNotPresent",
        crate::scenario::PullPolicy::Always => "Always",
        crate::scenario::PullPolicy::Never => "Never",
    }
}

/// An image reference as a container runtime lists it: `lnbench/lnd:v1` is
/// `docker.io/lnbench/lnd:v1`, `busybox:1` is `docker.io/library/busybox:1`.
pub fn full_image_name(image: &str) -> String {
    let first = image.split('/').next().unwrap_or_default();
    let has_domain =
        image.contains('/') && (first.contains('.') || first.contains(':') || first == "localhost");
    match (has_domain, image.contains('/')) {
        (true, _) => image.to_string(),
        (false, true) => format!("docker.io/{image}"),
        (false, false) => format!("docker.io/library/{image}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_names_are_dns_labels_that_keep_the_unique_tail() {
        assert_eq!(
            namespace_for("alice-pays-bob-1700000000-42"),
            "lnbench-alice-pays-bob-1700000000-42"
        );
        assert_eq!(namespace_for("My_Run.x-1-2"), "lnbench-my-run-x-1-2");
        let long = format!("{}-1700000000-42", "n".repeat(80));
        let ns = namespace_for(&long);
        assert_eq!(ns.len(), 63, "{ns}");
        assert!(ns.ends_with("-1700000000-42"), "{ns}");
        assert!(crate::scenario::object_name_ok(&ns), "{ns}");
    }

    #[test]
    fn label_values_are_cut_to_what_the_api_takes() {
        assert_eq!(label_value("a/b c"), "a-b-c");
        assert_eq!(label_value(&"x".repeat(70)).len(), 63);
        assert_eq!(label_value("-x-"), "x");
    }

    #[test]
    fn images_get_the_names_a_container_runtime_lists() {
        assert_eq!(
            full_image_name("lnbench/lnd:v0.21.1-beta"),
            "docker.io/lnbench/lnd:v0.21.1-beta"
        );
        assert_eq!(full_image_name("busybox:1"), "docker.io/library/busybox:1");
        assert_eq!(full_image_name("ghcr.io/a/b:1"), "ghcr.io/a/b:1");
        assert_eq!(full_image_name("localhost/a:1"), "localhost/a:1");
    }

    #[test]
    fn a_pod_mounts_its_config_files_and_shares_data_with_the_reader() {
        let args = vec!["--regtest".to_string()];
        let files = vec!["btcd.conf".to_string(), "rpc.key".to_string()];
        let pod = pod(&PodSpec {
            run_id: "r-1",
            name: "chain",
            image: "lnbench/btcd:v0.24.2",
            pull: "Never",
            args: &args,
            ports: &[18556],
            files: &files,
            spread: true,
            pin: Some("worker-1"),
            envelope: None,
        });
        let v = serde_json::to_value(&pod).unwrap();
        let node = &v["spec"]["containers"][0];
        assert_eq!(node["args"], json!(["--regtest"]));
        assert_eq!(node["imagePullPolicy"], "Never");
        assert_eq!(node["volumeMounts"][2]["mountPath"], "/data/rpc.key");
        assert_eq!(node["volumeMounts"][2]["subPath"], "f1");
        assert_eq!(v["spec"]["containers"][1]["image"], FILES_IMAGE);
        assert_eq!(v["spec"]["restartPolicy"], "Always");
        assert_eq!(
            v["spec"]["nodeSelector"]["kubernetes.io/hostname"],
            "worker-1"
        );
        assert_eq!(
            v["spec"]["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
                [0]["podAffinityTerm"]["labelSelector"]["matchLabels"][LABEL_RUN],
            "r-1"
        );
        let unpinned = pod_value(false, None);
        assert!(unpinned["spec"].get("nodeSelector").is_none());
        assert!(unpinned["spec"].get("affinity").is_none());
    }

    fn pod_value(spread: bool, pin: Option<&str>) -> serde_json::Value {
        serde_json::to_value(pod(&PodSpec {
            run_id: "r",
            name: "alice",
            image: "i",
            pull: "IfNotPresent",
            args: &[],
            ports: &[],
            files: &[],
            spread,
            pin,
            envelope: None,
        }))
        .unwrap()
    }

    /// Both containers: no privilege escalation, no capabilities, the runtime's
    /// default seccomp profile; the file reader's root filesystem is read-only.
    #[test]
    fn containers_are_confined() {
        let v = pod_value(false, None);
        assert_eq!(
            v["spec"]["securityContext"]["seccompProfile"]["type"],
            "RuntimeDefault"
        );
        for c in v["spec"]["containers"].as_array().unwrap() {
            let sc = &c["securityContext"];
            assert_eq!(sc["allowPrivilegeEscalation"], false, "{c}");
            assert_eq!(sc["capabilities"]["drop"], json!(["ALL"]), "{c}");
            assert_eq!(sc["seccompProfile"]["type"], "RuntimeDefault", "{c}");
            assert_eq!(sc["privileged"], false, "{c}");
        }
        let files = &v["spec"]["containers"][1];
        assert_eq!(files["name"], FILES_CONTAINER);
        assert_eq!(files["securityContext"]["readOnlyRootFilesystem"], true);
    }

    /// Without an envelope each container still requests a little CPU and memory (and
    /// sets no limit on the node); the file reader's requests equal its limits, so an
    /// enveloped pod is Guaranteed as a whole.
    #[test]
    fn every_container_requests_resources() {
        let v = pod_value(false, None);
        let node = &v["spec"]["containers"][0]["resources"];
        assert_eq!(node["requests"]["cpu"], DEFAULT_CPU_REQUEST, "{node}");
        assert_eq!(node["requests"]["memory"], DEFAULT_MEMORY_REQUEST, "{node}");
        assert_eq!(node["limits"], json!({}), "{node}");
        let files = &v["spec"]["containers"][1]["resources"];
        assert!(files["requests"]["cpu"].is_string(), "{files}");
        assert!(files["requests"]["memory"].is_string(), "{files}");
        assert_eq!(files["requests"], files["limits"], "{files}");
    }

    #[test]
    fn an_envelope_is_requested_and_limited_alike() {
        let envelope = crate::scenario::Envelope {
            cpus: Some(1.5),
            memory_bytes: Some(2 << 30),
            cpuset: None,
        };
        let v = serde_json::to_value(pod(&PodSpec {
            run_id: "r",
            name: "alice",
            image: "i",
            pull: "IfNotPresent",
            args: &[],
            ports: &[],
            files: &[],
            spread: false,
            pin: None,
            envelope: Some(&envelope),
        }))
        .unwrap();
        let r = &v["spec"]["containers"][0]["resources"];
        assert_eq!(r["limits"]["cpu"], "1500m");
        assert_eq!(r["limits"]["memory"], "2147483648");
        assert_eq!(r["requests"], r["limits"]);
        let unlimited = pod_value(false, None);
        assert_eq!(
            unlimited["spec"]["containers"][0]["resources"]["limits"],
            json!({})
        );
    }

    #[test]
    fn secrets_and_services_name_what_the_pod_uses() {
        let s = serde_json::to_value(secret(
            "r",
            "bob",
            &[ConfigFile {
                path: "a/b.conf",
                content: "x=1".into(),
            }],
        ))
        .unwrap();
        assert_eq!(s["metadata"]["name"], "bob-config");
        assert_eq!(s["stringData"]["f0"], "x=1");
        let svc = serde_json::to_value(service("r", "bob", &[10009, 9735])).unwrap();
        assert_eq!(svc["spec"]["selector"][LABEL_NODE], "bob");
        assert_eq!(svc["spec"]["ports"][1]["port"], 9735);
    }
}
