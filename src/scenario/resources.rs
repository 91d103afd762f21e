//! `resources:`: the share of the machine each node, the chain and the database servers
//! get, so runs compare across hosts (Alby pinned each node to 2 vCPU and 2 GiB).
//!
//! ```yaml
//! resources:
//!   nodes: { cpus: 2, memory: 2GiB }        # every node
//!   chain: { cpus: 1, memory: 1GiB }
//!   databases: { cpus: 1, memory: 1GiB }    # PostgreSQL, etcd
//! nodes:
//!   alice:
//!     implementation: lnd
//!     resources: { cpus: 1.5, cpuset: "1" } # alice's own: these fields win
//! ```

use super::error::Ctx;
use super::error::ScenarioError;
use super::raw::RawEnvelope;
use super::raw::{NodeMap, RawScenario};
use super::{Capabilities, NodeSpec};
use serde_saphyr::Spanned;

/// Below this a node cannot even start (and `cpu.cfs_quota_us` has a 1 ms floor).
const MIN_CPUS: f64 = 0.01;
/// More than any machine this runs on; a typo guard.
const MAX_CPUS: f64 = 1024.0;
/// Less memory than any node or chain backend starts in.
const MIN_MEMORY: u64 = 32 << 20;
/// Highest CPU number a `cpuset:` may name.
const MAX_CPU_INDEX: u32 = 4095;

/// One envelope: what a node (or the chain, or a database server) may use. A field
/// left out is not limited.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct Envelope {
    /// CPU time, in cores (1.5: one and a half cores' worth per period).
    pub cpus: Option<f64>,
    /// Memory, bytes (page cache included, as the kernel counts it).
    pub memory_bytes: Option<u64>,
    /// The CPUs it may run on, as written (`0-1`, `1,3`), normalised.
    pub cpuset: Option<String>,
}

impl Envelope {
    /// True when nothing is limited.
    pub fn is_empty(&self) -> bool {
        self.cpus.is_none() && self.memory_bytes.is_none() && self.cpuset.is_none()
    }

    /// `self`, with each field `over` sets taken from `over`.
    fn overridden_by(&self, over: &Envelope) -> Envelope {
        Envelope {
            cpus: over.cpus.or(self.cpus),
            memory_bytes: over.memory_bytes.or(self.memory_bytes),
            cpuset: over.cpuset.clone().or_else(|| self.cpuset.clone()),
        }
    }
}

/// The envelopes of what is not a node (the nodes' own are in [`NodeSpec::resources`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Resources {
    pub chain: Option<Envelope>,
    /// PostgreSQL and each etcd member.
    pub databases: Option<Envelope>,
}

impl Resources {
    /// True when the scenario sets any envelope (nodes included).
    pub fn any(&self, nodes: &[NodeSpec]) -> bool {
        self.chain.is_some()
            || self.databases.is_some()
            || nodes.iter().any(|n| n.resources.is_some())
    }
}

/// Checks `resources:` and each node's `resources:`, fills every node's envelope (its
/// own fields over `resources: nodes:`) and returns the chain's and the databases'.
pub(super) fn apply(
    ctx: &Ctx,
    raw: &RawScenario,
    caps: &Capabilities,
    nodes: &mut [NodeSpec],
) -> Result<Resources, ScenarioError> {
    let top = raw.resources.as_ref();
    let envelope =
        |e: &Option<Spanned<RawEnvelope>>| e.as_ref().map(|e| envelope(ctx, e)).transpose();
    let default = top.map(|t| envelope(&t.value.nodes)).transpose()?.flatten();
    let chain = top.map(|t| envelope(&t.value.chain)).transpose()?.flatten();
    let databases = top
        .map(|t| envelope(&t.value.databases))
        .transpose()?
        .flatten();
    let own = own_envelopes(ctx, &raw.nodes.value)?;
    let set_at = top
        .map(|t| t.referenced)
        .or(own.first().map(|(_, at, _)| *at));
    if let Some(at) = set_at.filter(|_| !caps.starts_nodes) {
        return Err(ctx.error(
            &at,
            format!(
                "the {} runtime starts no nodes, so resources: cannot apply",
                caps.name
            ),
            "remove resources: (the nodes run elsewhere, with the share their host gives them)",
        ));
    }
    for node in nodes.iter_mut() {
        let mine = own.iter().find(|(group, _, _)| *group == node.group);
        node.resources = match (&default, mine) {
            (Some(d), Some((_, _, m))) => Some(d.overridden_by(m)),
            (None, Some((_, _, m))) => Some(m.clone()),
            (d, None) => d.clone(),
        }
        .filter(|e| !e.is_empty());
    }
    Ok(Resources { chain, databases })
}

/// Each node group's own `resources:`, with where it is written.
fn own_envelopes(
    ctx: &Ctx,
    nodes: &NodeMap,
) -> Result<Vec<(String, serde_saphyr::Location, Envelope)>, ScenarioError> {
    let mut own = Vec::new();
    for (name, node) in &nodes.0 {
        if let Some(e) = &node.resources {
            own.push((name.value.clone(), e.referenced, envelope(ctx, e)?));
        }
    }
    Ok(own)
}

fn envelope(ctx: &Ctx, raw: &Spanned<RawEnvelope>) -> Result<Envelope, ScenarioError> {
    let e = &raw.value;
    if e.cpus.is_none() && e.memory.is_none() && e.cpuset.is_none() {
        return Err(ctx.error(
            &raw.referenced,
            "this envelope limits nothing",
            "give cpus:, memory: or cpuset:, e.g. { cpus: 2, memory: 2GiB }, or remove it",
        ));
    }
    let cpus = match &e.cpus {
        Some(c) if !(MIN_CPUS..=MAX_CPUS).contains(&c.value) => {
            return Err(ctx.error(
                &c.referenced,
                format!("cpus: {} is out of range", c.value),
                format!("write a number of cores from {MIN_CPUS} to {MAX_CPUS}, e.g. cpus: 1.5"),
            ));
        }
        c => c.as_ref().map(|c| c.value),
    };
    let memory_bytes = e.memory.as_ref().map(|m| match parse_memory(&m.value.0) {
        Some(bytes) if bytes >= MIN_MEMORY => Ok(bytes),
        Some(_) => Err(ctx.error(
            &m.referenced,
            format!("memory: {} is less than any node needs", m.value.0),
            "give at least 32MiB, e.g. memory: 2GiB",
        )),
        None => Err(ctx.error(
            &m.referenced,
            format!("memory: \"{}\" is not an amount of memory", m.value.0),
            "write a number with a unit: KiB, MiB, GiB, TiB (powers of 1024) or KB, MB, GB, TB (of 1000), e.g. memory: 2GiB",
        )),
    });
    let cpuset = e.cpuset.as_ref().map(|c| match parse_cpuset(&c.value.0) {
        Some(cpus) => Ok(cpus),
        None => Err(ctx.error(
            &c.referenced,
            format!("cpuset: \"{}\" is not a list of CPUs", c.value.0),
            format!("write CPU numbers (0 to {MAX_CPU_INDEX}) and ranges, e.g. cpuset: \"1\" or \"0-1\" or \"0,2-3\""),
        )),
    });
    Ok(Envelope {
        cpus,
        memory_bytes: memory_bytes.transpose()?,
        cpuset: cpuset.transpose()?,
    })
}

/// `2GiB`, `512MiB`, `1.5GB`, `1073741824` (bytes) -> bytes.
pub(crate) fn parse_memory(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let scale: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        _ => return None,
    };
    let bytes = number * scale as f64;
    (bytes.is_finite() && bytes >= 1.0 && bytes < u64::MAX as f64).then_some(bytes.round() as u64)
}

/// `0-1`, `1,3`, `0, 2-3` -> the same list, normalised (`0-1`, `1,3`, `0,2-3`).
pub(crate) fn parse_cpuset(text: &str) -> Option<String> {
    let mut parts = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let (lo, hi) = match part.split_once('-') {
            Some((lo, hi)) => (
                lo.trim().parse::<u32>().ok()?,
                hi.trim().parse::<u32>().ok()?,
            ),
            None => {
                let n = part.parse::<u32>().ok()?;
                (n, n)
            }
        };
        if lo > hi || hi > MAX_CPU_INDEX {
            return None;
        }
        parts.push(if lo == hi {
            lo.to_string()
        } else {
            format!("{lo}-{hi}")
        });
    }
    Some(parts.join(","))
}

/// The CPUs a normalised cpuset names, in order.
pub fn cpuset_cpus(cpuset: &str) -> Vec<u32> {
    cpuset
        .split(',')
        .filter_map(|p| match p.split_once('-') {
            Some((lo, hi)) => Some((lo.parse().ok()?..=hi.parse().ok()?).collect::<Vec<u32>>()),
            None => p.parse().ok().map(|n| vec![n]),
        })
        .flatten()
        .collect()
}

#[cfg(test)]
#[path = "resources_tests.rs"]
mod tests;
