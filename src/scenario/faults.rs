//! `links:` and `faults:`: the shape of peer links from the start (a WAN), and a
//! timeline of faults during the load.
//!
//! ```yaml
//! links:                      # every peer connection between the two goes through a proxy
//!   - between: [alice, carol] # a pair, or [alice, "*"]: alice and every peer of hers
//!     latency: 15ms           # one way, each direction (so 30 ms more round trip)
//!     jitter: 2ms
//!     bandwidth: 500          # KB/s, each direction (optional)
//! faults:
//!   - at: 20s                 # into the load; or after_payments: 500
//!     kill: bob               # SIGKILL
//!     restart_after: 5s       # started again after 5 s (omit: stays down)
//!   - at: 10s
//!     pause: alice            # SIGSTOP, then SIGCONT after `for:`
//!     for: 3s
//!   - at: 40s
//!     restart: bob            # a clean stop and start
//!   - at: 15s
//!     link: [alice, bob]
//!     latency: 50ms           # or down: true (cut and refused), reset: true (cut once)
//!     for: 10s                # omit: to the end of the load
//!   - at: 30s
//!     mine: 6                 # a burst of blocks
//! ```

use super::duration;
use super::error::ScenarioError;
use super::validate::{Ctx, Groups};
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::time::Duration;

/// The word for "every peer" in a link's pair.
pub const EVERY: &str = "*";
const MAX_LATENCY: Duration = Duration::from_secs(10);
const MAX_AT: Duration = Duration::from_secs(30 * 24 * 3600);
const MAX_BLOCKS: u32 = 1000;

/// One end of a link: an instance, or every peer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkEnd {
    Node(String),
    Every,
}

impl LinkEnd {
    pub fn matches(&self, name: &str) -> bool {
        match self {
            LinkEnd::Node(n) => n == name,
            LinkEnd::Every => true,
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            LinkEnd::Node(n) => n,
            LinkEnd::Every => EVERY,
        }
    }
}

/// The links between `a` and `b` (both directions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkPair {
    pub a: String,
    pub b: LinkEnd,
}

impl LinkPair {
    /// True for a connection between these two nodes, either way round.
    pub fn covers(&self, x: &str, y: &str) -> bool {
        (self.a == x && self.b.matches(y)) || (self.a == y && self.b.matches(x))
    }

    pub fn label(&self) -> String {
        format!("{}–{}", self.a, self.b.as_str())
    }
}

/// What a link adds to the traffic, each direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinkShape {
    /// One-way delay added each direction.
    pub latency: Duration,
    pub jitter: Duration,
    /// KB/s each direction; None: unlimited.
    pub bandwidth_kb_s: Option<u64>,
}

impl LinkShape {
    pub fn is_clear(&self) -> bool {
        *self == LinkShape::default()
    }

    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if !self.latency.is_zero() {
            parts.push(format!("+{} ms each way", self.latency.as_millis()));
        }
        if !self.jitter.is_zero() {
            parts.push(format!("± {} ms", self.jitter.as_millis()));
        }
        if let Some(kb) = self.bandwidth_kb_s {
            parts.push(format!("{kb} KB/s"));
        }
        if parts.is_empty() {
            "clear".into()
        } else {
            parts.join(" ")
        }
    }
}

/// `links:` entry: a shape from setup on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkSpec {
    pub pair: LinkPair,
    pub shape: LinkShape,
}

/// When a fault begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultTrigger {
    /// Time into the load.
    At(Duration),
    /// Once this many payments have completed (ok or failed).
    AfterPayments(u64),
}

/// What a link fault does while it lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkChange {
    /// Another shape (the `links:` one comes back afterwards).
    Shape(LinkShape),
    /// Connections cut and new ones refused (a partition).
    Down,
    /// Connections cut once; new ones allowed.
    Reset,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultAction {
    /// SIGKILL (container kill); started again after the delay, or never.
    Kill {
        node: String,
        restart_after: Option<Duration>,
    },
    /// A clean stop and start.
    Restart { node: String },
    /// SIGSTOP (container pause) for a while, then resumed.
    Pause { node: String, duration: Duration },
    Link {
        pair: LinkPair,
        change: LinkChange,
        /// None: until the end of the load (and never for a reset).
        duration: Option<Duration>,
    },
    /// A burst of blocks mined at once.
    Mine { blocks: u32 },
}

/// One entry of `faults:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub trigger: FaultTrigger,
    pub action: FaultAction,
}

impl Fault {
    /// A short label: `kill bob`, `latency alice–bob`.
    pub fn label(&self) -> String {
        match &self.action {
            FaultAction::Kill { node, .. } => format!("kill {node}"),
            FaultAction::Restart { node } => format!("restart {node}"),
            FaultAction::Pause { node, .. } => format!("pause {node}"),
            FaultAction::Link { pair, change, .. } => {
                let what = match change {
                    LinkChange::Shape(s) if s.latency.is_zero() && s.bandwidth_kb_s.is_some() => {
                        "bandwidth"
                    }
                    LinkChange::Shape(_) => "latency",
                    LinkChange::Down => "partition",
                    LinkChange::Reset => "reset",
                };
                format!("{what} {}", pair.label())
            }
            FaultAction::Mine { blocks } => format!("mine {blocks}"),
        }
    }

    /// The node this fault stops, pauses or kills, if any.
    pub fn node(&self) -> Option<&str> {
        match &self.action {
            FaultAction::Kill { node, .. }
            | FaultAction::Restart { node }
            | FaultAction::Pause { node, .. } => Some(node),
            _ => None,
        }
    }

    pub fn is_link(&self) -> bool {
        matches!(self.action, FaultAction::Link { .. })
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLink {
    pub between: Spanned<Vec<Spanned<String>>>,
    #[serde(default)]
    pub latency: Option<Spanned<String>>,
    #[serde(default)]
    pub jitter: Option<Spanned<String>>,
    #[serde(default)]
    pub bandwidth: Option<Spanned<u64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFault {
    #[serde(default)]
    pub at: Option<Spanned<String>>,
    #[serde(default)]
    pub after_payments: Option<Spanned<u64>>,
    #[serde(default)]
    pub kill: Option<Spanned<String>>,
    #[serde(default)]
    pub restart_after: Option<Spanned<String>>,
    #[serde(default)]
    pub restart: Option<Spanned<String>>,
    #[serde(default)]
    pub pause: Option<Spanned<String>>,
    #[serde(default)]
    pub link: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    pub latency: Option<Spanned<String>>,
    #[serde(default)]
    pub jitter: Option<Spanned<String>>,
    #[serde(default)]
    pub bandwidth: Option<Spanned<u64>>,
    #[serde(default)]
    pub down: Option<Spanned<bool>>,
    #[serde(default)]
    pub reset: Option<Spanned<bool>>,
    #[serde(default)]
    pub mine: Option<Spanned<u32>>,
    #[serde(default, rename = "for")]
    pub for_: Option<Spanned<String>>,
}

const FAULT_HINT: &str = "give each fault one of kill:, restart:, pause:, link: or mine:, e.g. \
                          - { at: 20s, kill: bob, restart_after: 5s }";

/// Reads `links:` and `faults:`; `instances` are the scenario's node instances.
pub(super) fn validate(
    ctx: &Ctx,
    groups: &Groups,
    links: Option<&Spanned<Vec<Spanned<RawLink>>>>,
    faults: Option<&Spanned<Vec<Spanned<RawFault>>>>,
) -> Result<(Vec<LinkSpec>, Vec<Fault>), ScenarioError> {
    let mut out_links = Vec::new();
    for raw in links.iter().flat_map(|l| &l.value) {
        let pair = pair(ctx, groups, &raw.value.between, "links: between:")?;
        let shape = shape(
            ctx,
            raw.value.latency.as_ref(),
            raw.value.jitter.as_ref(),
            raw.value.bandwidth.as_ref(),
        )?;
        if shape.is_clear() {
            return Err(ctx.error(
                &raw.referenced,
                format!("the link {} adds nothing", pair.label()),
                "give it latency:, jitter: or bandwidth:, or remove it",
            ));
        }
        out_links.push(LinkSpec { pair, shape });
    }
    let mut out = Vec::new();
    for raw in faults.iter().flat_map(|f| &f.value) {
        out.push(fault(ctx, groups, raw)?);
    }
    Ok((out_links, out))
}

fn fault(ctx: &Ctx, groups: &Groups, raw: &Spanned<RawFault>) -> Result<Fault, ScenarioError> {
    let f = &raw.value;
    let at = &raw.referenced;
    let trigger = match (&f.at, &f.after_payments) {
        (Some(_), Some(n)) => {
            return Err(ctx.error(
                &n.referenced,
                "a fault has both at: and after_payments:",
                "keep one: at: 20s (into the load) or after_payments: 500",
            ));
        }
        (Some(t), None) => FaultTrigger::At(duration(ctx, t, "at", true, MAX_AT)?),
        (None, Some(n)) if n.value == 0 => {
            return Err(ctx.error(
                &n.referenced,
                "after_payments: is 0",
                "write a count above zero, or at: 0s to begin with the load",
            ));
        }
        (None, Some(n)) => FaultTrigger::AfterPayments(n.value),
        (None, None) => {
            return Err(ctx.error(
                at,
                "a fault says not when it happens",
                "add at: 20s (into the load) or after_payments: 500",
            ));
        }
    };
    let actions = [
        f.kill.as_ref().map(|s| &s.referenced),
        f.restart.as_ref().map(|s| &s.referenced),
        f.pause.as_ref().map(|s| &s.referenced),
        f.link.as_ref().map(|s| &s.referenced),
        f.mine.as_ref().map(|s| &s.referenced),
    ];
    let given: Vec<_> = actions.iter().flatten().collect();
    match given.len() {
        0 => return Err(ctx.error(at, "a fault names no action", FAULT_HINT)),
        1 => {}
        _ => {
            return Err(ctx.error(
                given[1],
                "a fault names more than one action",
                "write one fault per action (two entries may share at:)",
            ));
        }
    }
    let for_ = match &f.for_ {
        Some(t) => Some(duration(ctx, t, "for", false, MAX_AT)?),
        None => None,
    };
    // Keys that belong to another action than the one given.
    let stray = |key: Option<&serde_saphyr::Location>, name: &str, belongs: &str| match key {
        Some(loc) => Err(ctx.error(
            loc,
            format!("{name} belongs to {belongs}"),
            format!("remove {name}, or make this a {belongs} fault"),
        )),
        None => Ok(()),
    };
    let link_keys = |ctx_what: &str| -> Result<(), ScenarioError> {
        stray(
            f.latency.as_ref().map(|s| &s.referenced),
            "latency:",
            ctx_what,
        )?;
        stray(
            f.jitter.as_ref().map(|s| &s.referenced),
            "jitter:",
            ctx_what,
        )?;
        stray(
            f.bandwidth.as_ref().map(|s| &s.referenced),
            "bandwidth:",
            ctx_what,
        )?;
        stray(f.down.as_ref().map(|s| &s.referenced), "down:", ctx_what)?;
        stray(f.reset.as_ref().map(|s| &s.referenced), "reset:", ctx_what)
    };
    let node = |name: &Spanned<String>, what: &str| -> Result<String, ScenarioError> {
        instance(ctx, groups, name, what)
    };
    let action = if let Some(n) = &f.kill {
        link_keys("link:")?;
        stray(
            f.for_.as_ref().map(|s| &s.referenced),
            "for:",
            "pause: or link:",
        )?;
        let restart_after = match &f.restart_after {
            Some(t) => Some(duration(ctx, t, "restart_after", true, MAX_AT)?),
            None => None,
        };
        FaultAction::Kill {
            node: node(n, "kill:")?,
            restart_after,
        }
    } else {
        stray(
            f.restart_after.as_ref().map(|s| &s.referenced),
            "restart_after:",
            "kill:",
        )?;
        if let Some(n) = &f.restart {
            link_keys("link:")?;
            stray(
                f.for_.as_ref().map(|s| &s.referenced),
                "for:",
                "pause: or link:",
            )?;
            FaultAction::Restart {
                node: node(n, "restart:")?,
            }
        } else if let Some(n) = &f.pause {
            link_keys("link:")?;
            let Some(duration) = for_ else {
                return Err(ctx.error(
                    &n.referenced,
                    "a pause says not how long",
                    "add for: 3s (the node is resumed after it)",
                ));
            };
            FaultAction::Pause {
                node: node(n, "pause:")?,
                duration,
            }
        } else if let Some(m) = &f.mine {
            link_keys("link:")?;
            stray(
                f.for_.as_ref().map(|s| &s.referenced),
                "for:",
                "pause: or link:",
            )?;
            if m.value == 0 || m.value > MAX_BLOCKS {
                return Err(ctx.error(
                    &m.referenced,
                    format!("mine: {} is not a burst of blocks", m.value),
                    format!("write 1 to {MAX_BLOCKS} blocks"),
                ));
            }
            FaultAction::Mine { blocks: m.value }
        } else {
            let l = f.link.as_ref().expect("one action is given");
            let pair = pair(ctx, groups, l, "link:")?;
            let down = f.down.as_ref().filter(|d| d.value);
            let reset = f.reset.as_ref().filter(|r| r.value);
            let shaped = f.latency.is_some() || f.jitter.is_some() || f.bandwidth.is_some();
            let change = match (down, reset, shaped) {
                (Some(_), None, false) => LinkChange::Down,
                (None, Some(_), false) => {
                    if let Some(t) = &f.for_ {
                        return Err(ctx.error(
                            &t.referenced,
                            "a reset has for:",
                            "remove for: (a reset cuts the connections once), or write down: true",
                        ));
                    }
                    LinkChange::Reset
                }
                (None, None, true) => LinkChange::Shape(shape(
                    ctx,
                    f.latency.as_ref(),
                    f.jitter.as_ref(),
                    f.bandwidth.as_ref(),
                )?),
                (None, None, false) => {
                    return Err(ctx.error(
                        &l.referenced,
                        "a link fault says not what happens to the link",
                        "add latency: 50ms, bandwidth: 100 (KB/s), down: true or reset: true",
                    ));
                }
                _ => {
                    return Err(ctx.error(
                        &l.referenced,
                        "a link fault has more than one of latency/bandwidth, down: and reset:",
                        "write one link fault per change",
                    ));
                }
            };
            FaultAction::Link {
                pair,
                change,
                duration: for_,
            }
        }
    };
    Ok(Fault { trigger, action })
}

/// One instance (a group of one replica gives its instance; of more, an error).
fn instance(
    ctx: &Ctx,
    groups: &Groups,
    name: &Spanned<String>,
    what: &str,
) -> Result<String, ScenarioError> {
    let v = name.value.trim();
    for (_, instances) in &groups.order {
        if instances.iter().any(|i| i == v) {
            return Ok(v.to_string());
        }
    }
    match groups.instances(v) {
        Some(one) if one.len() == 1 => Ok(one[0].clone()),
        Some(many) => Err(ctx.error(
            &name.referenced,
            format!("{what} {v} is a group of {} nodes", many.len()),
            format!("name one of them, e.g. {}", many[0]),
        )),
        None => Err(groups.unknown(ctx, name, what)),
    }
}

fn pair(
    ctx: &Ctx,
    groups: &Groups,
    raw: &Spanned<Vec<Spanned<String>>>,
    what: &str,
) -> Result<LinkPair, ScenarioError> {
    let hint =
        format!("write {what} [alice, bob], or [alice, \"{EVERY}\"] for all of alice's links");
    let [a, b] = raw.value.as_slice() else {
        return Err(ctx.error(
            &raw.referenced,
            format!("{what} names {} nodes, not two", raw.value.len()),
            hint,
        ));
    };
    if a.value.trim() == EVERY {
        return Err(ctx.error(
            &a.referenced,
            format!("{what} begins with \"{EVERY}\""),
            hint,
        ));
    }
    let a_name = instance(ctx, groups, a, what)?;
    let b_end = if b.value.trim() == EVERY {
        LinkEnd::Every
    } else {
        let b_name = instance(ctx, groups, b, what)?;
        if b_name == a_name {
            return Err(ctx.error(&b.referenced, format!("{what} names {a_name} twice"), hint));
        }
        LinkEnd::Node(b_name)
    };
    Ok(LinkPair {
        a: a_name,
        b: b_end,
    })
}

fn shape(
    ctx: &Ctx,
    latency: Option<&Spanned<String>>,
    jitter: Option<&Spanned<String>>,
    bandwidth: Option<&Spanned<u64>>,
) -> Result<LinkShape, ScenarioError> {
    let mut s = LinkShape::default();
    if let Some(l) = latency {
        s.latency = duration(ctx, l, "latency", true, MAX_LATENCY)?;
    }
    if let Some(j) = jitter {
        s.jitter = duration(ctx, j, "jitter", true, MAX_LATENCY)?;
        if s.jitter > s.latency {
            return Err(ctx.error(
                &j.referenced,
                format!(
                    "jitter {} ms is more than the latency {} ms",
                    s.jitter.as_millis(),
                    s.latency.as_millis()
                ),
                "give a latency at least as large as its jitter, e.g. latency: 50ms, jitter: 5ms",
            ));
        }
    }
    if let Some(b) = bandwidth {
        if b.value == 0 {
            return Err(ctx.error(
                &b.referenced,
                "bandwidth: 0 would stop the link",
                "write KB/s above zero, or down: true for a partition",
            ));
        }
        s.bandwidth_kb_s = Some(b.value);
    }
    Ok(s)
}

fn duration(
    ctx: &Ctx,
    text: &Spanned<String>,
    what: &str,
    zero_ok: bool,
    max: Duration,
) -> Result<Duration, ScenarioError> {
    let too_long = format!("write at most {}", duration::format(max));
    let rule = duration::Rule {
        name: &format!("{what}:"),
        hint: "write a number and a unit, e.g. 50ms or 5s",
        zero: (!zero_ok).then_some("write a duration above zero, e.g. 5s"),
        max: Some(duration::Max {
            limit: max,
            says: "is too long",
            hint: &too_long,
        }),
    };
    duration::parse(ctx, text, &rule)
}

#[cfg(test)]
mod tests;
