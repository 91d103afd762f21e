//! `runtime: kubernetes` and its `kubernetes:` block: which cluster (a kubeconfig
//! context) and where the pods go (spread over the cluster's nodes, or pinned).

use super::error::Ctx;
use super::groups::Groups;
use super::raw::RawScenario;
use super::{Capabilities, ScenarioError};

/// `kubernetes:` as the runtime takes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KubeSettings {
    /// The kubeconfig context; None: the current one.
    pub context: Option<String>,
    /// Spread the pods over the cluster's nodes (a preference, not a rule).
    pub spread: bool,
    /// `(instance, cluster node)`: pods that must run on that cluster node.
    pub pin: Vec<(String, String)>,
}

/// `runtime: kubernetes` refused at its place (its `runtime:` line, else the
/// `kubernetes:` block, else the name) when this lnbench-tui was built without the
/// `kubernetes` feature (`built`).
fn supported(ctx: &Ctx, raw: &RawScenario, built: bool) -> Result<(), ScenarioError> {
    if built {
        return Ok(());
    }
    let at = match (&raw.runtime, &raw.kubernetes) {
        (Some(r), _) => &r.referenced,
        (None, Some(b)) => &b.referenced,
        (None, None) => &raw.name.referenced,
    };
    Err(ctx.error(
        at,
        "runtime: kubernetes, but this lnbench-tui was built without Kubernetes support",
        "rebuild it with the default features (`cargo build --release`), or write \
         runtime: local or runtime: docker",
    ))
}

/// A Kubernetes object name: lower-case letters, digits and `-`, at most 63, starting
/// and ending with a letter or digit (a DNS-1123 label).
pub fn object_name_ok(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

/// Checks `kubernetes:` against the runtime, and what the kubernetes runtime cannot run
/// (node names that are no pod names, `binary:`), with the place of each.
pub(super) fn validate(
    ctx: &Ctx,
    groups: &Groups,
    runtime: &Capabilities,
    raw: &RawScenario,
) -> Result<Option<KubeSettings>, ScenarioError> {
    let block = raw.kubernetes.as_ref();
    if runtime.settings != Some("kubernetes") {
        return match block {
            Some(b) => Err(ctx.error(
                &b.referenced,
                "kubernetes: is set but the runtime is not kubernetes",
                "write runtime: kubernetes, or remove the kubernetes: block",
            )),
            None => Ok(None),
        };
    }
    supported(ctx, raw, cfg!(feature = "kubernetes"))?;
    for (group, node) in &raw.nodes.value.0 {
        let instances = groups.instances(&group.value).unwrap_or_default();
        if let Some(bad) = instances.iter().find(|n| !object_name_ok(n)) {
            return Err(ctx.error(
                &group.referenced,
                format!("node name \"{bad}\" cannot name a pod"),
                "on kubernetes name nodes with lower-case letters, digits and -, e.g. alice-1",
            ));
        }
        if node.binary.is_some() {
            return Err(ctx.error(
                &group.referenced,
                format!(
                    "node {}: binary: names a file of this machine, which a pod cannot run",
                    group.value
                ),
                "remove binary: (pods run images: set image: to one the cluster has)",
            ));
        }
    }
    if raw.chain.as_ref().is_some_and(|c| c.binary.is_some()) {
        return Err(ctx.error(
            &raw.name.referenced,
            "chain: binary: names a file of this machine, which a pod cannot run",
            "remove the chain's binary: (pods run images)",
        ));
    }
    let Some(block) = block else {
        return Ok(Some(KubeSettings::default()));
    };
    let spread = match &block.value.placement {
        None => false,
        Some(p) => match p.value.as_str() {
            "spread" => true,
            "any" => false,
            other => {
                return Err(ctx.error(
                    &p.referenced,
                    format!("placement: {other} is not a placement"),
                    "write placement: spread (a cluster node per pod where it can) or any",
                ));
            }
        },
    };
    let mut pin = Vec::new();
    if let Some(pins) = &block.value.pin {
        for (name, host) in &pins.value {
            let Some(instances) = groups.instances(name) else {
                return Err(ctx.error(
                    &pins.referenced,
                    format!("pin: names node \"{name}\", which is not defined under nodes:"),
                    format!("pin nodes defined under nodes: ({})", groups.names()),
                ));
            };
            if host.value.trim().is_empty() {
                return Err(ctx.error(
                    &host.referenced,
                    format!("pin: {name} names no cluster node"),
                    "write the cluster node's name, as `kubectl get nodes` lists it",
                ));
            }
            pin.extend(instances.iter().map(|i| (i.clone(), host.value.clone())));
        }
    }
    Ok(Some(KubeSettings {
        context: block.value.context.as_ref().map(|c| c.value.clone()),
        spread,
        pin,
    }))
}

#[cfg(test)]
mod tests {
    #[cfg(feature = "kubernetes")]
    use super::super::RuntimeKind;
    use crate::scenario::parse_error as error_of;
    #[cfg(feature = "kubernetes")]
    use crate::scenario::tests::parse;
    #[cfg(feature = "kubernetes")]
    use std::path::Path;

    const NODES: &str = "\
name: k
runtime: kubernetes
nodes:
  alice:
    implementation: lnd
  bob:
    implementation: lnd
    replicas: 2
channels:
  - from: alice
    to: bob
    capacity_sat: 1000000
workload:
  kind: keysend
  senders: [alice]
  receiver: bob
  concurrency: 1
  stop: { payments: 10 }
";

    #[cfg(feature = "kubernetes")]
    #[test]
    fn kubernetes_settings_take_placement_and_pins_of_groups() {
        let text = format!(
            "{NODES}kubernetes:\n  context: lab\n  placement: spread\n  pin: {{ bob: worker-2 }}\n"
        );
        let s = parse(Path::new("k.yaml"), &text).unwrap();
        assert_eq!(s.runtime, RuntimeKind::Kubernetes);
        let k = s.kubernetes.unwrap();
        assert_eq!(k.context.as_deref(), Some("lab"));
        assert!(k.spread);
        assert_eq!(
            k.pin,
            vec![
                ("bob-1".to_string(), "worker-2".to_string()),
                ("bob-2".to_string(), "worker-2".to_string())
            ]
        );
        let plain = parse(Path::new("k.yaml"), NODES).unwrap();
        assert_eq!(plain.kubernetes.unwrap(), super::KubeSettings::default());
    }

    #[cfg(feature = "kubernetes")]
    #[test]
    fn what_a_cluster_cannot_run_is_refused_at_its_place() {
        let e = error_of(&format!("{NODES}kubernetes:\n  placement: everywhere\n"));
        assert!(e.starts_with("t.yaml:20:14: placement: everywhere"), "{e}");
        let e = error_of(&format!("{NODES}kubernetes:\n  pin: {{ carol: w }}\n"));
        assert!(e.contains("pin: names node \"carol\""), "{e}");
        let e = error_of(
            &NODES
                .replace("  alice:\n", "  Alice_1:\n")
                .replace("[alice]", "[Alice_1]")
                .replace("from: alice", "from: Alice_1"),
        );
        assert!(
            e.starts_with("t.yaml:4:3: node name \"Alice_1\" cannot name a pod"),
            "{e}"
        );
        let e = error_of(&NODES.replace(
            "  alice:\n    implementation: lnd\n",
            "  alice:\n    implementation: lnd\n    binary: /opt/lnd\n",
        ));
        assert!(e.contains("binary: names a file of this machine"), "{e}");
        // Restarts run on kubernetes (in the pod, through the kubelet).
        let restarts = parse(
            Path::new("k.yaml"),
            &format!("{NODES}after_load: {{ restart: all }}\n"),
        );
        assert_eq!(restarts.unwrap().restart, ["alice", "bob-1", "bob-2"]);
        // Node faults (signals in the pod) and links (a Toxiproxy pod) run there too.
        let faults = parse(
            Path::new("k.yaml"),
            &format!(
                "{NODES}faults:\n  - {{ at: 5s, kill: alice, restart_after: 5s }}\n  - {{ at: 9s, pause: bob-1, for: 2s }}\n"
            ),
        );
        assert_eq!(faults.expect("faults on kubernetes").faults.len(), 2);
        let links = parse(
            Path::new("k.yaml"),
            &format!("{NODES}links:\n  - {{ between: [alice, bob-1], latency: 5ms }}\n"),
        );
        assert_eq!(links.expect("links on kubernetes").links.len(), 1);
        let e = error_of(
            &NODES
                .replace("runtime: kubernetes", "runtime: local")
                .to_string()
                .replace(
                    "stop: { payments: 10 }\n",
                    "stop: { payments: 10 }\nkubernetes: { placement: spread }\n",
                ),
        );
        assert!(
            e.contains("kubernetes: is set but the runtime is not kubernetes"),
            "{e}"
        );
    }

    /// A build without the `kubernetes` feature refuses the runtime at its place: asked
    /// of the check with `built: false`, so a default build tests it (CI checks apart that
    /// the crate still builds without the feature).
    #[test]
    fn a_build_without_kubernetes_refuses_the_runtime_at_its_place() {
        let text = format!("{NODES}kubernetes:\n  placement: spread\n");
        let raw: super::RawScenario = serde_saphyr::from_str(&text).unwrap();
        let ctx = super::Ctx {
            path: std::path::Path::new("t.yaml"),
            source: &text,
        };
        let e = super::supported(&ctx, &raw, false).unwrap_err().to_string();
        // At the `runtime:` line, where the choice was made.
        assert!(
            e.starts_with("t.yaml:2:10: runtime: kubernetes, but"),
            "{e}"
        );
        assert!(e.contains("built without Kubernetes support"), "{e}");
        assert!(e.contains("runtime: local"), "{e}");
        assert!(super::supported(&ctx, &raw, true).is_ok());
    }
}
