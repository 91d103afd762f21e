//! `lnbench-tui down`: what earlier runs left behind, found and removed.

use crate::exit::Exit;
use crate::{leftovers, runtime};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// `lnbench-tui down`: removes what runs left behind and lists it: run directories
/// (and PostgreSQL data directories) of local runs whose tool is gone, then namespaces
/// of kubernetes runs (on the cluster the kubeconfig names, if any), then containers,
/// networks and volumes of docker runs.
pub(crate) fn down(all: bool, only: Option<&str>, run_dir: Option<PathBuf>) -> Result<Exit> {
    let temp = std::env::temp_dir();
    let parent = run_dir.unwrap_or_else(|| temp.clone());
    let LocalDown {
        stale,
        sockets,
        kept_dirs,
    } = remove_local(&parent, &temp, all, only);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    // A token's lock file goes only once every place its run's objects may be in was
    // looked at: with the file gone, `down` could no longer tell that run is over.
    let mut every_place_seen = only.is_none();
    let mut found = Vec::new();
    for place in runtime::leftover_places() {
        let down = match rt.block_on((place.down)(all, only)) {
            Ok(down) => down.unwrap_or_default(),
            Err(e) => {
                every_place_seen = false;
                match ((place.not_looked)(&e), place.not_checked) {
                    (Some(said), _) => crate::lines::outln!("{said}"),
                    (None, Some(what)) => crate::lines::errln!("{what} not checked: {e}"),
                    (None, None) => return Err(e.into()),
                }
                runtime::shared::Down::default()
            }
        };
        print_down(&down);
        found.push(down);
    }
    let nothing_elsewhere = (found.iter()).all(|d| d.removed.is_empty() && d.kept.is_empty());
    if stale.is_empty() && sockets.is_empty() && kept_dirs.is_empty() && nothing_elsewhere {
        crate::lines::outln!(
            "nothing to remove: no run directory (lnbench-*) of a finished tool in {}, and \
             no namespace, container, network or volume labelled lnbench.run where looked",
            parent.display()
        );
    }
    if every_place_seen && let Some(dir) = leftovers::lock::owners_dir() {
        // Free: their tools are gone, and their runs were removed above or left
        // nothing (a run left alone is one whose token is held or not here).
        for file in leftovers::lock::remove_free_tokens_in(&dir) {
            crate::lines::outln!("removed token lock file {}", file.display());
        }
    }
    Ok(Exit::Ok)
}

/// What `down` found of local runs: run directories removed (with their PostgreSQL
/// data), socket directories removed, and directories left alone with the reason.
struct LocalDown {
    stale: Vec<leftovers::Stale>,
    sockets: Vec<PathBuf>,
    kept_dirs: Vec<(PathBuf, String)>,
}

/// Removes the run directories under `parent` (PostgreSQL data and socket directories
/// under `temp`) of local runs whose tool is gone, or only run `only`'s; says what it did.
fn remove_local(parent: &Path, temp: &Path, all: bool, only: Option<&str>) -> LocalDown {
    let mut kept_dirs = Vec::new();
    let mut stale = leftovers::stale_runs(parent, temp, all, &mut kept_dirs);
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
                Ok(()) => crate::lines::outln!(
                    "removed directory {}{}",
                    dir.display(),
                    whose.as_deref().unwrap_or_default()
                ),
                Err(e) => crate::lines::errln!("could not remove {}: {e}", dir.display()),
            }
        }
    }
    let sockets = match only {
        None => leftovers::stale_socket_dirs(temp, leftovers::is_live_tool),
        Some(_) => Vec::new(),
    };
    for dir in &sockets {
        match std::fs::remove_dir_all(dir) {
            Ok(()) => crate::lines::outln!("removed directory {}", dir.display()),
            Err(e) => crate::lines::errln!("could not remove {}: {e}", dir.display()),
        }
    }
    for (dir, why) in &kept_dirs {
        crate::lines::outln!(
            "left {} alone: {why} (`lnbench-tui down --all` removes it too)",
            dir.display()
        );
    }
    LocalDown {
        stale,
        sockets,
        kept_dirs,
    }
}

fn print_down(down: &runtime::shared::Down) {
    for item in &down.removed {
        match down.others.iter().find(|(run, _)| *run == item.run) {
            Some((_, whose)) => crate::lines::outln!("removed {item} (a run of {whose})"),
            None => crate::lines::outln!("removed {item}"),
        }
    }
    for (run, why) in &down.kept {
        crate::lines::outln!(
            "left run {run} alone: {why} (`lnbench-tui down --all` removes it too)"
        );
    }
}
