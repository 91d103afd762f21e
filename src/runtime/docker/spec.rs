//! What the engine is asked to create: names, labels and the container body. Pure, so
//! the loopback-only port bindings and the labels are tested without an engine.

use super::{LABEL_NODE, LABEL_OWNER, LABEL_RUN, LABEL_SCENARIO, LABEL_TOKEN, LABEL_USER};
use bollard::models::{
    ContainerCreateBody, EndpointSettings, HostConfig, NetworkingConfig, PortBinding,
};
use std::collections::HashMap;

/// Names of containers and networks allow `[a-zA-Z0-9_.-]`; the run id may hold more
/// (it starts with the scenario name). `lnbench-<run id>[-<suffix>]`.
pub fn object_name(run_id: &str, suffix: Option<&str>) -> String {
    let safe: String = run_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    match suffix {
        Some(s) => format!("lnbench-{safe}-{s}"),
        None => format!("lnbench-{safe}"),
    }
}

/// The labels of everything a run creates; `node` for containers.
pub fn labels(run_id: &str, scenario: &str, node: Option<&str>) -> HashMap<String, String> {
    let mut labels = HashMap::from([
        (LABEL_RUN.to_string(), run_id.to_string()),
        (LABEL_SCENARIO.to_string(), scenario.to_string()),
        (LABEL_OWNER.to_string(), crate::leftovers::owner()),
        (LABEL_USER.to_string(), crate::leftovers::uid().to_string()),
    ]);
    if let Some(n) = node {
        labels.insert(LABEL_NODE.to_string(), n.to_string());
    }
    if let Some(token) = crate::leftovers::lock::token() {
        labels.insert(LABEL_TOKEN.to_string(), token);
    }
    labels
}

/// One container to create.
pub struct ContainerSpec<'a> {
    /// Node name (or `chain`): hostname and network alias.
    pub name: &'a str,
    pub image: &'a str,
    /// Arguments to the image's entrypoint.
    pub cmd: Vec<String>,
    /// Container ports to publish, each with its host port on loopback (0: any free
    /// one, which the engine picks anew at each start).
    pub ports: &'a [(u16, u16)],
    pub network: &'a str,
    pub labels: HashMap<String, String>,
    /// Its share of the machine (`resources:`), if limited.
    pub envelope: Option<&'a crate::scenario::Envelope>,
}

pub fn container_body(spec: &ContainerSpec) -> ContainerCreateBody {
    let bindings = spec
        .ports
        .iter()
        .map(|&(p, host)| {
            (
                format!("{p}/tcp"),
                // Loopback only: an LND admin port on all interfaces would be a
                // remote-control hole. An empty host port means "any free one".
                Some(vec![PortBinding {
                    host_ip: Some("127.0.0.1".into()),
                    host_port: Some(if host == 0 {
                        String::new()
                    } else {
                        host.to_string()
                    }),
                }]),
            )
        })
        .collect();
    ContainerCreateBody {
        image: Some(spec.image.to_string()),
        cmd: Some(spec.cmd.clone()),
        hostname: Some(spec.name.to_string()),
        labels: Some(spec.labels.clone()),
        exposed_ports: Some(spec.ports.iter().map(|(p, _)| format!("{p}/tcp")).collect()),
        host_config: Some(HostConfig {
            port_bindings: Some(bindings),
            network_mode: Some(spec.network.to_string()),
            ..limits(spec.envelope)
        }),
        networking_config: Some(NetworkingConfig {
            endpoints_config: Some(HashMap::from([(
                spec.network.to_string(),
                EndpointSettings {
                    aliases: Some(vec![spec.name.to_string()]),
                    ..Default::default()
                },
            )])),
        }),
        ..Default::default()
    }
}

/// The host config's limits for an envelope: CPU time, memory with no swap beyond it,
/// and the CPUs it may run on.
fn limits(envelope: Option<&crate::scenario::Envelope>) -> HostConfig {
    let Some(e) = envelope else {
        return HostConfig::default();
    };
    let memory = e.memory_bytes.and_then(|m| i64::try_from(m).ok());
    HostConfig {
        nano_cpus: e.cpus.map(|c| (c * 1e9).round() as i64),
        memory,
        memory_swap: memory,
        cpuset_cpus: e.cpuset.clone(),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keep_to_the_engine_alphabet() {
        assert_eq!(
            object_name("a b/c-1", Some("alice")),
            "lnbench-a-b-c-1-alice"
        );
        assert_eq!(object_name("run.1_x", None), "lnbench-run.1_x");
    }

    #[test]
    fn ports_are_published_on_loopback_only_and_everything_is_labelled() {
        let body = container_body(&ContainerSpec {
            name: "alice",
            image: "lnbench/lnd:v0.21.1-beta",
            cmd: vec!["--alias=alice".into()],
            ports: &[(10009, 41000), (9735, 0)],
            network: "lnbench-r1",
            labels: labels("r1", "s", Some("alice")),
            envelope: None,
        });
        assert_eq!(body.host_config.as_ref().unwrap().nano_cpus, None);
        let host = body.host_config.unwrap();
        let bindings = host.port_bindings.unwrap();
        assert_eq!(bindings.len(), 2);
        for (port, b) in &bindings {
            let b = b.as_ref().unwrap();
            assert_eq!(b.len(), 1, "{port}");
            assert_eq!(b[0].host_ip.as_deref(), Some("127.0.0.1"), "{port}");
            let host = if port == "10009/tcp" { "41000" } else { "" };
            assert_eq!(b[0].host_port.as_deref(), Some(host), "{port}");
        }
        assert_eq!(host.network_mode.as_deref(), Some("lnbench-r1"));
        assert_eq!(body.hostname.as_deref(), Some("alice"));
        let aliases = body.networking_config.unwrap().endpoints_config.unwrap()["lnbench-r1"]
            .aliases
            .clone();
        assert_eq!(aliases, Some(vec!["alice".to_string()]));
        let labels = body.labels.unwrap();
        assert_eq!(labels["lnbench.run"], "r1");
        assert_eq!(labels["lnbench.owner"], crate::leftovers::owner());
        assert_eq!(labels["lnbench.user"], crate::leftovers::uid().to_string());
        assert_eq!(labels["lnbench.scenario"], "s");
        assert_eq!(labels["lnbench.node"], "alice");
    }

    #[test]
    fn an_envelope_becomes_nano_cpus_memory_without_swap_and_a_cpuset() {
        let envelope = crate::scenario::Envelope {
            cpus: Some(1.5),
            memory_bytes: Some(2 << 30),
            cpuset: Some("0-1".into()),
        };
        let body = container_body(&ContainerSpec {
            name: "bob",
            image: "lnbench/lnd:v0.21.1-beta",
            cmd: Vec::new(),
            ports: &[],
            network: "lnbench-r1",
            labels: labels("r1", "s", Some("bob")),
            envelope: Some(&envelope),
        });
        let host = body.host_config.unwrap();
        assert_eq!(host.nano_cpus, Some(1_500_000_000));
        assert_eq!(
            (host.memory, host.memory_swap),
            (Some(2 << 30), Some(2 << 30))
        );
        assert_eq!(host.cpuset_cpus.as_deref(), Some("0-1"));
        assert_eq!(host.network_mode.as_deref(), Some("lnbench-r1"));
    }

    /// The labels carry the process's token; a test run must not leave its lock file in
    /// the user's cache (`<cache>/owners/`), where `down` would judge it.
    #[test]
    fn the_token_lock_of_a_test_is_not_in_the_user_cache() {
        let token = labels("r1", "s", None).remove(LABEL_TOKEN);
        let token = token.expect("the labels carry a token");
        let user_owners =
            crate::cache::cache_bin_dir().and_then(|bin| Some(bin.parent()?.join("owners")));
        if let Some(dir) = user_owners {
            let file = crate::leftovers::lock::token_file(&dir, &token).unwrap();
            assert!(!file.exists(), "{} was made by a test", file.display());
        }
        let dir = crate::leftovers::lock::owners_dir().unwrap();
        let file = crate::leftovers::lock::token_file(&dir, &token).unwrap();
        assert!(file.exists(), "the token has no lock file");
    }
}
