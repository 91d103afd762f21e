//! `profile:`: CPU profiles of the nodes during the load (off unless the scenario has
//! this block or the run is given `--profile`).
//!
//! ```yaml
//! profile:
//!   nodes: [alice, chain]   # names under nodes:, `chain`, or `all` (default: every node)
//!   start: 5s               # into the load (default 5s)
//!   duration: 10s           # how long the CPU profile runs (default 10s)
//! ```

use super::duration;
use super::error::Ctx;
use super::error::ScenarioError;
use super::groups::Groups;
use super::raw::RawProfile;
use super::raw::RawRestart;
use serde_saphyr::Spanned;
use std::time::Duration;

/// The name `profile: nodes:` gives the chain backend.
pub const CHAIN: &str = "chain";
const DEFAULT_START: Duration = Duration::from_secs(5);
const DEFAULT_DURATION: Duration = Duration::from_secs(10);
/// A CPU profile longer than this is almost surely a typo (and LND caps its own).
const MAX_DURATION: Duration = Duration::from_secs(600);

/// What to profile, when in the load, and for how long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileSpec {
    /// Instance names, and [`CHAIN`] for the chain backend, in file order.
    pub nodes: Vec<String>,
    /// Time from the start of the load to the start of the CPU profile.
    pub start: Duration,
    /// Length of the CPU profile.
    pub duration: Duration,
}

impl ProfileSpec {
    /// `--profile` on a scenario without `profile:`: every node, default timing.
    pub fn every_node(nodes: &[super::NodeSpec]) -> ProfileSpec {
        ProfileSpec {
            nodes: nodes.iter().map(|n| n.name.clone()).collect(),
            start: DEFAULT_START,
            duration: DEFAULT_DURATION,
        }
    }
}

pub(super) fn validate(
    ctx: &Ctx,
    groups: &Groups,
    raw: Option<&Spanned<RawProfile>>,
) -> Result<Option<ProfileSpec>, ScenarioError> {
    const HINT: &str = "write nodes: all, or nodes: [alice, chain] (names under nodes:, or chain)";
    let Some(raw) = raw else {
        return Ok(None);
    };
    let every: Vec<String> = (groups.order.iter())
        .flat_map(|(_, instances)| instances.iter().cloned())
        .collect();
    let nodes = match raw.value.nodes.as_ref().map(|n| (&n.value, n)) {
        None | Some((RawRestart::All, _)) => every,
        Some((RawRestart::Word(w), _)) if w == CHAIN => vec![CHAIN.to_string()],
        Some((RawRestart::Word(w), at)) => {
            return Err(ctx.error(
                &at.referenced,
                format!("profile: nodes: \"{w}\" is neither all nor a list of nodes"),
                HINT,
            ));
        }
        Some((RawRestart::Nodes(names), at)) => {
            if names.is_empty() {
                return Err(ctx.error(
                    &at.referenced,
                    "profile: nodes: is an empty list",
                    format!("{HINT}, or remove profile:"),
                ));
            }
            let mut out: Vec<String> = Vec::new();
            for name in names {
                let of = if name.value == CHAIN {
                    vec![CHAIN.to_string()]
                } else {
                    (groups.instances(&name.value))
                        .ok_or_else(|| groups.unknown(ctx, name, "profile: nodes:"))?
                        .to_vec()
                };
                for n in of {
                    if !out.contains(&n) {
                        out.push(n);
                    }
                }
            }
            out
        }
    };
    let start = match &raw.value.start {
        None => DEFAULT_START,
        Some(t) => duration(ctx, t, "profile start", true)?,
    };
    let duration = match &raw.value.duration {
        None => DEFAULT_DURATION,
        Some(t) => duration(ctx, t, "profile duration", false)?,
    };
    Ok(Some(ProfileSpec {
        nodes,
        start,
        duration,
    }))
}

fn duration(
    ctx: &Ctx,
    text: &Spanned<String>,
    what: &str,
    zero_ok: bool,
) -> Result<Duration, ScenarioError> {
    let rule = duration::Rule {
        name: what,
        hint: "write a number and a unit, e.g. 5s or 1m",
        zero: (!zero_ok).then_some("write a duration above zero, e.g. 10s"),
        max: Some(duration::Max {
            limit: MAX_DURATION,
            says: "is longer than 10 minutes",
            hint: "write at most 10m, e.g. 10s or 30s",
        }),
    };
    duration::parse(ctx, text, &rule)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::tests::parse;
    use std::path::Path;

    const BASE: &str = "\
name: t
nodes:
  alice:
    implementation: lnd
  bob:
    implementation: lnd
    replicas: 2
channels:
  - from: alice
    to: bob
    capacity_sat: 1000000
workload:
  kind: keysend
  senders: [alice]
  receiver: bob
  concurrency: 2
  stop:
    payments: 10
";

    fn profile(block: &str) -> Result<Option<ProfileSpec>, String> {
        parse(Path::new("t.yaml"), &format!("{BASE}{block}"))
            .map(|s| s.profile)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn off_unless_written_and_defaults_to_every_node() {
        assert_eq!(profile("").unwrap(), None);
        let p = profile("profile: {}\n").unwrap().unwrap();
        assert_eq!(p.nodes, ["alice", "bob-1", "bob-2"]);
        assert_eq!((p.start, p.duration), (DEFAULT_START, DEFAULT_DURATION));
    }

    #[test]
    fn names_groups_the_chain_and_timing() {
        let p = profile("profile:\n  nodes: [bob, chain]\n  start: 0s\n  duration: 30s\n")
            .unwrap()
            .unwrap();
        assert_eq!(p.nodes, ["bob-1", "bob-2", "chain"]);
        assert_eq!(p.start, Duration::ZERO);
        assert_eq!(p.duration, Duration::from_secs(30));
        let p = profile("profile: { nodes: chain }\n").unwrap().unwrap();
        assert_eq!(p.nodes, ["chain"]);
    }

    #[test]
    fn mistakes_are_errors_with_a_hint() {
        let e = profile("profile: { nodes: [carol] }\n").unwrap_err();
        assert!(e.contains("carol"), "{e}");
        let e = profile("profile: { nodes: [] }\n").unwrap_err();
        assert!(e.contains("empty"), "{e}");
        let e = profile("profile: { duration: 0s }\n").unwrap_err();
        assert!(e.contains("is 0"), "{e}");
        let e = profile("profile: { duration: 1h }\n").unwrap_err();
        assert!(e.contains("10 minutes"), "{e}");
        let e = profile("profile: { start: soon }\n").unwrap_err();
        assert!(e.contains("not a duration"), "{e}");
        let e = profile("profile: { every: 1s }\n").unwrap_err();
        assert!(e.contains("every"), "{e}");
    }
}
