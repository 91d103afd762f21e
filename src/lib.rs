//! lnbench-tui: benchmark Lightning Network nodes from a YAML scenario.
//!
//! `main` only parses the command line and calls [`run`]; everything else lives here
//! so tests can drive it in-process.

pub mod cache;
pub mod chain;
pub mod cli;
pub mod engine;
pub mod faults;
pub mod headless;
pub mod leftovers;
pub mod links;
pub mod metrics;
pub mod node;
pub mod profile;
pub mod progress;
pub mod report;
pub mod restart;
pub mod run;
pub mod runtime;
pub mod scenario;
pub mod setup;
pub mod sweep;
pub mod tls;
pub mod tui;

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// Exit codes (see README).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The run completed (and every threshold passed).
    Ok = 0,
    /// A threshold failed.
    ThresholdFailed = 1,
    /// Bad input: a scenario or a flag is wrong.
    BadInput = 2,
    /// The environment failed: a binary is missing, a node did not start, an RPC failed.
    Environment = 3,
    /// Stopped by SIGINT / SIGTERM; the partial report is written and everything torn down.
    Interrupted = 130,
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        std::process::ExitCode::from(e as u8)
    }
}

/// An error with its sources, `outer: inner: innermost`, for one-line messages.
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    use std::fmt::Write;
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let _ = write!(text, ": {s}");
        source = s.source();
    }
    text
}

/// Runs the command line. Errors carry their context chain; [`exit_code_for`] maps
/// them to an exit code.
pub fn run(cli: cli::Cli) -> Result<Exit> {
    match cli.command {
        Some(cli::Command::Validate { files }) => Ok(validate(&files)),
        Some(cli::Command::Compare {
            inputs,
            out,
            noise_pct,
        }) => Ok(match report::compare::run(&inputs, &out, noise_pct)? {
            report::compare::Outcome::Written => Exit::Ok,
            report::compare::Outcome::BadInput => Exit::BadInput,
        }),
        Some(cli::Command::Down { all, run, run_dir }) => down(all, run.as_deref(), run_dir),
        None => run_scenario(cli.run),
    }
}

/// Checks every file and prints each one's verdict; bad input if any is wrong.
fn validate(files: &[std::path::PathBuf]) -> Exit {
    let mut bad = 0;
    for file in files {
        match scenario::load(file, runtime::capabilities) {
            Ok(s) => match &s.sweep {
                None => println!(
                    "{}: ok ({}, {} nodes)",
                    file.display(),
                    s.name,
                    s.nodes.len()
                ),
                Some(sweep) => println!(
                    "{}: ok ({}, sweep of {} points: {})",
                    file.display(),
                    s.name,
                    sweep.points.len(),
                    sweep
                        .points
                        .iter()
                        .map(|p| match &p.skip {
                            Some(why) => format!("{} (skipped: {why})", p.label),
                            None => p.label.clone(),
                        })
                        .collect::<Vec<_>>()
                        .join(" | ")
                ),
            },
            Err(e) => {
                bad += 1;
                eprintln!("{e}");
            }
        }
    }
    if bad > 0 {
        eprintln!("{bad} of {} scenario files have errors", files.len());
        Exit::BadInput
    } else {
        Exit::Ok
    }
}

/// `lnbench-tui down`: removes what runs left behind and lists it: run directories
/// (and PostgreSQL data directories) of local runs whose tool is gone, then namespaces
/// of kubernetes runs (on the cluster the kubeconfig names, if any), then containers,
/// networks and volumes of docker runs.
fn down(all: bool, only: Option<&str>, run_dir: Option<PathBuf>) -> Result<Exit> {
    let temp = std::env::temp_dir();
    let parent = run_dir.unwrap_or_else(|| temp.clone());
    let mut kept_dirs = Vec::new();
    let mut stale =
        leftovers::stale_runs(&parent, &temp, all, leftovers::is_live_tool, &mut kept_dirs);
    if let Some(id) = only {
        let dir_name = format!("lnbench-{id}");
        let is_it = |d: &Path| d.file_name().is_some_and(|n| n == dir_name.as_str());
        stale.retain(|s| is_it(&s.run_dir));
        kept_dirs.retain(|(d, _)| is_it(d));
    }
    for s in &stale {
        let whose = s.user.as_ref().map(|u| format!(" (a run of {u})"));
        for dir in std::iter::once(&s.run_dir).chain(&s.postgres) {
            match std::fs::remove_dir_all(dir) {
                Ok(()) => println!(
                    "removed directory {}{}",
                    dir.display(),
                    whose.as_deref().unwrap_or_default()
                ),
                Err(e) => eprintln!("could not remove {}: {e}", dir.display()),
            }
        }
    }
    let sockets = match only {
        None => leftovers::stale_socket_dirs(&temp, leftovers::is_live_tool),
        Some(_) => Vec::new(),
    };
    for dir in &sockets {
        match std::fs::remove_dir_all(dir) {
            Ok(()) => println!("removed directory {}", dir.display()),
            Err(e) => eprintln!("could not remove {}: {e}", dir.display()),
        }
    }
    for (dir, why) in &kept_dirs {
        println!(
            "left {} alone: {why} (`lnbench-tui down --all` removes it too)",
            dir.display()
        );
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    // The cluster first: a missing Docker engine ends `down` with its error.
    let kube = match rt.block_on(runtime::kube::down_all(all, only)) {
        Ok(found) => found.unwrap_or_default(),
        Err(e) => {
            eprintln!("kubernetes namespaces not checked: {e}");
            runtime::shared::Down::default()
        }
    };
    print_down(&kube);
    let down = rt.block_on(runtime::docker::down_all(all, only))?;
    if stale.is_empty()
        && kube.removed.is_empty()
        && kube.kept.is_empty()
        && sockets.is_empty()
        && kept_dirs.is_empty()
        && down.removed.is_empty()
        && down.kept.is_empty()
    {
        println!(
            "nothing to remove: no run directory of a finished tool in {}, and no namespace, \
             container, network or volume labelled lnbench.run",
            parent.display()
        );
    }
    print_down(&down);
    Ok(Exit::Ok)
}

fn print_down(down: &runtime::shared::Down) {
    for item in &down.removed {
        match down.others.iter().find(|(run, _)| *run == item.run) {
            Some((_, whose)) => println!("removed {item} (a run of {whose})"),
            None => println!("removed {item}"),
        }
    }
    for (run, why) in &down.kept {
        println!("left run {run} alone: {why} (`lnbench-tui down --all` removes it too)");
    }
}

fn run_scenario(args: cli::RunArgs) -> Result<Exit> {
    let Some(path) = args.scenario.as_deref() else {
        return Err(anyhow::Error::new(UsageError(
            "no scenario given: run `lnbench-tui SCENARIO.yaml`, e.g. \
             `lnbench-tui scenarios/alice-pays-bob.yaml --report out/alice-pays-bob` \
             (see --help)",
        )));
    };
    if let Some(n) = args.repeat
        && !(1..=scenario::MAX_REPEATS).contains(&n)
    {
        return Err(UsageError("--repeat must be between 1 and 20").into());
    }
    let mut scenario = scenario::load_with_repeat(path, args.repeat, runtime::capabilities)?;
    if let Some(n) = args.payments {
        if n == 0 {
            return Err(UsageError("--payments must be at least 1").into());
        }
        scenario.workload.stop.payments = Some(n);
    }
    if let Some(d) = args.duration {
        scenario.workload.stop.duration = Some(d);
    }
    if args.profile && scenario.profile.is_none() {
        scenario.profile = Some(scenario::ProfileSpec::every_node(&scenario.nodes));
    }
    // A sweep's points are scenarios of their own: the overrides apply to each.
    if let Some(sweep) = &mut scenario.sweep {
        for point in &mut sweep.points {
            let stop = &mut point.scenario.workload.stop;
            stop.payments = args.payments.or(stop.payments);
            stop.duration = args.duration.or(stop.duration);
            if args.profile && point.scenario.profile.is_none() {
                point.scenario.profile =
                    scenario::ProfileSpec::every_node(&point.scenario.nodes).into();
            }
        }
    }
    // The live view needs a terminal; scripts and CI (no terminal) get progress lines.
    let tui = !args.no_tui && std::io::IsTerminal::is_terminal(&std::io::stdout());
    let opts = run::RunOptions {
        tui,
        report_dir: args.report,
        keep: args.keep,
        run_dir_parent: args.run_dir,
        metrics_listen: args.metrics_listen,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(run::execute(scenario, opts))
}

/// A mistake in how the tool was called (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(&'static str);

/// The exit code for an error that ended the run: bad input (2) when any error in
/// the chain is the user's input, otherwise the environment (3).
pub fn exit_code_for(err: &anyhow::Error) -> Exit {
    let bad_input = err.chain().any(|e| {
        e.downcast_ref::<scenario::ScenarioError>().is_some()
            || e.downcast_ref::<UsageError>().is_some()
    });
    if bad_input {
        Exit::BadInput
    } else {
        Exit::Environment
    }
}
