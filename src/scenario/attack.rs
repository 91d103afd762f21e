//! `workload: attack:` (jamming under load): an attacker node pays hold invoices of an
//! accomplice that never settles them, keeping a number of HTLC slots in flight on the
//! honest route while the honest workload runs unchanged.
//!
//! ```yaml
//! attack: { attacker: mallory, accomplice: eve, slots: 20, amount_msat: 10000,
//!           hold: 30s, start: 10s, for: 20s }
//! ```
//!
//! `share: 0.5` in place of `slots:` holds that share of the smallest
//! `max_accepted_htlcs` of the scenario's nodes (each implementation's flag in the
//! node's `args:`, or its default: `ChannelRules::max_accepted_htlcs`).

use super::duration;
use super::error::Ctx;
use super::error::ScenarioError;
use super::groups::Groups;
use super::raw::RawAttack;
use super::raw::{RawChannel, RawNode, RawWorkload};
use super::{Load, StopCondition};
use crate::node::Implementation;
use serde_saphyr::Spanned;
use std::time::Duration;

/// The most slots an attack may hold: BOLT 2's limit on HTLCs one side may offer.
pub const MAX_SLOTS: u32 = 483;
const DEFAULT_AMOUNT_MSAT: u64 = 10_000;
const HINT: &str = "write a number and a unit, e.g. 30s or 2m";

/// A validated attack.
#[derive(Debug, Clone, PartialEq)]
pub struct Attack {
    /// Instance names of the paying attacker and the never-settling accomplice.
    pub attacker: String,
    pub accomplice: String,
    /// HTLCs held at once (from `slots:`, or `share:` of `max_accepted_htlcs`).
    pub slots: u32,
    pub amount_msat: u64,
    /// How long the accomplice holds each HTLC before cancelling it (then replaced).
    pub hold: Duration,
    /// From the load's start.
    pub start: Duration,
    pub duration: Duration,
}

/// `attack:` checked against the nodes, the honest senders, the channels and the load.
pub(super) fn validate(
    ctx: &Ctx,
    groups: &Groups,
    channels: Option<&[Spanned<RawChannel>]>,
    w: &RawWorkload,
    (load, stop): (&Load, &StopCondition),
    nodes: &[(Spanned<String>, RawNode)],
) -> Result<Option<Attack>, ScenarioError> {
    let Some(raw) = &w.attack else {
        return Ok(None);
    };
    let a = &raw.value;
    let attacker = single(ctx, groups, &a.attacker, "attacker:")?;
    let accomplice = single(ctx, groups, &a.accomplice, "accomplice:")?;
    if let Some(s) = w.senders.value.iter().find(|s| s.value == a.attacker.value) {
        return Err(ctx.error(
            &a.attacker.referenced,
            format!("attacker {} is also an honest sender", s.value),
            "give the attack a node of its own (e.g. mallory), not one under senders:",
        ));
    }
    if a.attacker.value == a.accomplice.value {
        return Err(ctx.error(
            &a.accomplice.referenced,
            "the accomplice is the attacker",
            "name another node as accomplice: (the one that holds the HTLCs at the end of the route)",
        ));
    }
    if let Some(channels) = channels
        && !super::paths::reaches(channels, &a.attacker.value, &a.accomplice.value)
    {
        return Err(ctx.error(
            &a.accomplice.referenced,
            format!(
                "attacker {} has no channel path to accomplice {}",
                a.attacker.value, a.accomplice.value
            ),
            "add channels under channels: from the attacker through the honest route to the accomplice",
        ));
    }
    let slots = slots(ctx, raw, nodes)?;
    let amount_msat = match &a.amount_msat {
        Some(n) if n.value == 0 => {
            return Err(ctx.error(
                &n.referenced,
                "attack amount_msat is 0",
                "write an amount of at least 1 msat, e.g. amount_msat: 10000",
            ));
        }
        Some(n) => n.value,
        None => DEFAULT_AMOUNT_MSAT,
    };
    let load_length = load_length(load, stop).ok_or_else(|| {
        ctx.error(
            &raw.referenced,
            "attack: needs a load of known length, and this one stops by payment count only",
            "add duration: to stop: (e.g. stop: { duration: 60s }) so the attack's window fits in it",
        )
    })?;
    let hold = positive(ctx, &a.hold, "attack hold")?;
    let start = match &a.start {
        Some(s) => duration::parse(
            ctx,
            s,
            &duration::Rule {
                name: "attack start",
                hint: HINT,
                zero: None,
                max: None,
            },
        )?,
        None => Duration::ZERO,
    };
    let duration = positive(ctx, &a.duration, "attack for")?;
    let within = |d: Duration| d <= load_length;
    if !within(hold) {
        return Err(beyond(ctx, &a.hold, "hold", load_length));
    }
    if !within(start + duration) {
        return Err(beyond(ctx, &a.duration, "start + for", load_length));
    }
    Ok(Some(Attack {
        attacker,
        accomplice,
        slots,
        amount_msat,
        hold,
        start,
        duration,
    }))
}

fn beyond(ctx: &Ctx, at: &Spanned<String>, what: &str, load: Duration) -> ScenarioError {
    let load = duration::format(load);
    ctx.error(
        &at.referenced,
        format!("attack {what} goes beyond the load, which lasts {load}"),
        format!("keep the attack inside the load: start + for and hold at most {load}"),
    )
}

fn positive(ctx: &Ctx, text: &Spanned<String>, name: &str) -> Result<Duration, ScenarioError> {
    let rule = duration::Rule {
        name,
        hint: HINT,
        zero: Some("write a duration above zero, e.g. 30s"),
        max: None,
    };
    duration::parse(ctx, text, &rule)
}

/// The one instance of an attack node (a group of one replica).
pub(super) fn single(
    ctx: &Ctx,
    groups: &Groups,
    name: &Spanned<String>,
    what: &str,
) -> Result<String, ScenarioError> {
    let instances = groups
        .instances(&name.value)
        .ok_or_else(|| groups.unknown(ctx, name, what))?;
    match instances {
        [one] => Ok(one.clone()),
        _ => Err(ctx.error(
            &name.referenced,
            format!("{what} {} has {} replicas", name.value, instances.len()),
            "give the attack's node its own group with replicas: 1",
        )),
    }
}

/// `slots:` or `share:` (one of them), as a count of slots.
fn slots(
    ctx: &Ctx,
    raw: &Spanned<RawAttack>,
    nodes: &[(Spanned<String>, RawNode)],
) -> Result<u32, ScenarioError> {
    match (&raw.value.slots, &raw.value.share) {
        (Some(s), Some(_)) => Err(ctx.error(
            &s.referenced,
            "attack sets both slots: and share:",
            "keep one: slots: 20 holds 20 HTLCs, share: 0.5 holds half of max_accepted_htlcs",
        )),
        (None, None) => Err(ctx.error(
            &raw.referenced,
            "attack sets neither slots: nor share:",
            "add slots: 20 (HTLCs held at once) or share: 0.5 (of max_accepted_htlcs)",
        )),
        (Some(s), None) if s.value == 0 || s.value > MAX_SLOTS => Err(ctx.error(
            &s.referenced,
            format!("attack slots is {}", s.value),
            format!("write slots: between 1 and {MAX_SLOTS} (HTLCs held at once)"),
        )),
        (Some(s), None) => Ok(s.value),
        (None, Some(share)) if !(share.value > 0.0 && share.value <= 1.0) => Err(ctx.error(
            &share.referenced,
            format!("attack share is {}, outside (0, 1]", share.value),
            "write a share above 0 and at most 1, e.g. share: 0.5 (half of max_accepted_htlcs)",
        )),
        (None, Some(share)) => {
            let max = max_accepted_htlcs(nodes);
            Ok(((share.value * f64::from(max)).ceil() as u32).clamp(1, max))
        }
    }
}

/// The smallest `max_accepted_htlcs` of the scenario's nodes: each from its `args:`
/// where its implementation has a flag for it, else that implementation's default
/// (LND 483, Core Lightning 483 on regtest, Eclair 30, LDK 50).
pub(super) fn max_accepted_htlcs(nodes: &[(Spanned<String>, RawNode)]) -> u32 {
    (nodes.iter())
        .map(|(_, n)| {
            let rules = crate::node::driver(n.implementation.value).channel_rules();
            rules.max_accepted_htlcs(&n.args)
        })
        .min()
        .unwrap_or(MAX_SLOTS)
}

/// How long the load lasts when the file says: its stop duration, or the sum of the
/// open loop's phases (the shorter of the two).
pub(super) fn load_length(load: &Load, stop: &StopCondition) -> Option<Duration> {
    let phases = match load {
        Load::Open { phases } => Some(phases.iter().map(|p| p.duration).sum::<Duration>()),
        Load::Closed { .. } => None,
    };
    match (phases, stop.duration) {
        (Some(p), Some(d)) => Some(p.min(d)),
        (p, d) => p.or(d),
    }
}

/// The implementation of node `name` with why it lacks `feature`, which the workload
/// asks of it; None when it has it, or when no node has that name (refused elsewhere).
pub(super) fn lacking(
    nodes: &[(Spanned<String>, RawNode)],
    name: &str,
    feature: crate::node::Feature,
) -> Option<(Implementation, &'static str)> {
    let (_, node) = nodes.iter().find(|(n, _)| n.value == name)?;
    let implementation = node.implementation.value;
    (crate::node::driver(implementation).missing(feature)).map(|why| (implementation, why))
}

/// The accomplice's implementation must hold invoices.
pub(super) fn check_nodes(
    ctx: &Ctx,
    nodes: &[(Spanned<String>, RawNode)],
    w: &RawWorkload,
) -> Result<(), ScenarioError> {
    let Some(raw) = &w.attack else {
        return Ok(());
    };
    let accomplice = &raw.value.accomplice;
    match lacking(nodes, &accomplice.value, crate::node::Feature::HoldInvoices) {
        None => Ok(()),
        Some((implementation, why)) => Err(ctx.error(
            &accomplice.referenced,
            format!(
                "the accomplice holds HTLCs through hold invoices, but {} is {implementation}: {why}",
                accomplice.value
            ),
            "make the accomplice an LND node (implementation: lnd)",
        )),
    }
}
