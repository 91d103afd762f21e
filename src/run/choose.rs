//! Which runtime a run uses (`runtime: auto | docker | local | kubernetes |
//! external`), checked before anything starts: each runtime's registration
//! (`runtime::registration`) says how.

use crate::runtime::{Place, Prepared, Runtime, registration};
use crate::scenario::Scenario;
use anyhow::Result;

/// The runtime a network uses, its checks passed.
pub(crate) struct Chosen(Box<dyn Prepared>);

impl Chosen {
    /// The runtime of one network, working at `place`.
    pub(crate) fn create(self, place: &Place<'_>) -> Box<dyn Runtime> {
        self.0.create(place)
    }
}

/// Where a run gets the runtime of each network.
#[async_trait::async_trait]
pub(crate) trait Choose: Sync {
    async fn choose(&self, scenario: &Scenario) -> Result<Chosen>;
}

/// The runtime each scenario asks for, prepared as its registration says.
pub(crate) struct Runtimes;

#[async_trait::async_trait]
impl Choose for Runtimes {
    async fn choose(&self, scenario: &Scenario) -> Result<Chosen> {
        let prepared = (registration(scenario.runtime).prepare)(scenario).await?;
        Ok(Chosen(prepared))
    }
}

/// A runtime made by the caller at the run directory (the orchestration's tests).
#[cfg(test)]
impl Chosen {
    pub(crate) fn made(
        make: impl FnOnce(&std::path::Path) -> Box<dyn Runtime> + Send + 'static,
    ) -> Chosen {
        struct Made<F>(F);
        impl<F: FnOnce(&std::path::Path) -> Box<dyn Runtime> + Send> Prepared for Made<F> {
            fn create(self: Box<Self>, place: &Place<'_>) -> Box<dyn Runtime> {
                (self.0)(place.run_dir)
            }
        }
        Chosen(Box::new(Made(make)))
    }
}

/// For a sweep's points before anything starts: the checks that are cheap and
/// certain (the local runtime's binaries, the docker runtime's images); the rest
/// waits for each network's start.
pub(crate) fn preflight_points(scenario: &Scenario) -> Result<()> {
    (registration(scenario.runtime).preflight)(scenario)
}
