//! The docker runtime's envelopes (`resources:`): each container's host config limits
//! it; the kernel's counters come from the container's cgroup where this host can read
//! it, else what `docker inspect` tells (whether the OOM killer struck).

use super::DockerRuntime;
use crate::chain::CHAIN_NAME;
use crate::metrics::{EnvelopeReading, KernelCounters};
use crate::runtime::local::cgroup;
use std::path::Path;

impl DockerRuntime {
    /// The envelopes (`resources:`) of the scenario's nodes, chain and database servers.
    pub fn with_envelopes(mut self, scenario: &crate::scenario::Scenario) -> DockerRuntime {
        self.envelopes = (scenario.nodes.iter())
            .map(|n| (n.name.clone(), n.resources.clone()))
            .chain([(CHAIN_NAME.to_string(), scenario.resources.chain.clone())])
            .collect();
        self.database_envelope = scenario.resources.databases.clone();
        self
    }

    /// The envelope of the container of `name`: its node's or the chain's, else the
    /// database servers'.
    pub(super) fn envelope_of(&self, name: &str) -> Option<crate::scenario::Envelope> {
        match self.envelopes.iter().find(|(n, _)| n == name) {
            Some((_, e)) => e.clone(),
            None => self.database_envelope.clone(),
        }
    }

    /// Every container with an envelope: the limits its host config holds, and its
    /// cgroup's counters (or inspect's OOM flag where the cgroup cannot be read).
    pub(super) async fn envelope_readings(&self) -> Vec<EnvelopeReading> {
        let mut readings = Vec::new();
        for c in &self.containers {
            if self.envelope_of(&c.name).is_none() {
                continue;
            }
            let Ok(info) = self.docker.inspect_container(&c.id, None).await else {
                continue;
            };
            let host = info.host_config.unwrap_or_default();
            let state = info.state.unwrap_or_default();
            let pid = state
                .pid
                .and_then(|p| u32::try_from(p).ok())
                .filter(|p| *p > 0);
            let group = pid.and_then(|p| cgroup::Group::of_process(Path::new(cgroup::ROOT), p));
            let (kernel, not_available) = match &group {
                Some(g) => {
                    let kernel = g.read();
                    let missing = kernel.missing();
                    let note = match missing.is_empty() {
                        true => String::new(),
                        false => format!(
                            "{}: the container's cgroup does not give it",
                            missing.join(", ")
                        ),
                    };
                    (kernel, note)
                }
                None => (
                    KernelCounters {
                        oom_kills: state.oom_killed.map(u64::from),
                        ..KernelCounters::default()
                    },
                    "throttled time, memory peak: the container's cgroup cannot be read from \
                     here; OOM kills: docker inspect's OOMKilled (1: killed at least once)"
                        .into(),
                ),
            };
            readings.push(EnvelopeReading {
                name: c.name.clone(),
                cpus: host.nano_cpus.filter(|n| *n > 0).map(|n| n as f64 / 1e9),
                memory_bytes: host
                    .memory
                    .filter(|m| *m > 0)
                    .and_then(|m| u64::try_from(m).ok()),
                cpuset: host.cpuset_cpus.filter(|c| !c.is_empty()),
                applied_by: "docker".into(),
                kernel,
                not_available,
            });
        }
        readings
    }
}
