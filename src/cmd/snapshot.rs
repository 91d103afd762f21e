//! `lnbench-tui snapshot save`: the scenario read and checked, the target chosen, then
//! the run's orchestrator sets the network up and keeps it (`run/snapshot.rs`).

use crate::cli::{SnapshotArgs, SnapshotCommand};
use crate::exit::{Exit, UsageError};
use anyhow::{Context, Result};

pub(crate) fn snapshot(args: SnapshotArgs) -> Result<Exit> {
    match args.command {
        SnapshotCommand::Save {
            scenario,
            to,
            from,
            upgrade,
            run_dir,
            keep,
        } => {
            let scenario = crate::scenario::load(&scenario, crate::runtime::capabilities)?;
            let to = match to {
                Some(dir) => dir,
                None => crate::snapshot::cache_dir()
                    .ok_or(UsageError(
                        "no cache directory (HOME is not set): give --to DIR",
                    ))?
                    .join(&scenario.name),
            };
            if let Some(dir) = &run_dir {
                crate::files::check_writable(dir, "--run-dir")?;
            }
            let opts = crate::run::RunOptions {
                keep,
                run_dir_parent: run_dir,
                snapshot: from.as_deref().map(crate::snapshot::resolve),
                upgrade,
                ..crate::run::RunOptions::default()
            };
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .context("cannot start the async runtime")?;
            crate::tls::install_crypto_provider();
            rt.block_on(crate::run::save_snapshot(scenario, opts, &to))
        }
    }
}
