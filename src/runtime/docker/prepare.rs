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

/// For a sweep's points before anything starts: the images each needs, where an
/// engine answers (else nothing is checked here; the network's start reports it). An
/// image that is absent and will not be pulled is an error, which makes the point of a
/// matrix skipped with the command that builds it. Runs on a thread of its own, so it
/// can be called from async code and from none.
pub(in crate::runtime) fn preflight_images(scenario: &Scenario) -> anyhow::Result<()> {
    let check = || -> anyhow::Result<()> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        runtime.block_on(async {
            let Ok(docker) = super::connect().await else {
                return Ok(());
            };
            super::images::plan(&docker, scenario).await?;
            Ok(())
        })
    };
    std::thread::scope(|s| s.spawn(check).join())
        .unwrap_or_else(|_| Err(anyhow::anyhow!("checking the images panicked")))
}

pub(super) fn prepare(scenario: &Scenario) -> BoxFuture<'_, anyhow::Result<Box<dyn Prepared>>> {
    Box::pin(prepare_for(scenario))
}
