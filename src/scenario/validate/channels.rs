//! `channels:`: each entry expanded into channels between instances (every pair, or
//! a line `through:` a group), with the checks on its ends, capacity and count.

use super::super::ChannelSpec;
use super::super::ScenarioError;
use super::super::raw::{RawChannel, RawNode};
use crate::scenario::error::Ctx;
use crate::scenario::groups::Groups;
use serde_saphyr::Spanned;

/// Parallel channels per pair of nodes: each is a funding output and a channel to sync.
const MAX_CHANNELS_PER_PAIR: u32 = 1000;

/// Channels in all, every entry expanded over its instances' pairs and `count:`: far
/// above any network a machine holds (a 100-node graph of degree 4 has about 200),
/// far below what would exhaust memory before a node starts.
pub(super) const MAX_TOTAL_CHANNELS: u64 = 20_000;

pub(super) fn expand_channel(
    ctx: &Ctx,
    groups: &Groups,
    raw_nodes: &[(Spanned<String>, RawNode)],
    number: usize,
    channel: &Spanned<RawChannel>,
) -> Result<Vec<ChannelSpec>, ScenarioError> {
    let ch = &channel.value;
    let what = format!("channel {number}");
    let from = groups
        .instances(&ch.from.value)
        .ok_or_else(|| groups.unknown(ctx, &ch.from, &format!("{what} from:")))?;
    let to = groups
        .instances(&ch.to.value)
        .ok_or_else(|| groups.unknown(ctx, &ch.to, &format!("{what} to:")))?;
    if ch.from.value == ch.to.value {
        let other = groups
            .order
            .iter()
            .map(|(g, _)| g.as_str())
            .find(|g| *g != ch.from.value)
            .unwrap_or("another node");
        return Err(ctx.error(
            &ch.to.referenced,
            format!("{what} goes from {} to itself", ch.from.value),
            format!(
                "a channel joins two different nodes: set to: to another node, e.g. to: {other}"
            ),
        ));
    }
    let capacity = &ch.capacity_sat;
    if capacity.value == 0 {
        return Err(ctx.error(
            &capacity.referenced,
            format!("{what} has capacity_sat: 0"),
            "write the channel size in satoshis, e.g. capacity_sat: 5000000",
        ));
    }
    check_large_channel(ctx, raw_nodes, &what, ch)?;
    let count = count(ctx, &what, ch)?;
    let pairs = match &ch.through {
        None => every_pair(from, to),
        Some(through) => line_pairs(ctx, groups, &what, ch, through, from, to)?,
    };
    Ok(pairs
        .into_iter()
        .map(|(from, to)| ChannelSpec {
            from,
            to,
            capacity_sat: capacity.value,
            count,
        })
        .collect())
}

/// A channel above the size an end's implementation opens without its flag (LND:
/// wumbo) needs that flag in the end's `args:`.
fn check_large_channel(
    ctx: &Ctx,
    raw_nodes: &[(Spanned<String>, RawNode)],
    what: &str,
    ch: &RawChannel,
) -> Result<(), ScenarioError> {
    let capacity = &ch.capacity_sat;
    let node_of = |group: &str| raw_nodes.iter().find(|(n, _)| n.value == group);
    let ends = [ch.from.value.as_str(), ch.to.value.as_str()];
    let capped: Vec<(&str, &str, u64, &str)> = ends
        .iter()
        .filter_map(|g| {
            let (_, node) = node_of(g)?;
            let driver = crate::node::driver(node.implementation.value);
            let (cap, flag) = driver.channel_rules().large_channel_flag?;
            let has = node.args.iter().any(|a| a == flag);
            (capacity.value > cap && !has).then_some((
                *g,
                driver.implementation().as_str(),
                cap,
                flag,
            ))
        })
        .collect();
    if let Some(&(_, implementation, cap, flag)) = capped.first() {
        let missing: Vec<&str> = capped.iter().map(|c| c.0).collect();
        return Err(ctx.error(
            &capacity.referenced,
            format!(
                "{what} has capacity_sat: {}, above {cap} sat, the largest channel {} opens without {flag}",
                capacity.value,
                implementation.to_uppercase()
            ),
            format!(
                "lower capacity_sat to at most {cap}, or add \"{flag}\" to args: of {}",
                missing.join(" and ")
            ),
        ));
    }
    Ok(())
}

/// `count:` (parallel channels per pair): 1 to MAX_CHANNELS_PER_PAIR, 1 if absent.
fn count(ctx: &Ctx, what: &str, ch: &RawChannel) -> Result<u32, ScenarioError> {
    Ok(match &ch.count {
        Some(c) if c.value == 0 => {
            return Err(ctx.error(
                &c.referenced,
                format!("{what} has count: 0"),
                "write count: 1 or more (parallel channels per pair), or remove the channel",
            ));
        }
        Some(c) if c.value > MAX_CHANNELS_PER_PAIR => {
            return Err(ctx.error(
                &c.referenced,
                format!(
                    "{what} has count: {}, more than {MAX_CHANNELS_PER_PAIR}",
                    c.value
                ),
                format!("write count: {MAX_CHANNELS_PER_PAIR} or fewer parallel channels per pair"),
            ));
        }
        Some(c) => c.value,
        None => 1,
    })
}

fn every_pair(from: &[String], to: &[String]) -> Vec<(String, String)> {
    from.iter()
        .flat_map(|f| to.iter().map(move |t| (f.clone(), t.clone())))
        .collect()
}

/// `through: carol` makes a line: every instance of `from` to carol-1, carol-1 to
/// carol-2, ..., carol-N to every instance of `to`.
fn line_pairs(
    ctx: &Ctx,
    groups: &Groups,
    what: &str,
    ch: &RawChannel,
    through: &Spanned<String>,
    from: &[String],
    to: &[String],
) -> Result<Vec<(String, String)>, ScenarioError> {
    let hops = groups
        .instances(&through.value)
        .ok_or_else(|| groups.unknown(ctx, through, &format!("{what} through:")))?;
    if through.value == ch.from.value || through.value == ch.to.value {
        return Err(ctx.error(
            &through.referenced,
            format!(
                "{what} goes through {}, which is also its from: or to:",
                through.value
            ),
            "through: names the group of intermediaries between from: and to:, e.g. through: carol",
        ));
    }
    let (first, last) = (&hops[0], &hops[hops.len() - 1]);
    let mut pairs = every_pair(from, std::slice::from_ref(first));
    pairs.extend(hops.windows(2).map(|w| (w[0].clone(), w[1].clone())));
    pairs.extend(every_pair(std::slice::from_ref(last), to));
    Ok(pairs)
}
