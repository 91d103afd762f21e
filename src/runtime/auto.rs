//! `runtime: auto`: docker when an engine answers and every image is present or could
//! be pulled (the fault proxy's too, for `links:` or link faults), and the scenario
//! sets no `binary:` (a binary is only run locally); else local, saying why.

use super::registry::{Prepared, Registration, no_preflight};
use super::{docker, local};
use crate::scenario::{Capabilities, Scenario, Support};
use futures::future::BoxFuture;

/// Auto takes a runtime that runs what the scenario asks for, so it can do whatever
/// one of them does.
const CAPABILITIES: Capabilities = Capabilities {
    name: "auto",
    faults: Support::Runs,
    links: Support::Runs,
    starts_nodes: true,
    settings: None,
    node_sockets: false,
};

pub(super) const REGISTRATION: Registration = Registration {
    capabilities: &CAPABILITIES,
    prepare,
    preflight: no_preflight,
    leftovers: None,
};

fn prepare(scenario: &Scenario) -> BoxFuture<'_, anyhow::Result<Box<dyn Prepared>>> {
    Box::pin(choose(scenario))
}

async fn choose(scenario: &Scenario) -> anyhow::Result<Box<dyn Prepared>> {
    let binary_set =
        scenario.chain.binary.is_some() || scenario.nodes.iter().any(|n| n.binary.is_some());
    let why_local = if binary_set {
        "the scenario sets binary:".to_string()
    } else {
        // Any docker problem (no engine, an image missing or failing to pull, no
        // PostgreSQL image for a node on postgres) falls back to local.
        match docker::prepare_for(scenario).await {
            Ok(prepared) => return Ok(prepared),
            Err(e) => format!("{e}"),
        }
    };
    crate::lines::errln!("runtime auto: using local processes ({why_local})");
    local::prepare_for(scenario)
}
