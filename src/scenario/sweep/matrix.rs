//! The implementation matrix: `sweep: { implementation: [...], database: [...] }`.
//!
//! `implementation:` is a list (every node of a point runs it: "X pays X") or a mapping
//! from node group to a list (`{ alice: [lnd, cln], bob: [lnd, cln] }`: each group on
//! its own axis). A value is an implementation, optionally with a release:
//! `lnd@v0.20.1-beta`. `database:` sets every node's `database:`.
//!
//! A point whose nodes cannot run what it asks (a database the implementation lacks)
//! is kept and marked skipped with the reason: the matrix shows the hole, it is not an
//! error in the file.

use super::{Dim, SweepParam, SweepValue};
use crate::node::Implementation;
use crate::scenario::Database;
use crate::scenario::error::Ctx;
use crate::scenario::error::ScenarioError;
use crate::scenario::raw::ImplValues;
use crate::scenario::raw::{RawNode, RawPaymentKind, RawScenario};
use serde_saphyr::{Location, Spanned};
use std::fmt;

/// The longest release name a value may carry (`v0.20.1-beta` is 12).
const MAX_VERSION: usize = 40;

/// A release name kept inline, so sweep values stay `Copy`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Version {
    len: u8,
    bytes: [u8; MAX_VERSION],
}

impl Version {
    fn new(text: &str) -> Option<Version> {
        let ok = !text.is_empty()
            && text.len() <= MAX_VERSION
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '+'));
        if !ok {
            return None;
        }
        let mut bytes = [0; MAX_VERSION];
        bytes[..text.len()].copy_from_slice(text.as_bytes());
        Some(Version {
            len: text.len() as u8,
            bytes,
        })
    }

    pub fn as_str(&self) -> &str {
        // Built from a `&str` of ASCII characters only.
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("")
    }
}

impl fmt::Debug for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

/// One value of `implementation:`: which implementation, and which release of it
/// (`None`: the one the build scripts pin).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImplChoice {
    pub implementation: Implementation,
    pub version: Option<Version>,
}

impl fmt::Display for ImplChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.implementation.as_str())?;
        match &self.version {
            Some(v) => write!(f, "@{}", v.as_str()),
            None => Ok(()),
        }
    }
}

/// One axis as written: the group it is for (none: every node), its values, where.
type Axis<'a> = (
    Option<&'a Spanned<String>>,
    Vec<&'a Spanned<String>>,
    Location,
);

/// The dimensions of `implementation:`: one, or one per named group.
pub(super) fn implementation_dims(
    ctx: &Ctx,
    raw: &RawScenario,
    values: &Spanned<ImplValues>,
) -> Result<Vec<Dim>, ScenarioError> {
    let lists: Vec<Axis> = match &values.value {
        ImplValues::Every(list) => vec![(None, list.iter().collect(), values.referenced)],
        ImplValues::PerGroup(groups) => {
            if groups.is_empty() {
                return Err(ctx.error(
                        &values.referenced,
                        "sweep implementation: is an empty mapping",
                        "list implementations, e.g. implementation: [lnd, cln], or name node groups: { alice: [lnd, cln] }",
                    ));
            }
            groups
                .iter()
                .map(|(g, l)| (Some(g), l.value.iter().collect(), g.referenced))
                .collect()
        }
    };
    let mut dims = Vec::new();
    for (group, list, at) in lists {
        let nodes: Vec<&(Spanned<String>, RawNode)> = match group {
            None => raw.nodes.value.0.iter().collect(),
            Some(g) => {
                let found: Vec<_> = (raw.nodes.value.0.iter())
                    .filter(|(n, _)| n.value == g.value)
                    .collect();
                if found.is_empty() {
                    let defined: Vec<&str> = (raw.nodes.value.0.iter())
                        .map(|(n, _)| n.value.as_str())
                        .collect();
                    return Err(ctx.error(
                        &g.referenced,
                        format!(
                            "sweep implementation: names node \"{}\", which is not defined under nodes: (defined: {})",
                            g.value,
                            defined.join(", ")
                        ),
                        format!("use one of {}", defined.join(", ")),
                    ));
                }
                found
            }
        };
        for (name, node) in nodes {
            refuse_pinned(ctx, name, node)?;
        }
        if list.is_empty() {
            return Err(ctx.error(
                &at,
                "sweep implementation: is an empty list",
                "list the implementations to compare, e.g. [lnd, cln, eclair, ldk]",
            ));
        }
        let mut dim_values = Vec::new();
        for v in list {
            let choice = choice(ctx, v)?;
            dim_values.push((SweepValue::Implementation(choice), v.referenced));
        }
        dims.push(Dim {
            param: SweepParam::Implementation(group.map(|g| g.value.clone())),
            at,
            values: dim_values,
        });
    }
    Ok(dims)
}

/// A node whose file pins what the sweep changes (its binary, image, version or
/// arguments of one implementation) cannot follow the sweep.
fn refuse_pinned(ctx: &Ctx, name: &Spanned<String>, node: &RawNode) -> Result<(), ScenarioError> {
    let pinned = if node.binary.is_some() {
        Some("binary:")
    } else if node.image.is_some() {
        Some("image:")
    } else if !node.args.is_empty() {
        Some("args:")
    } else {
        None
    };
    match pinned {
        Some(what) => Err(ctx.error(
            &name.referenced,
            format!(
                "node {} sets {what}, which belongs to one implementation, and the sweep sets its implementation:",
                name.value
            ),
            format!(
                "remove {what} from node {} (each implementation of the sweep runs as built, with the tool's flags)",
                name.value
            ),
        )),
        None => Ok(()),
    }
}

/// `lnd`, `cln`, `eclair`, `ldk`, optionally `@<release>`.
fn choice(ctx: &Ctx, text: &Spanned<String>) -> Result<ImplChoice, ScenarioError> {
    let (name, version) = match text.value.split_once('@') {
        Some((n, v)) => (n.trim(), Some(v.trim())),
        None => (text.value.trim(), None),
    };
    let known: Vec<&str> = Implementation::ALL.iter().map(|i| i.as_str()).collect();
    let Some(implementation) = Implementation::ALL.into_iter().find(|i| i.as_str() == name) else {
        return Err(ctx.error(
            &text.referenced,
            format!(
                "sweep implementation \"{}\" is not one of {}",
                text.value,
                known.join(", ")
            ),
            "write an implementation, optionally with a release: lnd, cln, lnd@v0.20.1-beta",
        ));
    };
    let version = match version {
        None => None,
        Some(v) => Some(Version::new(v).ok_or_else(|| {
            ctx.error(
                &text.referenced,
                format!("sweep implementation \"{}\": \"{v}\" is not a release name", text.value),
                format!(
                    "write the release after @ (letters, digits, . - _ +; at most {MAX_VERSION}), e.g. lnd@v0.20.1-beta"
                ),
            )
        })?),
    };
    Ok(ImplChoice {
        implementation,
        version,
    })
}

/// The dimension of `database:`.
pub(super) fn database_dim(
    ctx: &Ctx,
    raw: &RawScenario,
    list: &Spanned<Vec<Spanned<Database>>>,
) -> Result<Dim, ScenarioError> {
    for (name, node) in &raw.nodes.value.0 {
        if let Some(db) = &node.database {
            return Err(ctx.error(
                &db.referenced,
                format!(
                    "node {} sets database:, and the sweep sets database:",
                    name.value
                ),
                "remove database: from the node (the sweep sets it on every node)",
            ));
        }
    }
    if list.value.is_empty() {
        return Err(ctx.error(
            &list.referenced,
            "sweep database: is an empty list",
            "list the databases to compare, e.g. database: [default, postgres]",
        ));
    }
    Ok(Dim {
        param: SweepParam::Database,
        at: list.referenced,
        values: (list.value.iter())
            .map(|d| (SweepValue::Database(d.value), d.referenced))
            .collect(),
    })
}

/// Sets the implementation (and release) of the nodes `group` names, or of every node.
pub(super) fn apply_implementation(
    raw: &mut RawScenario,
    group: Option<&str>,
    choice: ImplChoice,
    at: Location,
) {
    for (name, node) in &mut raw.nodes.value.0 {
        if group.is_none_or(|g| g == name.value) {
            node.implementation = Spanned::new(choice.implementation, at, at);
            node.version = choice.version.map(|v| v.as_str().to_string());
        }
    }
}

pub(super) fn apply_database(raw: &mut RawScenario, database: Database, at: Location) {
    for (_, node) in &mut raw.nodes.value.0 {
        node.database = Some(Spanned::new(database, at, at));
    }
}

/// Why the point cannot run, once every value is in: a node on a database its
/// implementation lacks, or (when the sweep chose the implementations) a keysend
/// workload whose sender or receiver has no keysend. What such a point asks is put
/// back to what validates (the default database, invoices), so the point, never run,
/// still checks like any other.
pub(super) fn reason(raw: &mut RawScenario, implementations_swept: bool) -> Option<String> {
    let mut reasons = Vec::new();
    // Implementation -> its nodes on a database it lacks.
    let mut lacking: Vec<(Implementation, Vec<String>)> = Vec::new();
    for (name, node) in &mut raw.nodes.value.0 {
        let implementation = node.implementation.value;
        let on_postgres = node
            .database
            .as_ref()
            .is_some_and(|d| d.value == Database::Postgres);
        if on_postgres && crate::node::driver(implementation).postgres().is_none() {
            match lacking.iter_mut().find(|(i, _)| *i == implementation) {
                Some((_, names)) => names.push(name.value.clone()),
                None => lacking.push((implementation, vec![name.value.clone()])),
            }
            node.database = None;
        }
    }
    for (implementation, names) in lacking {
        let nodes = if names.len() == 1 { "node" } else { "nodes" };
        reasons.push(format!(
            "{implementation} has no PostgreSQL backend ({nodes} {})",
            names.join(", ")
        ));
    }
    let w = &mut raw.workload.value;
    if implementations_swept && matches!(w.kind.value, RawPaymentKind::Keysend) {
        let parties: Vec<&str> = (w.senders.value.iter().map(|s| s.value.as_str()))
            .chain(std::iter::once(w.receiver.value.as_str()))
            .collect();
        let lacking = (raw.nodes.value.0.iter())
            .filter(|(name, _)| parties.contains(&name.value.as_str()))
            .find_map(|(name, node)| {
                let implementation = node.implementation.value;
                let why =
                    crate::node::driver(implementation).missing(crate::node::Feature::Keysend)?;
                Some(format!(
                    "kind: keysend, and node {} is {implementation}: {why}",
                    name.value
                ))
            });
        if let Some(why) = lacking {
            reasons.push(why);
            let at = w.kind.referenced;
            w.kind = Spanned::new(RawPaymentKind::Invoice, at, at);
        }
    }
    (!reasons.is_empty()).then(|| reasons.join("; "))
}

#[cfg(test)]
mod tests;
