//! Which runtime a run uses (`runtime: auto | docker | local | kubernetes`), checked before
//! anything starts.

use crate::runtime::Runtime;
use crate::runtime::docker::{self, DockerRuntime};
use crate::runtime::local::LocalRuntime;
use crate::scenario::{RuntimeKind, Scenario};
use anyhow::Result;

/// The runtime a run uses, checked before anything starts.
pub(crate) enum Chosen {
    Local,
    External,
    Docker(bollard::Docker, docker::RunImages),
    Kubernetes(Box<crate::runtime::kube::Prepared>),
    /// A runtime made by the caller, given the run directory (the fake runtime of
    /// the orchestration's tests).
    #[cfg(test)]
    Made(MakeRuntime),
}

/// Makes a runtime in the run directory given.
#[cfg(test)]
pub(crate) type MakeRuntime = Box<dyn FnOnce(&std::path::Path) -> Box<dyn Runtime> + Send>;

/// Where a run gets the runtime of each network.
#[async_trait::async_trait]
pub(crate) trait Choose: Sync {
    async fn choose(&self, scenario: &Scenario) -> Result<Chosen>;
}

/// The runtime each scenario asks for ([`choose_runtime`]).
pub(crate) struct Runtimes;

#[async_trait::async_trait]
impl Choose for Runtimes {
    async fn choose(&self, scenario: &Scenario) -> Result<Chosen> {
        choose_runtime(scenario).await
    }
}

impl Chosen {
    /// The runtime of one run (or one network of a sweep) in `run_dir`.
    pub(crate) fn create(
        self,
        run_id: &str,
        scenario: &str,
        run_dir: &std::path::Path,
        keep: bool,
    ) -> Box<dyn Runtime> {
        match self {
            Chosen::Local => Box::new(LocalRuntime::new(run_dir.to_path_buf(), keep)),
            Chosen::External => Box::new(crate::runtime::external::ExternalRuntime::new(
                run_dir.to_path_buf(),
                keep,
            )),
            Chosen::Docker(engine, images) => Box::new(DockerRuntime::new(
                engine,
                images,
                run_id,
                scenario,
                run_dir.to_path_buf(),
                keep,
            )),
            Chosen::Kubernetes(prepared) => Box::new(crate::runtime::kube::KubeRuntime::new(
                *prepared,
                run_id,
                scenario,
                run_dir.to_path_buf(),
                keep,
            )),
            #[cfg(test)]
            Chosen::Made(make) => make(run_dir),
        }
    }
}

/// Picks the runtime the scenario asks for and checks it can run the scenario: the
/// binaries for `local`; the engine and the images (pulled as the policy allows) for
/// `docker`. `auto` takes docker when an engine answers and every image is present or
/// could be pulled, and no `binary:` is set (a binary is only run locally) and no
/// `links:` or `faults:` (local processes only, so far); else local, saying why.
pub(crate) async fn choose_runtime(scenario: &Scenario) -> Result<Chosen> {
    match scenario.runtime {
        RuntimeKind::Local => preflight_local(scenario).map(|()| Chosen::Local),
        RuntimeKind::External => Ok(Chosen::External),
        RuntimeKind::Kubernetes => {
            let prepared = crate::runtime::kube::preflight(scenario).await?;
            Ok(Chosen::Kubernetes(Box::new(prepared)))
        }
        RuntimeKind::Docker => {
            let (engine, images) = docker::preflight(scenario).await?;
            Ok(Chosen::Docker(engine, images))
        }
        RuntimeKind::Auto => {
            let binary_set = scenario.chain.binary.is_some()
                || scenario.nodes.iter().any(|n| n.binary.is_some());
            let faults = !scenario.links.is_empty() || !scenario.faults.is_empty();
            let why_local = if binary_set {
                "the scenario sets binary:".to_string()
            } else if faults {
                "the scenario has links: or faults:, which only local processes run yet".to_string()
            } else {
                // Any docker problem (no engine, an image missing or failing to pull,
                // no PostgreSQL image for a node on postgres) falls back to local.
                match docker::preflight(scenario).await {
                    Ok((engine, images)) => return Ok(Chosen::Docker(engine, images)),
                    Err(e) => format!("{e}"),
                }
            };
            crate::lines::errln!("runtime auto: using local processes ({why_local})");
            preflight_local(scenario).map(|()| Chosen::Local)
        }
    }
}

/// For a sweep's points before anything starts: the binaries when the scenario asks
/// for the local runtime (docker and auto are checked per network, as they start).
pub(crate) fn preflight_points(scenario: &Scenario) -> Result<()> {
    match scenario.runtime {
        RuntimeKind::Local => preflight_local(scenario),
        RuntimeKind::Docker
        | RuntimeKind::Auto
        | RuntimeKind::External
        | RuntimeKind::Kubernetes => Ok(()),
    }
}

/// Finds every binary before anything starts, so a missing one fails at once
/// instead of after the chain is up.
fn preflight_local(scenario: &Scenario) -> Result<()> {
    use crate::runtime::local::find_binary;
    let chain = crate::chain::driver(scenario.chain.kind);
    find_binary(
        scenario.chain.binary.as_deref(),
        chain.binary(),
        &format!("the chain backend ({})", chain.binary()),
        chain.build_hint(),
    )?;
    for node in &scenario.nodes {
        crate::runtime::local::find_node_binary(node)?;
        crate::runtime::local::postgres::reachable_by(node)?;
    }
    Ok(())
}
