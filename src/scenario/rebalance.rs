//! `workload: rebalance:` (circular rebalancing during the load): every `every`, one
//! node pays itself `amount_sat` out through its channel to `first_hop` and back in
//! through its channel from `last_hop`, moving liquidity from the first channel to the
//! second. Beside a draining one-way flow, it refills the drained channel.
//!
//! ```yaml
//! rebalance: { node: alice, first_hop: carol, last_hop: bob, amount_sat: 500000,
//!              every: 10s, below_sat: 1000000, max_fee_ppm: 1000 }
//! ```
//!
//! `below_sat:` rebalances only while the node's balance on its channels with
//! `last_hop` is below it (read before each try); without it, every tick pays.

use super::attack::{load_length, single};
use super::duration;
use super::error::Ctx;
use super::error::ScenarioError;
use super::groups::Groups;
use super::raw::RawRebalance;
use super::raw::{RawChannel, RawNode, RawWorkload};
use super::{Load, StopCondition};
use serde_saphyr::Spanned;
use std::time::Duration;

/// A route's fees allowed by default: 1,000 parts per million of the amount.
const DEFAULT_MAX_FEE_PPM: u32 = 1_000;

/// A validated `rebalance:`.
#[derive(Debug, Clone, PartialEq)]
pub struct Rebalance {
    /// Instance names: the node paying itself, the peer its payment leaves through,
    /// and the peer it comes back from.
    pub node: String,
    pub first_hop: String,
    pub last_hop: String,
    pub amount_sat: u64,
    /// From the load's start: a try every `every`, one at a time.
    pub every: Duration,
    /// Only while the node's balance toward `last_hop` is below this.
    pub below_sat: Option<u64>,
    /// The most the route may charge, in parts per million of the amount.
    pub max_fee_ppm: u32,
}

impl Rebalance {
    /// The fee limit of one try, msat (at least 1 sat).
    pub fn max_fee_msat(&self) -> u64 {
        (self.amount_sat.saturating_mul(u64::from(self.max_fee_ppm)) / 1_000).max(1_000)
    }
}

/// `rebalance:` checked against the nodes, the channels and the load.
pub(super) fn validate(
    ctx: &Ctx,
    groups: &Groups,
    channels: Option<&[Spanned<RawChannel>]>,
    w: &RawWorkload,
    (load, stop): (&Load, &StopCondition),
) -> Result<Option<Rebalance>, ScenarioError> {
    let Some(raw) = &w.rebalance else {
        return Ok(None);
    };
    let r = &raw.value;
    let node = single(ctx, groups, &r.node, "rebalance node:")?;
    let first_hop = single(ctx, groups, &r.first_hop, "rebalance first_hop:")?;
    let last_hop = single(ctx, groups, &r.last_hop, "rebalance last_hop:")?;
    if r.first_hop.value == r.last_hop.value {
        return Err(ctx.error(
            &r.last_hop.referenced,
            "rebalance first_hop and last_hop are the same node",
            "name two peers of the node: the payment leaves through first_hop's channel and comes back through last_hop's",
        ));
    }
    for hop in [&r.first_hop, &r.last_hop] {
        if hop.value == r.node.value {
            return Err(ctx.error(
                &hop.referenced,
                format!("rebalance names {} as its own hop", hop.value),
                "name a peer of the node (one it has a channel with)",
            ));
        }
    }
    if let Some(channels) = channels {
        check_channels(ctx, channels, r)?;
    }
    if r.amount_sat.value == 0 {
        return Err(ctx.error(
            &r.amount_sat.referenced,
            "rebalance amount_sat is 0",
            "write the amount one rebalance moves, e.g. amount_sat: 500000",
        ));
    }
    let every = duration::parse(
        ctx,
        &r.every,
        &duration::Rule {
            name: "rebalance every",
            hint: "write a number and a unit, e.g. 10s",
            zero: Some("write a duration above zero, e.g. every: 10s"),
            max: None,
        },
    )?;
    if let Some(length) = load_length(load, stop)
        && every > length
    {
        let length = duration::format(length);
        return Err(ctx.error(
            &r.every.referenced,
            format!("rebalance every is longer than the load, which lasts {length}"),
            format!("write every: at most {length}, e.g. every: 10s"),
        ));
    }
    let max_fee_ppm = match &r.max_fee_ppm {
        Some(p) if p.value == 0 || p.value > 1_000_000 => {
            return Err(ctx.error(
                &p.referenced,
                format!("rebalance max_fee_ppm is {}", p.value),
                "write a fee limit between 1 and 1000000 parts per million of the amount, e.g. max_fee_ppm: 1000",
            ));
        }
        Some(p) => p.value,
        None => DEFAULT_MAX_FEE_PPM,
    };
    Ok(Some(Rebalance {
        node,
        first_hop,
        last_hop,
        amount_sat: r.amount_sat.value,
        every,
        below_sat: r.below_sat.as_ref().map(|b| b.value),
        max_fee_ppm,
    }))
}

/// The node has a channel with each hop, and channels lead from the first hop to the
/// last without the node.
fn check_channels(
    ctx: &Ctx,
    channels: &[Spanned<RawChannel>],
    r: &RawRebalance,
) -> Result<(), ScenarioError> {
    let between = |a: &str, b: &str| {
        (channels.iter().map(|c| &c.value)).any(|c| {
            (c.from.value == a && c.to.value == b) || (c.from.value == b && c.to.value == a)
        })
    };
    for hop in [&r.first_hop, &r.last_hop] {
        if !between(&r.node.value, &hop.value) {
            return Err(ctx.error(
                &hop.referenced,
                format!(
                    "rebalance node {} has no channel with {}",
                    r.node.value, hop.value
                ),
                format!(
                    "add a channel between {} and {} under channels:, or name one of the node's peers",
                    r.node.value, hop.value
                ),
            ));
        }
    }
    let (first, last) = (&r.first_hop.value, &r.last_hop.value);
    if !super::paths::reaches_without(channels, first, last, Some(&r.node.value)) {
        return Err(ctx.error(
            &r.last_hop.referenced,
            format!(
                "no channels lead from {} to {} except through {}: the rebalance has no circle",
                r.first_hop.value, r.last_hop.value, r.node.value
            ),
            format!(
                "add a channel from {} to {} (opened by {}) under channels:",
                r.first_hop.value, r.last_hop.value, r.first_hop.value
            ),
        ));
    }
    Ok(())
}

/// The rebalancing node's implementation must pay in a circle.
pub(super) fn check_nodes(
    ctx: &Ctx,
    nodes: &[(Spanned<String>, RawNode)],
    w: &RawWorkload,
) -> Result<(), ScenarioError> {
    let Some(raw) = &w.rebalance else {
        return Ok(());
    };
    let name = &raw.value.node;
    match super::attack::lacking(nodes, &name.value, crate::node::Feature::CircularPayments) {
        None => Ok(()),
        Some((implementation, why)) => Err(ctx.error(
            &name.referenced,
            format!(
                "rebalancing needs a node that pays itself around a circle, but {} is {implementation}: {why}",
                name.value
            ),
            "make the rebalancing node an LND node (implementation: lnd)",
        )),
    }
}
