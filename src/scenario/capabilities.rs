//! What a runtime can run, as the runtime declares it. Validation refuses a scenario
//! that asks a runtime for more than it declares, so the rules name no runtime: each
//! runtime module states its own capabilities and `runtime/mod.rs` registers them.

use super::RuntimeKind;

/// One runtime's capabilities: plain data, one constant per runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// The runtime's name as messages give it (`docker`).
    pub name: &'static str,
    /// Whether it runs node and chain `faults:` (kill, pause, restart, mining): nodes
    /// it can signal.
    pub faults: Support,
    /// Whether it runs `links:` and link faults: a proxy on the nodes' peer links.
    pub links: Support,
    /// Whether it starts the chain and the nodes (and funds them and opens the
    /// scenario's channels); false for nodes that already run elsewhere, which bring
    /// their own chain and channels and may be listed in a sim-ln nodes file.
    pub starts_nodes: bool,
    /// The top-level section of the scenario that holds this runtime's own settings
    /// (`kubernetes:`), refused on every other runtime.
    pub settings: Option<&'static str>,
    /// Whether the tool reaches the nodes' Unix sockets (Core Lightning's JSON-RPC):
    /// only where the nodes run on this machine as its own processes.
    pub node_sockets: bool,
}

/// Whether a runtime runs a feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    Runs,
    /// Never, for the reason given (the message the scenario's author reads).
    Never(&'static str),
}

/// The registered runtimes' capabilities by kind, which the caller of
/// [`super::load`] and [`super::parse`] passes in (the runtimes sit above scenarios).
pub type Runtimes = fn(RuntimeKind) -> &'static Capabilities;
