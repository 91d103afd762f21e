//! lnbench-tui: benchmark Lightning Network nodes from a YAML scenario.
//!
//! `main` only parses the command line and calls [`run`]; everything else lives here
//! so tests can drive it in-process.

pub mod chain;
pub mod cli;
pub mod engine;
pub mod headless;
pub mod metrics;
pub mod node;
pub mod report;
pub mod runtime;
pub mod scenario;
pub mod setup;
pub mod tls;

use anyhow::Result;

/// Exit codes (see README): 0 ok, 1 a threshold failed, 2 bad input, 3 environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Ok = 0,
    ThresholdFailed = 1,
    BadInput = 2,
    Environment = 3,
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        std::process::ExitCode::from(e as u8)
    }
}

/// Runs the command line. Errors carry their context chain; [`exit_code_for`] maps
/// them to an exit code.
pub fn run(cli: cli::Cli) -> Result<Exit> {
    let _ = cli;
    anyhow::bail!("not wired yet")
}

/// The exit code for an error that ended the run.
pub fn exit_code_for(err: &anyhow::Error) -> Exit {
    let _ = err;
    Exit::Environment
}
