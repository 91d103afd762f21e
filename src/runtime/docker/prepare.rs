//! The docker runtime prepared for a run: the engine answers and the images are there
//! (or pulled as the policy allows).

use super::{DockerRuntime, RunImages, preflight};
use crate::runtime::{Place, Prepared, Runtime};
use crate::scenario::Scenario;
use bollard::Docker;
use futures::future::BoxFuture;

struct Ready {
    engine: Docker,
    images: RunImages,
    scenario: Scenario,
}

impl Prepared for Ready {
    fn create(self: Box<Self>, at: &Place<'_>) -> Box<dyn Runtime> {
        Box::new(
            DockerRuntime::new(
                self.engine,
                self.images,
                at.run_id,
                at.scenario,
                at.run_dir.to_path_buf(),
                at.keep,
            )
            .with_envelopes(&self.scenario),
        )
    }
}

/// Checks the engine and the images.
pub(in crate::runtime) async fn prepare_for(
    scenario: &Scenario,
) -> anyhow::Result<Box<dyn Prepared>> {
    let (engine, images) = preflight(scenario).await?;
    Ok(Box::new(Ready {
        engine,
        images,
        scenario: scenario.clone(),
    }))
}

pub(super) fn prepare(scenario: &Scenario) -> BoxFuture<'_, anyhow::Result<Box<dyn Prepared>>> {
    Box::pin(prepare_for(scenario))
}
