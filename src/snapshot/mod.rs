//! Network snapshots (local and docker runtimes): the chain's and every node's data directory
//! after setup, kept with the scenario's network, the binaries' versions and a
//! sha256 of every file (`manifest.json`), so a later run starts from them instead of
//! funding and opening channels again.
//!
//! A snapshot directory holds `manifest.json`, `scenario.yaml` (the text it was saved
//! from) and `data/<name>/` for the chain (`data/chain`) and each node. The manifest
//! is written last: a directory without one is no snapshot.
//!
//! This module only keeps and checks files; `run/snapshot.rs` brings the network up
//! and down around it. It knows scenario/ and node/ only.

mod files;
mod manifest;
#[cfg(test)]
mod tests;

pub use files::{copy_tree, hash_file, private_dir};
pub use manifest::{FORMAT, Manifest, Migration, network_form, network_to_restore};

use crate::scenario::Scenario;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The manifest's file name in a snapshot directory.
pub const MANIFEST: &str = "manifest.json";
/// The scenario text a snapshot was saved from.
pub const SCENARIO: &str = "scenario.yaml";
/// The directory of the saved data dirs.
pub const DATA: &str = "data";
/// In the chain's data dir: its blocks, raw (hex), one a line from height 1. btcd
/// empties its regtest database at every start; they are submitted again.
pub const CHAIN_BLOCKS: &str = "snapshot-blocks.hex";

/// Why a snapshot cannot be saved or used. Each names where: the snapshot's file
/// (with line and column in the manifest where it has one) or the directory.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error(
        "{}: no snapshot there ({detail}); save one with `lnbench-tui snapshot save SCENARIO --to {}`",
        path.display(),
        path.display()
    )]
    Missing { path: PathBuf, detail: String },
    #[error("{at}: unreadable snapshot manifest: {detail}")]
    Unreadable { at: String, detail: String },
    #[error(
        "{at}: the snapshot was saved for another network: {reason}; save one of this scenario \
         (`lnbench-tui snapshot save`), or run the scenario it was saved from"
    )]
    Mismatch { at: String, reason: String },
    #[error(
        "{at}: {what} was saved with {saved:?}, this machine runs {here:?}; save the snapshot \
         again with these binaries, or run it with the binaries it was saved with (a node's \
         newer version: `--upgrade` restores it and times its migration)"
    )]
    Version {
        at: String,
        what: String,
        saved: String,
        here: String,
    },
    #[error("{at}: the snapshot was changed after it was saved: {detail}")]
    Tampered { at: String, detail: String },
    #[error("{at}: {detail}")]
    Refused { at: String, detail: String },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl SnapshotError {
    /// True for the user's input (exit 2): a wrong, missing or tampered snapshot, or a
    /// scenario that cannot have one. Versions of this machine's binaries and I/O
    /// failures are the environment's (exit 3).
    pub fn is_bad_input(&self) -> bool {
        !matches!(
            self,
            SnapshotError::Version { .. } | SnapshotError::Io { .. }
        )
    }

    pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SnapshotError + '_ {
        move |source| SnapshotError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Where snapshots named without a path live: `snapshots/` in the cache directory.
pub fn cache_dir() -> Option<PathBuf> {
    let bin = crate::cache::cache_bin_dir()?;
    Some(bin.parent()?.join("snapshots"))
}

/// The directory of `--snapshot ARG`: a path when it has a `/`, is `.`-relative or is
/// a directory here, else the snapshot of that name in the cache.
pub fn resolve(arg: &Path) -> PathBuf {
    let text = arg.to_string_lossy();
    if text.contains('/') || text.starts_with('.') || arg.is_dir() {
        return arg.to_path_buf();
    }
    cache_dir().map_or_else(|| arg.to_path_buf(), |dir| dir.join(arg))
}

/// The directory of a scenario's `snapshot:` field: a path (with a `/`, or
/// `.`-relative) is relative to the scenario file; a name is one in the cache.
pub fn resolve_field(scenario_path: &Path, value: &str) -> PathBuf {
    if value.contains('/') || value.starts_with('.') {
        let dir = scenario_path.parent().unwrap_or(Path::new(""));
        return dir.join(value);
    }
    cache_dir().map_or_else(|| PathBuf::from(value), |dir| dir.join(value))
}

/// What a snapshot cannot keep: etcd's databases (PostgreSQL's are dumped),
/// sweeps over several networks (one network per snapshot; a sweep of the load or a
/// history ladder runs on one), and channels between two nodes that would not dial
/// each other once restored (two LDK nodes). Refused before anything starts.
pub fn refusal(scenario: &Scenario) -> Option<SnapshotError> {
    let at = scenario.path.display().to_string();
    if let Some(sweep) = &scenario.sweep
        && (sweep.points.iter()).any(|p| p.network != sweep.points[0].network)
    {
        return Some(SnapshotError::Refused {
            at,
            detail: "this sweep sets up several networks; a snapshot keeps one: sweep \
                     only what runs on one network (the load, a history ladder), or run \
                     without `sweep:`"
                .into(),
        });
    }
    for spec in &scenario.nodes {
        let driver = crate::node::driver(spec.implementation);
        let postgres = spec.database == crate::node::Database::Postgres
            || (driver.postgres()).is_some_and(|p| p.wanted_by(&spec.args));
        // PostgreSQL databases are dumped into the data dirs; etcd's are not kept.
        if !postgres && (driver.etcd()).is_some_and(|e| e.wanted_by(&spec.args)) {
            return Some(SnapshotError::Refused {
                at: locate_in_file(&scenario.source, &scenario.path, &format!("{}:", spec.name)),
                detail: format!(
                    "node {} keeps its data on etcd, which snapshots do not keep yet: use \
                     the implementation's default database (bbolt, SQLite) or PostgreSQL",
                    spec.name
                ),
            });
        }
    }
    let dials = |name: &str| {
        (scenario.nodes.iter().find(|n| n.name == name)).is_none_or(|n| {
            (crate::node::driver(n.implementation).channel_rules()).dials_on_request
        })
    };
    if let Some(ch) = (scenario.channels.iter()).find(|c| !dials(&c.from) && !dials(&c.to)) {
        return Some(SnapshotError::Refused {
            at: locate_in_file(&scenario.source, &scenario.path, "channels:"),
            detail: format!(
                "the channel {} - {} joins two LDK nodes: ldk-server at its pin has no call \
                 that dials a peer, and a restored node dials only the saving run's \
                 addresses, so neither end would reconnect; give one end another \
                 implementation",
                ch.from, ch.to
            ),
        });
    }
    None
}

/// What a saved snapshot holds, as `save` reports it.
#[derive(Debug)]
pub struct Saved {
    pub files: usize,
    pub bytes: u64,
}

/// Saves the data dirs `names` of `run_dir` (the chain and nodes, stopped) into `to`
/// with the manifest, leaving out logs and the files of `leave_out` (`<name>/<path>`:
/// what the runtime writes at each start). `to` must not exist yet, or be empty.
pub fn save(
    run_dir: &Path,
    names: &[String],
    leave_out: &[String],
    to: &Path,
    manifest: Manifest,
    scenario_text: &str,
) -> Result<Saved, SnapshotError> {
    check_target(to)?;
    private_dir(&to.join(DATA))?;
    let mut manifest = manifest;
    let mut saved = Saved { files: 0, bytes: 0 };
    for name in names {
        let from = run_dir.join(name);
        let into = to.join(DATA).join(name);
        let keep = |rel: &str| {
            files::keep_in_snapshot(rel) && !leave_out.contains(&format!("{name}/{rel}"))
        };
        let copied = copy_tree(&from, &into, &keep)?;
        for (rel, entry) in copied {
            saved.files += 1;
            saved.bytes += entry.bytes;
            manifest.files.insert(format!("{name}/{rel}"), entry);
        }
    }
    // Each written whole under a temporary name, then renamed: a snapshot interrupted
    // here has no manifest, and one without a manifest is refused, never half read.
    // The manifest last: it vouches for everything before it.
    for (name, text) in [(SCENARIO, scenario_text), (MANIFEST, &manifest.to_text())] {
        crate::files::write_file(to, name, text).map_err(|e| SnapshotError::Io {
            path: to.join(name),
            source: std::io::Error::other(format!("{e:#}")),
        })?;
    }
    Ok(saved)
}

/// A target directory is new or empty: a snapshot is never written over another.
pub fn check_target(to: &Path) -> Result<(), SnapshotError> {
    match std::fs::read_dir(to) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(SnapshotError::Io {
            path: to.to_path_buf(),
            source,
        }),
        Ok(mut entries) => match entries.next() {
            None => Ok(()),
            Some(_) => Err(SnapshotError::Refused {
                at: to.display().to_string(),
                detail: "the directory is not empty; give a new one (--to DIR) or remove it".into(),
            }),
        },
    }
}

/// Reads the manifest of the snapshot in `dir` and checks it against the scenario's
/// network and this machine's `versions` (name to version, `chain` included); with
/// the migrations the restore asks for, which pass ([`network_to_restore`]). With
/// `upgrade`, a node saved with another version passes too, as a migration from that
/// version to this one; the chain's version must match still.
pub fn check(
    dir: &Path,
    scenario: &Scenario,
    versions: &BTreeMap<String, String>,
    upgrade: bool,
) -> Result<(Manifest, Vec<Migration>), SnapshotError> {
    let path = dir.join(MANIFEST);
    let text = match crate::files::read_text(&path, crate::files::REPORT_MAX_BYTES) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let detail = if dir.is_dir() {
                format!("the directory has no {MANIFEST}")
            } else {
                "the directory does not exist".to_string()
            };
            return Err(SnapshotError::Missing {
                path: dir.to_path_buf(),
                detail,
            });
        }
        Err(source) => return Err(SnapshotError::Io { path, source }),
    };
    let manifest = Manifest::parse(&text, &path)?;
    let (wanted, mut migrations) = network_to_restore(scenario, &manifest.network);
    manifest.check_network(&wanted, &text, &path)?;
    let upgrades = manifest.check_versions(versions, upgrade, &text, &path)?;
    // A node upgraded onto another schema as well: one migration, both named.
    for up in upgrades {
        match migrations.iter_mut().find(|m| m.node == up.node) {
            Some(m) => {
                m.from = format!("{} ({})", m.from, up.from);
                m.to = format!("{} ({})", m.to, up.to);
            }
            None => migrations.push(up),
        }
    }
    Ok((manifest, migrations))
}

/// Copies the snapshot's data dirs into `run_dir`, checking every file's sha256
/// against the manifest as it goes; a file changed, missing or added is refused,
/// named. Returns the bytes copied.
pub fn restore(dir: &Path, manifest: &Manifest, run_dir: &Path) -> Result<u64, SnapshotError> {
    let data = dir.join(DATA);
    let copied = copy_tree(&data, run_dir, &|_| true)?;
    let manifest_path = dir.join(MANIFEST);
    let mut bytes = 0;
    for (rel, entry) in &copied {
        bytes += entry.bytes;
        match manifest.files.get(rel) {
            None => {
                return Err(SnapshotError::Tampered {
                    at: data.join(rel).display().to_string(),
                    detail: format!("{rel} is not in {MANIFEST}"),
                });
            }
            Some(saved) if saved.sha256 != entry.sha256 => {
                return Err(SnapshotError::Tampered {
                    at: data.join(rel).display().to_string(),
                    detail: format!(
                        "{rel}: sha256 {} where {MANIFEST} says {}",
                        entry.sha256, saved.sha256
                    ),
                });
            }
            Some(_) => {}
        }
    }
    let copied: std::collections::HashSet<&String> = copied.iter().map(|(r, _)| r).collect();
    if let Some(rel) = manifest.files.keys().find(|r| !copied.contains(r)) {
        let text = std::fs::read_to_string(&manifest_path).unwrap_or_default();
        return Err(SnapshotError::Tampered {
            at: locate_in_file(&text, &manifest_path, &format!("{rel:?}")),
            detail: format!("{rel} is missing from {DATA}/"),
        });
    }
    Ok(bytes)
}

/// `path:line:column` of the first `needle` in `text` (`path` alone when absent).
pub(crate) fn locate_in_file(text: &str, path: &Path, needle: &str) -> String {
    let Some(at) = text.find(needle) else {
        return path.display().to_string();
    };
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    format!("{}:{line}:{column}", path.display())
}
