//! The images of a docker run: which the engine has, the plan of what to use and pull
//! (the choice itself is `shared::images`, which the kubernetes runtime makes too),
//! pulls, and the source an image was built from.

use super::super::RuntimeError;
pub use super::super::shared::images::RunImages;
use super::super::shared::images::{Candidates, Choice, candidates, choose};
use crate::scenario::Scenario;
use bollard::Docker;
use bollard::query_parameters::CreateImageOptionsBuilder;
use futures::TryStreamExt;

/// True if the engine has `image`.
pub async fn present(docker: &Docker, image: &str) -> bool {
    docker.inspect_image(image).await.is_ok()
}

/// Chooses every image of `scenario` without pulling anything: what would be pulled
/// is returned apart.
pub async fn plan(
    docker: &Docker,
    scenario: &Scenario,
) -> Result<(RunImages, Vec<String>), RuntimeError> {
    let (chain, nodes) = candidates(scenario);
    let mut names: Vec<String> = Vec::new();
    for c in std::iter::once(&chain).chain(nodes.iter().map(|(_, c)| c)) {
        names.extend(c.local.iter().chain(&c.official).cloned());
    }
    names.sort();
    names.dedup();
    let mut have = Vec::new();
    for name in names {
        if present(docker, &name).await {
            have.push(name);
        }
    }
    let is_present = |i: &str| have.iter().any(|h| h == i);
    let mut to_pull = Vec::new();
    let mut pick = |c: &Candidates| -> Result<String, RuntimeError> {
        Ok(match choose(c, scenario.pull, &is_present)? {
            Choice::Use(i) => i,
            Choice::Pull(i) => {
                if !to_pull.contains(&i) {
                    to_pull.push(i.clone());
                }
                i
            }
        })
    };
    let chain = pick(&chain)?;
    let nodes = nodes
        .iter()
        .map(|(n, c)| Ok((n.clone(), pick(c)?)))
        .collect::<Result<_, RuntimeError>>()?;
    let wants_db = scenario
        .nodes
        .iter()
        .any(crate::runtime::shared::postgres::wants);
    let postgres = if wants_db {
        Some(super::postgres::image(docker).await?)
    } else {
        None
    };
    if scenario.proxied_links() {
        proxy_image(docker).await?;
    }
    // Checked now so a missing etcd image fails (or makes `auto` run locally) before
    // anything starts; the runtime looks it up again when it starts the members.
    if (scenario.nodes.iter()).any(crate::runtime::shared::etcd::wants) {
        super::etcd::image(docker).await?;
    }
    Ok((
        RunImages {
            chain,
            nodes,
            postgres,
        },
        to_pull,
    ))
}

/// The fault proxy's image (`links:` or link faults) must be present: it is built
/// here, never pulled. Checked before anything of the run starts.
async fn proxy_image(docker: &Docker) -> Result<(), RuntimeError> {
    use crate::runtime::shared::proxy::{IMAGE, WHAT};
    if present(docker, IMAGE).await {
        return Ok(());
    }
    Err(RuntimeError::Image {
        what: WHAT.into(),
        detail: format!(
            "no {IMAGE} image is present and no registry has it; run scripts/build-images.sh \
             (it builds toxiproxy-unix with scripts/build-nodes.sh first)"
        ),
    })
}

/// Pulls `image` (`repository[:tag]`), waiting until the engine has it.
pub async fn pull(docker: &Docker, image: &str) -> Result<(), RuntimeError> {
    let (repo, tag) = split_tag(image);
    let options = CreateImageOptionsBuilder::default()
        .from_image(repo)
        .tag(tag)
        .build();
    docker
        .create_image(Some(options), None, None)
        .try_for_each(|_| async { Ok(()) })
        .await
        .map_err(|source| RuntimeError::Docker {
            what: format!(
                "cannot pull {image} (set pull: never and build local images with \
                 scripts/build-images.sh where no registry is reachable)"
            ),
            source,
        })
}

/// `repo:tag` -> (`repo`, `tag`); a `:` before the last `/` is a registry port.
fn split_tag(image: &str) -> (&str, &str) {
    match image.rfind(':') {
        Some(i) if !image[i..].contains('/') && !image.contains('@') => {
            (&image[..i], &image[i + 1..])
        }
        _ => (image, "latest"),
    }
}

/// The source commit `scripts/build-images.sh` recorded in an image it built from a
/// source tree (label `lnbench.source`), for the report.
pub async fn source_label(docker: &Docker, image: &str) -> Option<String> {
    let inspected = docker.inspect_image(image).await.ok()?;
    inspected
        .config?
        .labels?
        .remove("lnbench.source")
        .filter(|c| !c.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_tag_keeps_registry_ports() {
        assert_eq!(
            split_tag("lightninglabs/lnd:v0.21.1-beta"),
            ("lightninglabs/lnd", "v0.21.1-beta")
        );
        assert_eq!(split_tag("reg:5000/lnd"), ("reg:5000/lnd", "latest"));
        assert_eq!(split_tag("reg:5000/lnd:x"), ("reg:5000/lnd", "x"));
    }
}
