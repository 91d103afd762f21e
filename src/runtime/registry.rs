//! What a runtime registers (`runtime/mod.rs` holds the table, one line per runtime):
//! what it can run (which scenario validation asks) and how it is prepared for a run
//! (its checks before anything starts).

use super::Runtime;
use crate::scenario::{Capabilities, Scenario};
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

/// Removes what runs left in one place (see [`Leftovers::down`]).
pub type RemoveLeftovers =
    for<'a> fn(
        bool,
        Option<&'a str>,
    ) -> BoxFuture<'a, Result<Option<super::shared::Down>, super::RuntimeError>>;

/// Where a runtime's runs leave objects outside this machine's files (a cluster's
/// namespaces, an engine's containers, networks and volumes), as `down` looks there.
pub struct Leftovers {
    /// Removes what runs left there: every finished run's (every run's with `all`), or
    /// run `only`'s. Ok(None): no such place is configured here.
    pub down: RemoveLeftovers,
    /// What `down` says when it could not look there (the place does not answer, or
    /// this build lacks its client): `Some` for the errors that mean so; `down` goes on.
    pub not_looked: fn(&super::RuntimeError) -> Option<String>,
    /// How any other error is named when `down` goes on ("kubernetes namespaces");
    /// None: any other error ends `down`.
    pub not_checked: Option<&'static str>,
}

/// One runtime as registered.
pub struct Registration {
    pub capabilities: &'static Capabilities,
    /// Run as each network starts.
    pub prepare: Prepare,
    /// Run for every point of a sweep before anything starts, where a check is cheap
    /// and certain (the local runtime's binaries, the docker runtime's images); the
    /// rest waits for `prepare`. In a matrix a failed check skips the point (`validate`
    /// lists it).
    pub preflight: fn(&Scenario) -> anyhow::Result<()>,
    /// What its runs may leave behind outside this machine's files, for `down`.
    pub leftovers: Option<&'static Leftovers>,
}

/// No check before the network starts.
pub(super) fn no_preflight(_: &Scenario) -> anyhow::Result<()> {
    Ok(())
}
