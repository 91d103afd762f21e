//! Run metrics: latency histograms (cumulative and per one-second interval), TPS
//! series, failures by reason, and the tool's own CPU and memory.
//!
//! Workers record into a [`WorkerRecorder`] they own and merge into the shared
//! [`Recorder`] in batches, so the hot path takes no lock. The engine calls
//! [`Recorder::tick`] about once a second; each tick closes an interval and publishes a
//! [`Snapshot`] on a watch channel. [`Recorder::finish`] gives the [`Summary`].
//!
//! Units: latencies are whole microseconds (`u64`) everywhere; front ends format them.

pub mod attack;
mod envelope;
mod events;
pub mod export;
pub mod hlog;
pub mod host;
pub mod live;
pub mod parts;
pub mod payments;
pub mod process;
pub mod rebalance;
mod recorder;
pub mod resources;
mod series;
mod snapshot;
pub mod spectrum;
pub mod stream;

pub use envelope::{EnvelopeReading, KernelCounters};
pub use events::{EventKind, MAX_EVENTS, RunEvent};
pub use hlog::{IntervalLog, IntervalLogFile};
pub use host::{MachineLoad, MachineLog, MachineNow};
pub use payments::{PaymentLog, PaymentLogFile, PaymentResult, PaymentRow};
pub use recorder::{Recorder, RecorderEvents, WeakRecorder, WorkerRecorder};
pub use resources::{
    NodeResources, ResourceLog, ResourceReading, ResourceSample, TOOL_READING, tool_reading,
};
pub use series::{MAX_SERIES_POINTS, RECENT_POINTS, SeriesPoint};
pub use snapshot::{LoadSetting, Percentiles, PhaseSummary, RouteCount, Snapshot, Stage, Summary};
pub use spectrum::SpectrumPoint;

use crate::node::FailureReason;

/// Why a payment counts as failed: a closed set, so counting by reason stays bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The node answered with a failed payment.
    Node(FailureReason),
    /// The call to the node failed (connection, RPC status, bad answer).
    RpcError,
}

impl FailureKind {
    /// Every kind, in the order of [`FailureKind::index`].
    pub const ALL: [FailureKind; 7] = [
        FailureKind::Node(FailureReason::NoRoute),
        FailureKind::Node(FailureReason::Timeout),
        FailureKind::Node(FailureReason::IncorrectPaymentDetails),
        FailureKind::Node(FailureReason::InsufficientBalance),
        FailureKind::Node(FailureReason::Canceled),
        FailureKind::Node(FailureReason::Error),
        FailureKind::RpcError,
    ];
    pub const COUNT: usize = Self::ALL.len();

    pub fn index(self) -> usize {
        match self {
            FailureKind::Node(FailureReason::NoRoute) => 0,
            FailureKind::Node(FailureReason::Timeout) => 1,
            FailureKind::Node(FailureReason::IncorrectPaymentDetails) => 2,
            FailureKind::Node(FailureReason::InsufficientBalance) => 3,
            FailureKind::Node(FailureReason::Canceled) => 4,
            FailureKind::Node(FailureReason::Error) => 5,
            FailureKind::RpcError => 6,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Node(reason) => reason.as_str(),
            FailureKind::RpcError => "rpc_error",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_kind_index_matches_all() {
        for (i, kind) in FailureKind::ALL.iter().enumerate() {
            assert_eq!(kind.index(), i, "{kind:?}");
        }
        let names: std::collections::BTreeSet<_> =
            FailureKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(names.len(), FailureKind::COUNT, "reason strings are unique");
    }
}
