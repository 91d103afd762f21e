//! Where a node's daemon comes from: its binary (in the build cache or on PATH), the
//! command that builds it, the version a node runs when its scenario names none, and
//! the images of that version for the container runtimes.

/// The daemon of one implementation, as the runtimes look for it: one plain answer,
/// as every implementation has each of these facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Program {
    /// The daemon's binary name, looked up in the build cache and on PATH.
    pub binary: &'static str,
    /// The command that builds the binary, for "not found" messages.
    pub build_hint: &'static str,
    /// The version a node runs when the scenario names none (the image tag).
    pub default_version: &'static str,
    /// The repository of the image `scripts/build-images.sh` builds (`lnbench/lnd`).
    pub local_image: &'static str,
    /// The repository of the image the implementation's project publishes, if the
    /// tool can start it (its layout is the tool's image's); None otherwise.
    pub official_image: Option<&'static str>,
    /// The variable with which the build scripts build other releases beside the
    /// pinned one (`LND_VERSIONS=v0.19.2 scripts/build-nodes.sh`), if they can.
    pub versions_variable: Option<&'static str>,
    /// The build's stamp of the optional parts compiled in, if the build can leave
    /// some out.
    pub build_tags: Option<BuildTags>,
}

/// Where a build records the optional parts it compiled in (Go build tags), and the
/// tag each database backend needs: a node that asks for a backend its binary lacks
/// is refused before anything starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuildTags {
    /// The stamp's file name beside the binary (`.lnd.tags`): the tags, space-separated.
    pub stamp: &'static str,
    /// Each backend (as [`super::NodeDriver::database`] names it) and its tag.
    pub backends: &'static [(&'static str, &'static str)],
    /// The command that builds a binary with every backend's tag.
    pub build_all: &'static str,
}

/// Images for the docker runtime, best first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeImages {
    /// Built locally by `scripts/build-images.sh`.
    pub local: String,
    /// Published by the implementation's project, pullable from a registry.
    pub official: Option<String>,
}

impl Program {
    /// The images of `version` (the default version when None), its tag the version
    /// with a leading `v` (`0.13.0` and `v0.13.0` both give `v0.13.0`).
    pub fn images(&self, version: Option<&str>) -> NodeImages {
        let tag = image_tag(version.unwrap_or(self.default_version));
        NodeImages {
            local: format!("{}:{tag}", self.local_image),
            official: self.official_image.map(|repo| format!("{repo}:{tag}")),
        }
    }
}

/// The image tag of a version: `26.06.6` and `v26.06.6` both give `v26.06.6`.
pub(crate) fn image_tag(version: &str) -> String {
    let v = version.trim();
    if v.starts_with(|c: char| c.is_ascii_digit()) {
        format!("v{v}")
    } else {
        v.to_string()
    }
}
