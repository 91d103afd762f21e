//! `manifest.json`: what a snapshot was saved from (the scenario's network, the
//! binaries' versions, when, how long setup took) and every file's size and sha256.

use super::{SnapshotError, locate_in_file};
use crate::scenario::Scenario;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The manifest's format; a snapshot of another format is refused.
pub const FORMAT: u32 = 1;

/// One saved file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    pub bytes: u64,
    pub sha256: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub format: u32,
    /// The scenario's `name:`.
    pub scenario: String,
    /// RFC 3339, UTC.
    pub saved_at: String,
    /// How long setup took before the save (chain, nodes, funds, channels).
    pub setup_s: f64,
    /// The network's canonical form ([`network_form`]), one line per part.
    pub network: Vec<String>,
    /// `chain` and each node's name, to its binary's version.
    pub versions: BTreeMap<String, String>,
    /// Each file under `data/`, by its path there.
    pub files: BTreeMap<String, FileEntry>,
    /// Payments the tool made on the network before it was saved (`history:`); 0 in
    /// snapshots saved before the field existed.
    #[serde(default)]
    pub payments: u64,
}

/// The parts of a scenario a snapshot depends on, one line each: the chain, each node
/// (name, implementation, database, arguments) and each channel. Order is the
/// scenario's; two scenarios with the same lines have the same network.
pub fn network_form(scenario: &Scenario) -> Vec<String> {
    let mut lines = vec![format!("chain {}", scenario.chain.kind.as_str())];
    for n in &scenario.nodes {
        lines.push(node_line(n, &n.args));
    }
    for c in &scenario.channels {
        lines.push(format!(
            "channel {} -> {} capacity_sat={} count={}",
            c.from, c.to, c.capacity_sat, c.count
        ));
    }
    lines
}

fn node_line(n: &crate::scenario::NodeSpec, args: &[String]) -> String {
    format!(
        "node {} {} database={} args={:?}",
        n.name,
        n.implementation.as_str(),
        match n.database {
            crate::node::Database::Default => "default",
            crate::node::Database::Postgres => "postgres",
        },
        args
    )
}

/// A node restored onto another schema or version than it was saved with, which it
/// migrates at its start: LND's key-value SQL database (`from`, `sqlite`) to native
/// SQL (`to`, `sqlite-native`), or with `--upgrade` the saved binary's version to
/// this run's (both as the manifest writes versions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migration {
    pub node: String,
    pub from: String,
    pub to: String,
}

/// The network a snapshot must have been saved from to restore `scenario`, with the
/// migrations the scenario asks for: a node whose only change is its driver's schema
/// arguments (`Migrations::schema_args`: LND's `--db.use-native-sql`) added on a SQL
/// backend is restored from its key-value database and migrates it as it starts.
/// `saved` is the snapshot's network.
pub fn network_to_restore(scenario: &Scenario, saved: &[String]) -> (Vec<String>, Vec<Migration>) {
    let mut wanted = network_form(scenario);
    let mut migrations = Vec::new();
    for (n, line) in scenario.nodes.iter().zip(wanted.iter_mut().skip(1)) {
        let driver = crate::node::driver(n.implementation);
        let Some(schema) = driver.migrations().map(|m| m.schema_args()) else {
            continue;
        };
        let native = |a: &&String| schema.contains(&a.as_str());
        if !n.args.iter().any(|a| native(&a)) || saved.contains(line) {
            continue;
        }
        let kv: Vec<String> = n.args.iter().filter(|a| !native(a)).cloned().collect();
        let from = driver.database(n.database, &kv);
        let kv_line = node_line(n, &kv);
        if from != "bbolt" && saved.contains(&kv_line) {
            migrations.push(Migration {
                node: n.name.clone(),
                to: driver.database(n.database, &n.args),
                from,
            });
            *line = kv_line;
        }
    }
    (wanted, migrations)
}

impl Manifest {
    /// A manifest of `scenario` without files yet.
    pub fn new(
        scenario: &Scenario,
        versions: BTreeMap<String, String>,
        saved_at: String,
        setup_s: f64,
    ) -> Manifest {
        Manifest {
            format: FORMAT,
            scenario: scenario.name.clone(),
            saved_at,
            setup_s,
            network: network_form(scenario),
            versions,
            files: BTreeMap::new(),
            payments: 0,
        }
    }

    pub fn to_text(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a manifest serializes");
        text.push('\n');
        text
    }

    /// Parses `text` (read from `path`); errors give the line and column.
    pub fn parse(text: &str, path: &Path) -> Result<Manifest, SnapshotError> {
        let manifest: Manifest =
            serde_json::from_str(text).map_err(|e| SnapshotError::Unreadable {
                at: format!("{}:{}:{}", path.display(), e.line(), e.column()),
                detail: e.to_string(),
            })?;
        if manifest.format != FORMAT {
            return Err(SnapshotError::Unreadable {
                at: locate_in_file(text, path, "\"format\""),
                detail: format!(
                    "format {} (this lnbench-tui reads format {FORMAT}): save it again",
                    manifest.format
                ),
            });
        }
        Ok(manifest)
    }

    /// Refuses a snapshot of another network, naming the first line that differs.
    pub fn check_network(
        &self,
        wanted: &[String],
        text: &str,
        path: &Path,
    ) -> Result<(), SnapshotError> {
        let only_saved = self.network.iter().find(|l| !wanted.contains(l));
        let only_wanted = wanted.iter().find(|l| !self.network.contains(l));
        let reason = match (only_saved, only_wanted) {
            (None, None) if self.network.len() == wanted.len() => return Ok(()),
            (Some(saved), Some(here)) => format!("it has `{saved}`, the scenario `{here}`"),
            (Some(saved), None) => format!("it has `{saved}`, the scenario has not"),
            (None, Some(here)) => format!("the scenario has `{here}`, the snapshot has not"),
            (None, None) => "the scenario lists the same parts in another number".to_string(),
        };
        let needle = only_saved.map_or_else(
            || "\"network\"".to_string(),
            |l| serde_json::to_string(l).unwrap_or_default(),
        );
        Err(SnapshotError::Mismatch {
            at: locate_in_file(text, path, &needle),
            reason,
        })
    }

    /// Refuses a snapshot saved with other versions of the chain's or a node's binary;
    /// with `upgrade`, a node's other version is no refusal but a migration from the
    /// saved version to this one (the chain's is still refused).
    pub fn check_versions(
        &self,
        here: &BTreeMap<String, String>,
        upgrade: bool,
        text: &str,
        path: &Path,
    ) -> Result<Vec<Migration>, SnapshotError> {
        let mut upgrades = Vec::new();
        for (what, version) in here {
            let saved = self.versions.get(what).cloned().unwrap_or_default();
            if upgrade && what != "chain" && !saved.is_empty() && &saved != version {
                upgrades.push(Migration {
                    node: what.clone(),
                    from: saved,
                    to: version.clone(),
                });
            } else if &saved != version {
                let in_versions = text.find("\"versions\"").unwrap_or(0);
                let at = locate_in_file(&text[in_versions..], path, &format!("{what:?}:"));
                // The line counted from "versions" on: add the lines before it.
                let at = shift_line(&at, text[..in_versions].matches('\n').count());
                return Err(SnapshotError::Version {
                    at,
                    what: if what == "chain" {
                        "the chain".into()
                    } else {
                        format!("node {what}")
                    },
                    saved,
                    here: version.clone(),
                });
            }
        }
        Ok(upgrades)
    }
}

/// `path:line:column` with `lines` added to the line.
fn shift_line(at: &str, lines: usize) -> String {
    let mut parts: Vec<&str> = at.rsplitn(3, ':').collect();
    if parts.len() != 3 {
        return at.to_string();
    }
    parts.reverse();
    match parts[1].parse::<usize>() {
        Ok(line) => format!("{}:{}:{}", parts[0], line + lines, parts[2]),
        Err(_) => at.to_string(),
    }
}
