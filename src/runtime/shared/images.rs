//! Which image each node and the chain run, in a container or a pod: the scenario's
//! `image:`, else the image `scripts/build-images.sh` builds (`lnbench/<impl>:<version>`,
//! named by the driver) when present, else the implementation's official image; pulled
//! or not as the scenario's `pull:` says. Where the images are looked for is the
//! runtime's (the engine's store, a cluster's nodes).

use super::super::RuntimeError;
use crate::scenario::{PullPolicy, Scenario};

/// The images a run uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunImages {
    pub chain: String,
    /// `(instance name, image)` in scenario order.
    pub nodes: Vec<(String, String)>,
    /// The PostgreSQL server's, when a node has `--db.backend=postgres` (built locally
    /// only, like btcd's).
    pub postgres: Option<String>,
}

impl RunImages {
    /// Every image of the run, with etcd's when started, sorted, once each.
    pub fn names(&self, etcd: Option<&str>) -> String {
        let mut images: Vec<&str> = std::iter::once(self.chain.as_str())
            .chain(self.nodes.iter().map(|(_, i)| i.as_str()))
            .chain(self.postgres.as_deref())
            .chain(etcd)
            .collect();
        images.sort_unstable();
        images.dedup();
        images.join(", ")
    }

    pub fn node(&self, name: &str) -> Option<&str> {
        self.nodes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, i)| i.as_str())
    }
}

/// Where an image may come from, best first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidates {
    /// What needs it (`node alice`), for messages.
    pub what: String,
    /// Built locally by scripts/build-images.sh, or named in the scenario.
    pub local: Option<String>,
    /// Pullable from a registry.
    pub official: Option<String>,
}

/// The candidates for the chain and every node of `scenario`, before looking at what
/// the engine has.
pub fn candidates(scenario: &Scenario) -> (Candidates, Vec<(String, Candidates)>) {
    let chain = match &scenario.chain.image {
        Some(image) => Candidates {
            what: "the chain".into(),
            local: None,
            official: Some(image.clone()),
        },
        // The chain backends publish no official image we use: only the local build.
        None => Candidates {
            what: "the chain".into(),
            local: Some(crate::chain::driver(scenario.chain.kind).local_image()),
            official: None,
        },
    };
    let nodes = scenario
        .nodes
        .iter()
        .map(|n| {
            let what = format!("node {}", n.name);
            let c = match &n.image {
                Some(image) => Candidates {
                    what,
                    local: None,
                    official: Some(image.clone()),
                },
                None => {
                    let program = crate::node::driver(n.implementation).program();
                    let images = program.images(n.version.as_deref());
                    Candidates {
                        what,
                        local: Some(images.local),
                        official: images.official,
                    }
                }
            };
            (n.name.clone(), c)
        })
        .collect();
    (chain, nodes)
}

/// What to do for one image, given what is present.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    Use(String),
    Pull(String),
}

/// Picks an image by the pull policy, `present` telling which images the engine has.
pub fn choose(
    c: &Candidates,
    policy: PullPolicy,
    present: &dyn Fn(&str) -> bool,
) -> Result<Choice, RuntimeError> {
    let has = |i: &Option<String>| i.as_ref().filter(|i| present(i)).cloned();
    match policy {
        PullPolicy::Always => match (&c.official, has(&c.local)) {
            (Some(official), _) => Ok(Choice::Pull(official.clone())),
            // Nothing to pull (btcd): the local build is the only source.
            (None, Some(local)) => Ok(Choice::Use(local)),
            (None, None) => Err(missing(c, policy)),
        },
        PullPolicy::IfMissing | PullPolicy::Never => {
            if let Some(image) = has(&c.local).or_else(|| has(&c.official)) {
                return Ok(Choice::Use(image));
            }
            match (&c.official, policy) {
                (Some(official), PullPolicy::IfMissing) => Ok(Choice::Pull(official.clone())),
                _ => Err(missing(c, policy)),
            }
        }
    }
}

/// The command that builds the local image `local`: a release other than the pinned
/// one is built beside it, for an implementation whose build scripts take other
/// releases (`LND_VERSIONS`).
fn build_command(local: Option<&str>) -> String {
    let other_release = |program: crate::node::driver::Program| {
        let variable = program.versions_variable?;
        let release = local?
            .strip_prefix(program.local_image)?
            .strip_prefix(':')?;
        let pinned = program.images(None).local;
        (local != Some(pinned.as_str()))
            .then(|| format!("{variable}={release} scripts/build-images.sh"))
    };
    (crate::node::Implementation::ALL.into_iter())
        .find_map(|i| other_release(crate::node::driver(i).program()))
        .unwrap_or_else(|| "scripts/build-images.sh".into())
}

fn missing(c: &Candidates, policy: PullPolicy) -> RuntimeError {
    let looked: Vec<&str> = c
        .local
        .iter()
        .chain(&c.official)
        .map(String::as_str)
        .collect();
    let build = build_command(c.local.as_deref());
    let detail = match (policy, &c.official) {
        (PullPolicy::Never, Some(_)) => format!(
            "{} not present and the scenario says pull: never; build it with {build}, \
             or set pull: if-missing",
            looked.join(" and ")
        ),
        _ => format!(
            "{} not present and it is in no registry; build it with {build}, or set \
             image: to an image you have",
            looked.join(" and ")
        ),
    };
    RuntimeError::Image {
        what: c.what.clone(),
        detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lnd(version: &str) -> Candidates {
        Candidates {
            what: "node alice".into(),
            local: Some(format!("lnbench/lnd:{version}")),
            official: Some(format!("lightninglabs/lnd:{version}")),
        }
    }

    #[test]
    fn the_local_build_wins_over_the_official_image() {
        let c = lnd("v0.21.1-beta");
        let both = |_: &str| true;
        for policy in [PullPolicy::IfMissing, PullPolicy::Never] {
            assert_eq!(
                choose(&c, policy, &both).unwrap(),
                Choice::Use("lnbench/lnd:v0.21.1-beta".into())
            );
        }
        let only_official = |i: &str| i.starts_with("lightninglabs/");
        assert_eq!(
            choose(&c, PullPolicy::Never, &only_official).unwrap(),
            Choice::Use("lightninglabs/lnd:v0.21.1-beta".into())
        );
    }

    #[test]
    fn pull_policies() {
        let c = lnd("v0.21.1-beta");
        let none = |_: &str| false;
        assert_eq!(
            choose(&c, PullPolicy::IfMissing, &none).unwrap(),
            Choice::Pull("lightninglabs/lnd:v0.21.1-beta".into())
        );
        assert_eq!(
            choose(&c, PullPolicy::Always, &|_: &str| true).unwrap(),
            Choice::Pull("lightninglabs/lnd:v0.21.1-beta".into())
        );
        let err = choose(&c, PullPolicy::Never, &none)
            .unwrap_err()
            .to_string();
        assert!(err.contains("node alice"), "{err}");
        assert!(err.contains("pull: never"), "{err}");
        assert!(err.contains("scripts/build-images.sh"), "{err}");
    }

    #[test]
    fn a_missing_lnd_release_names_the_command_that_builds_its_image() {
        let none = |_: &str| false;
        let err = choose(&lnd("v0.20.1-beta"), PullPolicy::Never, &none)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("build it with LND_VERSIONS=v0.20.1-beta scripts/build-images.sh"),
            "{err}"
        );
        let pinned = (crate::node::driver(crate::node::Implementation::Lnd).program()).images(None);
        let tag = pinned.local.trim_start_matches("lnbench/lnd:");
        let err = choose(&lnd(tag), PullPolicy::Never, &none)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("build it with scripts/build-images.sh"),
            "{err}"
        );
    }

    #[test]
    fn btcd_has_only_the_local_build() {
        let c = Candidates {
            what: "the chain".into(),
            local: Some("lnbench/btcd:v0.24.2".into()),
            official: None,
        };
        assert_eq!(
            choose(&c, PullPolicy::Always, &|_: &str| true).unwrap(),
            Choice::Use("lnbench/btcd:v0.24.2".into())
        );
        for policy in [PullPolicy::IfMissing, PullPolicy::Always, PullPolicy::Never] {
            let err = choose(&c, policy, &|_: &str| false)
                .unwrap_err()
                .to_string();
            assert!(err.contains("scripts/build-images.sh"), "{err}");
        }
    }

    #[test]
    fn scenario_candidates_follow_version_and_image() {
        let text = "name: t\nchain: { implementation: btcd, image: my/btcd:dev }\nnodes:\n  alice: { implementation: lnd, version: 0.20.0-beta }\n  bob: { implementation: lnd, image: 'reg:5000/lnd:x' }\n  carol: { implementation: lnd }\nchannels:\n  - { from: alice, to: bob, capacity_sat: 100000 }\n  - { from: bob, to: carol, capacity_sat: 100000 }\nworkload: { kind: keysend, senders: [alice], receiver: carol, concurrency: 1, stop: { payments: 1 } }\n";
        let s = crate::scenario::parse(
            std::path::Path::new("t.yaml"),
            text,
            crate::runtime::capabilities,
        )
        .unwrap();
        let (chain, nodes) = candidates(&s);
        assert_eq!(chain.official.as_deref(), Some("my/btcd:dev"));
        assert_eq!(nodes[0].1, lnd("v0.20.0-beta").tap_what("node alice"));
        assert_eq!(nodes[1].1.official.as_deref(), Some("reg:5000/lnd:x"));
        assert_eq!(nodes[1].1.local, None);
        assert_eq!(
            nodes[2].1.local.as_deref(),
            Some("lnbench/lnd:v0.21.1-beta")
        );
    }

    impl Candidates {
        fn tap_what(mut self, what: &str) -> Self {
            self.what = what.into();
            self
        }
    }
}
