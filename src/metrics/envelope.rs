//! A node's envelope (`resources:`) as the runtime applied it, and what the kernel
//! counted against it during the run: time throttled, peak memory, OOM kills.

use serde::Serialize;

/// What the kernel counted for one cgroup (or container). `None`: not available there.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct KernelCounters {
    /// CFS periods in which the group used up its quota and was held back.
    pub throttled_periods: Option<u64>,
    /// Time the group was held back, microseconds.
    pub throttled_us: Option<u64>,
    /// Highest memory the group used (page cache included, as the kernel counts it).
    pub memory_peak_bytes: Option<u64>,
    /// Processes of the group the kernel's OOM killer killed.
    pub oom_kills: Option<u64>,
}

/// One node's (or the chain's, or a database server's) envelope and its counters,
/// read when the load ended, before teardown.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct EnvelopeReading {
    /// Instance name, `chain`, or the database server's name.
    pub name: String,
    /// CPU limit, cores, as applied (read back where the runtime can: the local
    /// cgroup, the container's host config).
    pub cpus: Option<f64>,
    /// Memory limit, bytes, as applied (the kernel may round it to its pages).
    pub memory_bytes: Option<u64>,
    /// The CPUs it may run on (`0-1`), as applied.
    pub cpuset: Option<String>,
    /// How the runtime applied it: `cgroup v1`, `cgroup v2`, `docker`.
    pub applied_by: String,
    pub kernel: KernelCounters,
    /// Which counters could not be read, and why (empty when all were read).
    pub not_available: String,
}

impl KernelCounters {
    /// The names of the counters that are missing, for [`EnvelopeReading::not_available`].
    pub fn missing(&self) -> Vec<&'static str> {
        [
            ("throttled time", self.throttled_us.is_none()),
            ("memory peak", self.memory_peak_bytes.is_none()),
            ("OOM kills", self.oom_kills.is_none()),
        ]
        .into_iter()
        .filter_map(|(name, missing)| missing.then_some(name))
        .collect()
    }
}
