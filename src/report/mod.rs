//! The report of a run: one serializable model with a schema version, written by one
//! file per format (`json.rs` now; HTML and others later).

pub mod host;
pub mod json;

use crate::setup::StepTiming;
use serde::Serialize;

pub use host::Host;

/// Bump on any breaking change of the JSON shape; `docs/report.schema.json` describes it.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub tool: Tool,
    /// False when the run was cut short (Ctrl-C, SIGTERM, an error during the load):
    /// the results then cover only what was done.
    pub complete: bool,
    /// Why the run ended early, when it did (`SIGINT`, `SIGTERM`, an error message).
    pub interrupted_by: Option<String>,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub finished_at: String,
    pub scenario: ScenarioText,
    pub runtime: String,
    pub host: Host,
    pub chain: ChainInfo,
    pub nodes: Vec<NodeReport>,
    pub workload: WorkloadReport,
    /// Setup steps in order with the time each took.
    pub setup: Vec<StepTiming>,
    /// The measured load, including what the load generator itself cost
    /// (`tool_cpu_s`, `tool_process`).
    pub results: crate::metrics::Summary,
}

#[derive(Debug, Clone, Serialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

impl Tool {
    pub fn this() -> Tool {
        Tool {
            name: env!("CARGO_PKG_NAME").into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ScenarioText {
    pub name: String,
    pub description: String,
    pub path: String,
    /// The scenario file exactly as written.
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChainInfo {
    pub implementation: String,
    pub version: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct NodeReport {
    pub name: String,
    pub group: String,
    pub implementation: String,
    pub version: String,
    pub pubkey: String,
    /// `sender`, `receiver` or `router`.
    pub role: String,
    pub binary: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct WorkloadReport {
    /// `keysend`, `invoice` (creation timed as part of the payment) or
    /// `invoice-pregenerated` (only paying is timed).
    pub kind: String,
    pub amount_msat: u64,
    /// `closed` (fixed concurrency) or `open` (scheduled rate).
    pub load_model: String,
    pub concurrency: Option<u32>,
    pub senders: Vec<String>,
    pub receivers: Vec<String>,
    pub stop_after_payments: Option<u64>,
    pub stop_after_seconds: Option<f64>,
    pub payment_timeout_seconds: f64,
}
