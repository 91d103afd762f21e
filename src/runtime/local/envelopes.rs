//! The local runtime's envelopes (`resources:`): each node, the chain and each database
//! server in a cgroup of its own under the run's (see [`super::cgroup`]), read before
//! teardown and removed by it.

use super::cgroup::{self, Cgroups};
use super::{LocalRuntime, RuntimeError};
use crate::metrics::EnvelopeReading;
use crate::scenario::Envelope;
use std::path::Path;
use std::time::Duration;

/// How long teardown waits for the kernel to let go of an emptied cgroup.
const REMOVE_DEADLINE: Duration = Duration::from_secs(3);

/// Checks that cgroups can be written where the kernel mounts them: the check a run
/// with `resources:` makes before anything starts.
pub(super) fn check(scenario: &crate::scenario::Scenario) -> Result<(), RuntimeError> {
    if !scenario.resources.any(&scenario.nodes) {
        return Ok(());
    }
    cgroup::usable(Path::new(cgroup::ROOT))
        .map(|_| ())
        .map_err(RuntimeError::from)
}

impl LocalRuntime {
    /// Puts `leader`'s process group (and what it started) into `name`'s cgroup, made
    /// with `envelope` the first time; nothing without an envelope.
    pub(super) fn confine(
        &mut self,
        name: &str,
        envelope: Option<&Envelope>,
        leader: u32,
    ) -> Result<(), RuntimeError> {
        let Some(envelope) = envelope else {
            return Ok(());
        };
        let cgroups = match &mut self.cgroups {
            Some(c) => c,
            None => {
                let dir = (self.run_dir.file_name())
                    .map_or("run".into(), |n| n.to_string_lossy().into_owned());
                // The run directory may be named `lnbench-<run id>` already.
                let run = dir.strip_prefix("lnbench-").unwrap_or(&dir).to_string();
                self.cgroups
                    .insert(Cgroups::open(Path::new(cgroup::ROOT), &run)?)
            }
        };
        let group = cgroups.group(name, envelope)?;
        for pid in super::stats::members(leader) {
            group.add(pid)?;
        }
        Ok(())
    }

    /// Puts a node started again (`restart`, a fault's start) back into its cgroup.
    pub(super) fn rejoin(&mut self, name: &str, leader: u32) -> Result<(), RuntimeError> {
        let envelope = (self.cgroups.as_ref())
            .and_then(|c| c.get(name))
            .map(|g| g.envelope.clone());
        self.confine(name, envelope.as_ref(), leader)
    }

    /// Every cgroup's envelope and what the kernel counted in it so far.
    pub(super) fn envelope_readings(&self) -> Vec<EnvelopeReading> {
        let Some(cgroups) = &self.cgroups else {
            return Vec::new();
        };
        (cgroups.groups().iter())
            .map(|g| {
                let kernel = g.read();
                let missing = kernel.missing();
                EnvelopeReading {
                    name: g.name.clone(),
                    cpus: g.envelope.cpus,
                    memory_bytes: g.envelope.memory_bytes,
                    cpuset: g.envelope.cpuset.clone(),
                    applied_by: cgroups.version().into(),
                    not_available: match missing.is_empty() {
                        true => String::new(),
                        false => format!(
                            "{}: this kernel's cgroup does not give it",
                            missing.join(", ")
                        ),
                    },
                    kernel,
                }
            })
            .collect()
    }

    /// Removes the run's cgroups once their processes are gone, retrying while the
    /// kernel still counts an exiting process in one.
    pub(super) async fn remove_cgroups(&mut self) {
        let Some(mut cgroups) = self.cgroups.take() else {
            return;
        };
        let deadline = tokio::time::Instant::now() + REMOVE_DEADLINE;
        while let Err(e) = cgroups.remove() {
            if tokio::time::Instant::now() >= deadline {
                tracing::warn!(error = %crate::exit::error_chain(&e), "a cgroup of the run is left");
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// [`LocalRuntime::remove_cgroups`] for `Drop`: one try.
    pub(super) fn remove_cgroups_now(&mut self) {
        if let Some(mut cgroups) = self.cgroups.take() {
            let _ = cgroups.remove();
        }
    }
}
