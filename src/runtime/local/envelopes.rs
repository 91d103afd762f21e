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
                let limits = as_applied(&g.envelope, &g.applied());
                let missing = kernel.missing();
                let mut not_available = Vec::new();
                if !missing.is_empty() {
                    not_available.push(format!(
                        "{}: this kernel's cgroup does not give it",
                        missing.join(", ")
                    ));
                }
                if !limits.unread.is_empty() {
                    not_available.push(format!(
                        "{}: not read back from the cgroup, shown as asked",
                        limits.unread.join(", ")
                    ));
                }
                EnvelopeReading {
                    name: g.name.clone(),
                    cpus: limits.envelope.cpus,
                    memory_bytes: limits.envelope.memory_bytes,
                    cpuset: limits.envelope.cpuset,
                    applied_by: cgroups.version().into(),
                    not_available: not_available.join("; "),
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

/// Each limit asked for, as the kernel holds it (`applied`), and the names of those
/// it did not show, which stay as asked.
struct Limits {
    envelope: Envelope,
    unread: Vec<&'static str>,
}

/// The report's envelope: the kernel's figure for each limit that was asked for (a
/// limit not asked for is none, whatever the group inherited).
fn as_applied(asked: &Envelope, applied: &Envelope) -> Limits {
    let mut unread = Vec::new();
    let envelope = Envelope {
        cpus: pick(asked.cpus, applied.cpus, "CPU limit", &mut unread),
        memory_bytes: pick(
            asked.memory_bytes,
            applied.memory_bytes,
            "memory limit",
            &mut unread,
        ),
        cpuset: pick(
            asked.cpuset.clone(),
            applied.cpuset.clone(),
            "cpuset",
            &mut unread,
        ),
    };
    Limits { envelope, unread }
}

/// One limit: none when not asked for; else the kernel's, or as asked when the kernel
/// did not show it (named in `unread`).
fn pick<T>(
    asked: Option<T>,
    applied: Option<T>,
    what: &'static str,
    unread: &mut Vec<&'static str>,
) -> Option<T> {
    asked.as_ref()?;
    if applied.is_none() {
        unread.push(what);
    }
    applied.or(asked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_shows_the_kernels_limits_for_those_asked_and_says_which_it_could_not_read() {
        let asked = Envelope {
            cpus: Some(0.7),
            memory_bytes: Some(1_000_000),
            cpuset: None,
        };
        // The kernel rounded memory to its pages; the group inherited a cpuset.
        let applied = Envelope {
            cpus: Some(0.7),
            memory_bytes: Some(999_424),
            cpuset: Some("0-1".into()),
        };
        let l = as_applied(&asked, &applied);
        assert_eq!(l.envelope.memory_bytes, Some(999_424));
        assert_eq!(l.envelope.cpus, Some(0.7));
        assert_eq!(l.envelope.cpuset, None, "not asked for");
        assert!(l.unread.is_empty());
        // Nothing read back: as asked, and said.
        let asked = Envelope {
            cpuset: Some("1".into()),
            ..asked
        };
        let l = as_applied(&asked, &Envelope::default());
        assert_eq!(l.envelope, asked);
        assert_eq!(l.unread, ["CPU limit", "memory limit", "cpuset"]);
    }
}
