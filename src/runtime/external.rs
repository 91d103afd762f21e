//! `runtime: external`: the nodes already run elsewhere. This runtime starts, stops
//! and watches nothing, and reads no resources (the report and the metrics mark them
//! as not measured); `run/external.rs` connects to the nodes and checks them.

use super::{Runtime, RuntimeError};
use crate::scenario::{Capabilities, Support};
use async_trait::async_trait;

/// What the external runtime runs: it neither runs nor reaches into the nodes, so
/// links and faults never.
pub const CAPABILITIES: Capabilities = Capabilities {
    name: "external",
    faults: Support::Never("external nodes cannot be faulted: this tool does not run them"),
    links: Support::Never("external nodes' links cannot be shaped: this tool does not run them"),
    starts_nodes: false,
    settings: Some("external"),
    node_sockets: false,
};

pub(super) const REGISTRATION: super::Registration = super::Registration {
    capabilities: &CAPABILITIES,
    prepare,
    preflight: super::registry::no_preflight,
    leftovers: None,
};

/// Nothing to check before the run: the nodes are reached where they run.
struct Ready;

impl super::Prepared for Ready {
    fn create(self: Box<Self>, at: &super::Place<'_>) -> Box<dyn super::Runtime> {
        Box::new(ExternalRuntime::new(at.run_dir.to_path_buf(), at.keep))
    }
}

fn prepare(
    _: &crate::scenario::Scenario,
) -> futures::future::BoxFuture<'_, anyhow::Result<Box<dyn super::Prepared>>> {
    Box::pin(std::future::ready(Ok(
        Box::new(Ready) as Box<dyn super::Prepared>
    )))
}

/// A runtime for nodes the tool did not start. It owns only the run directory
/// (the latency interval log goes there), removed by `down` unless kept.
#[derive(Debug)]
pub struct ExternalRuntime {
    run_dir: std::path::PathBuf,
    keep: bool,
}

impl ExternalRuntime {
    pub fn new(run_dir: std::path::PathBuf, keep: bool) -> ExternalRuntime {
        ExternalRuntime { run_dir, keep }
    }
}

#[async_trait]
impl Runtime for ExternalRuntime {
    fn log_tail(&self, _name: &str, _lines: usize) -> String {
        "(an external node: its log is where it runs)".into()
    }

    fn exited(&mut self) -> Option<(String, String)> {
        None
    }

    fn describe(&self) -> String {
        "external".into()
    }

    async fn down(&mut self) -> Result<(), RuntimeError> {
        if self.keep {
            return Ok(());
        }
        match std::fs::remove_dir_all(&self.run_dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(RuntimeError::Io {
                path: self.run_dir.clone(),
                source: e,
            }),
            _ => Ok(()),
        }
    }
}
