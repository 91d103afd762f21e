//! The results history: every run that writes a report is recorded in a store (an
//! SQLite file by default), so that later runs can be listed, trended and checked
//! against the earlier ones (`lnbench-tui history ...`).
//!
//! - `record.rs`: what a run is in the store, read from its report.json (and, for a
//!   sweep or repeated run, each point's).
//! - `import.rs`: report directories (single runs, sweeps) into records.
//! - `store.rs`: the store, its versioned migrations, inserts and queries, shared by
//!   SQLite (`sqlite.rs`) and PostgreSQL (`pg.rs`); `sql.rs` holds where their SQL
//!   differs, `dsn.rs` where the store is (a file, or a server's URL, redacted).
//! - `check.rs`: the latest run against the earlier comparable ones, with the
//!   significance test of `compare` ([`crate::report::stats::significance`]).
//! - `site.rs`: a static, script-free site of trend charts (SVG) per scenario.

pub mod check;
pub mod dsn;
pub mod import;
mod pg;
pub mod record;
pub mod site;
pub mod sql;
mod sqlite;
pub mod store;

#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The environment variable that names the store (a path or a `postgres://` URL), or
/// `off` to record nothing.
pub const STORE_ENV: &str = "LNBENCH_HISTORY";
/// The store's file name in the cache directory.
pub const FILE_NAME: &str = "history.sqlite";

/// A store that cannot be used as given: the user's input (exit 2). Said with the
/// path and what to do instead.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadStore(pub String);

/// Where runs are recorded: `--store PATH`, else `$LNBENCH_HISTORY` (`off`: nowhere),
/// else `history.sqlite` in the cache directory (`$LNBENCH_CACHE`, else
/// `$XDG_CACHE_HOME/lnbench-tui`, else `~/.cache/lnbench-tui`). `None`: not recorded.
pub fn store_path(flag: Option<&Path>) -> Option<PathBuf> {
    store_path_from(flag, &|key| std::env::var_os(key))
}

pub(crate) fn store_path_from(
    flag: Option<&Path>,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Option<PathBuf> {
    if let Some(path) = flag {
        return Some(path.to_path_buf());
    }
    match env(STORE_ENV).filter(|v| !v.is_empty()) {
        Some(v) if v == "off" => None,
        Some(v) => Some(PathBuf::from(v)),
        None => Some(
            crate::cache::cache_bin_dir_from(env)?
                .parent()?
                .join(FILE_NAME),
        ),
    }
}

/// Where a run records itself: nowhere with `--no-store`; else `--store PATH`; else
/// `$LNBENCH_HISTORY` (`off`: nowhere); else, for a release build, history.sqlite in the
/// cache directory. A debug build (`cargo test`, `cargo run` without `--release`)
/// records only where told, so tests never write to the machine's store.
pub fn recording_store(flag: Option<&Path>, no_store: bool) -> Option<PathBuf> {
    recording_store_from(
        flag,
        no_store,
        &|key| std::env::var_os(key),
        cfg!(debug_assertions),
    )
}

pub(crate) fn recording_store_from(
    flag: Option<&Path>,
    no_store: bool,
    env: &dyn Fn(&str) -> Option<OsString>,
    debug_build: bool,
) -> Option<PathBuf> {
    let told = flag.is_some() || env(STORE_ENV).is_some_and(|v| !v.is_empty());
    if no_store || (debug_build && !told) {
        return None;
    }
    store_path_from(flag, env)
}

/// Records the report a run wrote in `report_dir` (report.json, or sweep.json with
/// its points) into the store at `path`. Never fails the run: a failure is a warning
/// on stderr, and the report stays as written.
pub fn record_after_run(path: &Path, report_dir: &Path) {
    let recorded = import::read_dir(report_dir)
        .map_err(anyhow::Error::new)
        .and_then(|run| {
            let mut store = store::Store::open(path)?;
            store.insert(&run)
        });
    match recorded {
        Ok(store::Inserted::New(id)) => {
            crate::lines::errln!("history: recorded as run {id} in {}", named(path))
        }
        Ok(store::Inserted::Already(id)) => {
            crate::lines::errln!("history: already recorded as run {id}")
        }
        Err(e) => crate::lines::errln!(
            "warning: the run was not recorded in the history ({}): {e:#}; the report is \
             intact, `lnbench-tui history import {}` records it later",
            named(path),
            report_dir.display()
        ),
    }
}

/// The store at `path` as it may be printed: a file's path, a server's URL without
/// its password.
pub fn named(path: &Path) -> String {
    match dsn::StoreAt::of(path) {
        Ok(at) => at.to_string(),
        Err(_) if path.to_str().is_some_and(dsn::is_postgres) => "(a PostgreSQL URL)".into(),
        Err(_) => path.display().to_string(),
    }
}

/// Before a run: a store that cannot be one (a directory, a URL that does not
/// parse) is refused at once, not after the load.
pub fn refuse_early(path: Option<&Path>) -> Result<(), BadStore> {
    let Some(path) = path else { return Ok(()) };
    if path.is_dir() {
        return Err(BadStore(format!(
            "--store {}: a directory; give a file, e.g. {}",
            path.display(),
            path.join(FILE_NAME).display()
        )));
    }
    dsn::StoreAt::of(path).map(|_| ())
}
