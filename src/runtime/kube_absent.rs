//! The kubernetes runtime in a build without the `kubernetes` feature: scenario
//! validation refuses `runtime: kubernetes` with its place and what to do, so these
//! only keep the runtime table and `down` whole.

use crate::scenario::{Capabilities, Scenario, Support};
use futures::future::BoxFuture;

/// What a build without Kubernetes support says, wherever it is asked for.
pub const NOT_BUILT: &str = "this lnbench-tui was built without Kubernetes support (the \
                             `kubernetes` cargo feature, on by default)";

pub const CAPABILITIES: Capabilities = Capabilities {
    name: "kubernetes",
    faults: Support::Never(NOT_BUILT),
    links: Support::Never(NOT_BUILT),
    starts_nodes: true,
    settings: Some("kubernetes"),
    node_sockets: false,
};

fn prepare(_: &Scenario) -> BoxFuture<'_, anyhow::Result<Box<dyn super::Prepared>>> {
    Box::pin(async { anyhow::bail!("{NOT_BUILT}: rebuild with the default features") })
}

pub(super) const REGISTRATION: super::Registration = super::Registration {
    capabilities: &CAPABILITIES,
    prepare,
    preflight: super::registry::no_preflight,
    leftovers: Some(&LEFTOVERS),
};

/// No cluster is looked at, and `down` says why.
const LEFTOVERS: super::Leftovers = super::Leftovers {
    down: |_, _| {
        Box::pin(async {
            Err(super::RuntimeError::NoCluster {
                detail: NOT_BUILT.into(),
            })
        })
    },
    not_looked: |_| Some(format!("{NOT_BUILT}, so no namespace was looked for")),
    not_checked: None,
};
