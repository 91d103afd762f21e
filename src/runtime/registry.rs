//! The registered runtimes: for each `runtime:` kind, what it can run (which scenario
//! validation asks) and how it is prepared for a run (its checks before anything
//! starts). Adding a runtime is its module plus one line in [`registration`].

use super::{Runtime, auto, docker, external, kube, local};
use crate::scenario::{Capabilities, RuntimeKind, Scenario};
use futures::future::BoxFuture;
use std::path::Path;

/// Where a network's runtime works.
pub struct Place<'a> {
    pub run_id: &'a str,
    /// The scenario's name (labels of containers and pods).
    pub scenario: &'a str,
    /// Logs and credentials; removed by `down` unless `keep`.
    pub run_dir: &'a Path,
    pub keep: bool,
}

/// A runtime whose checks passed (the binaries found, the engine or the cluster
/// answering, the images there), to be made for one network.
pub trait Prepared: Send {
    fn create(self: Box<Self>, place: &Place<'_>) -> Box<dyn Runtime>;
}

/// Checks that a runtime can run a scenario and prepares it.
pub type Prepare = for<'a> fn(&'a Scenario) -> BoxFuture<'a, anyhow::Result<Box<dyn Prepared>>>;

/// One runtime as registered.
pub struct Registration {
    pub capabilities: &'static Capabilities,
    /// Run as each network starts.
    pub prepare: Prepare,
    /// Run for every point of a sweep before anything starts, where a check is cheap
    /// and certain (the local runtime's binaries); the rest waits for `prepare`.
    pub preflight: fn(&Scenario) -> anyhow::Result<()>,
}

/// The registered runtime of each kind: one line per runtime.
pub fn registration(kind: RuntimeKind) -> &'static Registration {
    match kind {
        RuntimeKind::Auto => &auto::REGISTRATION,
        RuntimeKind::Local => &local::REGISTRATION,
        RuntimeKind::Docker => &docker::REGISTRATION,
        RuntimeKind::Kubernetes => &kube::REGISTRATION,
        RuntimeKind::External => &external::REGISTRATION,
    }
}

/// What each runtime declares it can run, which scenario validation asks.
pub fn capabilities(kind: RuntimeKind) -> &'static Capabilities {
    registration(kind).capabilities
}

/// No check before the network starts.
pub(super) fn no_preflight(_: &Scenario) -> anyhow::Result<()> {
    Ok(())
}
