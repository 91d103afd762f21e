//! The commands besides `compare`: check scenario files, run one, remove what runs left,
//! print shell completions or the man page.

use crate::exit::{Exit, UsageError};
use crate::{run, scenario};
use anyhow::{Context, Result};

mod down;
mod generate;
mod history;
mod snapshot;
pub(crate) use down::down;
pub(crate) use generate::{completions, man};
pub(crate) use history::history;
pub(crate) use snapshot::snapshot;

/// Checks every file and prints each one's verdict; bad input if any is wrong.
pub(crate) fn validate(files: &[std::path::PathBuf]) -> Exit {
    let mut bad = 0;
    for file in files {
        match scenario::load(file, crate::runtime::capabilities) {
            Ok(s) => match &s.sweep {
                None => crate::lines::outln!(
                    "{}: ok ({}, {} nodes)",
                    file.display(),
                    s.name,
                    s.nodes.len()
                ),
                Some(sweep) => crate::lines::outln!(
                    "{}: ok ({}, sweep of {} points: {})",
                    file.display(),
                    s.name,
                    sweep.points.len(),
                    (sweep.points.iter())
                        .zip(run::skips_here(&s))
                        .map(|(p, skip)| match skip {
                            Some(why) => format!("{} (skipped: {why})", p.label),
                            None => p.label.clone(),
                        })
                        .collect::<Vec<_>>()
                        .join(" | ")
                ),
            },
            Err(e) => {
                bad += 1;
                crate::lines::errln!("{e}");
            }
        }
    }
    if bad > 0 {
        crate::lines::errln!("{bad} of {} scenario files have errors", files.len());
        Exit::BadInput
    } else {
        Exit::Ok
    }
}

pub(crate) fn run_scenario(args: crate::cli::RunArgs) -> Result<Exit> {
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
    let mut scenario = scenario::load_with_repeat(path, args.repeat, crate::runtime::capabilities)?;
    if args.payments == Some(0) {
        return Err(UsageError("--payments must be at least 1").into());
    }
    // A sweep's points are scenarios of their own: the overrides apply to each.
    scenario.apply_overrides(&scenario::Overrides {
        payments: args.payments,
        duration: args.duration,
        profile: args.profile,
    });
    // The live view needs a terminal; scripts and CI (no terminal) get progress lines.
    let tui = !args.no_tui && std::io::IsTerminal::is_terminal(&std::io::stdout());
    // Where the run is recorded: refused before the run when it cannot be a store.
    let store = crate::history::recording_store(args.store.as_deref(), args.no_store);
    crate::history::refuse_early(store.as_deref())?;
    let recorded_dir = args.report.clone();
    let opts = run::RunOptions {
        tui,
        report_dir: args.report,
        keep: args.keep,
        run_dir_parent: args.run_dir,
        metrics_listen: args.metrics_listen,
        junit: args.junit,
        snapshot: args.snapshot.as_deref().map(crate::snapshot::resolve),
        upgrade: args.upgrade,
    };
    if opts.upgrade && opts.snapshot.is_none() && scenario.snapshot.is_none() {
        return Err(UsageError(
            "--upgrade restores a snapshot onto newer nodes: give --snapshot DIR|NAME, or \
             `snapshot:` in the scenario",
        )
        .into());
    }
    if (opts.snapshot.is_some() || scenario.snapshot.is_some())
        && let Some(refused) = crate::snapshot::refusal(&scenario)
    {
        return Err(refused.into());
    }
    // Before anything starts: a report directory found unwritable only after an
    // hour's load would lose the hour.
    if let Some(dir) = &opts.report_dir {
        crate::files::check_writable(dir, "--report")?;
    }
    if let Some(dir) = &opts.run_dir_parent {
        crate::files::check_writable(dir, "--run-dir")?;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = rt.block_on(run::execute(scenario, opts));
    // Whatever the end, a report that was written is recorded (a partial one as such).
    if let (Some(store), Some(dir)) = (store, recorded_dir)
        && (dir.join(crate::report::json::FILE_NAME).is_file()
            || dir.join(crate::report::sweep::JSON_FILE).is_file())
    {
        crate::history::record_after_run(&store, &dir);
    }
    result
}
