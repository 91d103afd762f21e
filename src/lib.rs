//! lnbench-tui: benchmark Lightning Network nodes from a YAML scenario.
//!
//! `main` only parses the command line and calls [`run`], which dispatches to the
//! command (`cmd/`); everything lives in the library so tests can drive it in-process.
//!
//! No print macro outside tests: `println!` panics when the reader went away (a closed
//! pipe), so every line goes through `lines` (`outln!`, `errln!`), which cannot.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod build_info;
pub mod cache;
pub mod chain;
pub mod cli;
mod cmd;
pub mod engine;
pub mod exit;
pub mod faults;
mod files;
pub mod headless;
pub mod history;
pub mod leftovers;
pub(crate) mod lines;
pub mod links;
pub mod metrics;
pub mod node;
pub mod profile;
pub mod progress;
pub mod redact;
pub mod report;
pub mod restart;
pub mod run;
pub mod runtime;
pub mod scenario;
pub mod secrets;
pub mod setup;
pub mod snapshot;
pub mod tls;
pub mod tui;

pub use exit::{Exit, UsageError};

use anyhow::Result;

/// Runs the command line. Errors carry their context chain; [`exit_code_for`] maps
/// them to an exit code.
pub fn run(cli: cli::Cli) -> Result<Exit> {
    match cli.command {
        Some(cli::Command::Validate { files }) => Ok(cmd::validate(&files)),
        Some(cli::Command::Compare {
            inputs,
            out,
            noise_pct,
        }) => Ok(
            match report::compare::run(&inputs, out.as_deref(), noise_pct)? {
                report::compare::Outcome::Written => Exit::Ok,
                report::compare::Outcome::BadInput => Exit::BadInput,
            },
        ),
        Some(cli::Command::Down { all, run, run_dir }) => cmd::down(all, run.as_deref(), run_dir),
        Some(cli::Command::Completions { shell }) => {
            printed(cmd::completions(shell, &mut std::io::stdout().lock()))
        }
        Some(cli::Command::Man) => printed(cmd::man(&mut std::io::stdout().lock())),
        Some(cli::Command::History(args)) => cmd::history(args),
        Some(cli::Command::Snapshot(args)) => cmd::snapshot(args),
        None => cmd::run_scenario(cli.run),
    }
}

/// A generated file written to stdout. A reader that stopped early (`| head`) is no
/// failure of ours; any other write error is the environment's.
fn printed(written: std::io::Result<()>) -> Result<Exit> {
    match written {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(e).context("cannot write to stdout"))
        }
        _ => Ok(Exit::Ok),
    }
}

/// The line printed for an error that ended the run, redacted: errors quote the last
/// lines of a node's log, and a terminal's output is pasted into issues too.
pub fn error_message(err: &anyhow::Error) -> String {
    redact::redact_text(&format!("Error: {err:#}"))
}

/// The exit code for an error that ended the run: bad input (2) when any error in
/// the chain is the user's input (a scenario, a flag, a directory named on the
/// command line that cannot be written), otherwise the environment (3).
pub fn exit_code_for(err: &anyhow::Error) -> Exit {
    let bad_input = err.chain().any(|e| {
        e.downcast_ref::<scenario::ScenarioError>().is_some()
            || e.downcast_ref::<UsageError>().is_some()
            || e.downcast_ref::<files::NotWritable>().is_some()
            || e.downcast_ref::<history::BadStore>().is_some()
            || e.downcast_ref::<history::record::NotRecordable>().is_some()
            || (e.downcast_ref::<snapshot::SnapshotError>()).is_some_and(|s| s.is_bad_input())
    });
    if bad_input {
        Exit::BadInput
    } else {
        Exit::Environment
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_printed_at_the_end_is_redacted() {
        let secret = "9d41c7e2b8a0f6e3";
        redact::register_secret(secret);
        let err = anyhow::anyhow!(
            "bob exited early; last lines of its log:\n[DBG] key {secret}\n--rpcpass hunter2"
        )
        .context("the load failed");
        let printed = super::error_message(&err);
        assert!(
            printed.starts_with("Error: the load failed: bob exited early"),
            "{printed}"
        );
        assert!(!printed.contains(secret), "{printed}");
        assert!(!printed.contains("hunter2"), "{printed}");
    }
}
