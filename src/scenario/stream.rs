//! `kind: stream` (Podcasting 2.0 value-for-value): each tick pays the tick's total,
//! `amount_msat`, split across `recipients:` by their `split:` weights, one keysend
//! per recipient carrying the podcast record.

use super::error::Ctx;
use super::error::ScenarioError;
use super::groups::Groups;
use super::raw::RawRecipient;
use super::raw::{RawChannel, RawNode, RawWorkload};
use crate::node::Feature;
use serde_saphyr::{Location, Spanned};
use std::collections::HashSet;

/// One recipient of every tick and what it gets of the tick's total.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Split {
    /// The recipient's instance name.
    pub recipient: String,
    /// Its `split:` weight as written.
    pub weight: u64,
    /// Its share of the tick's total, msat.
    pub amount_msat: u64,
}

/// The splits of a stream workload, in `recipients:` order (the workload's receivers,
/// in the same order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stream {
    pub splits: Vec<Split>,
}

/// Each weight's share of `total`, rounded down; the msat lost to rounding go to the
/// first of the heaviest recipients, so a tick pays exactly `total`.
pub fn split_amounts(total: u64, weights: &[u64]) -> Vec<u64> {
    let sum: u128 = weights.iter().map(|&w| u128::from(w)).sum();
    if sum == 0 {
        return vec![0; weights.len()];
    }
    let mut amounts: Vec<u64> = (weights.iter())
        .map(|&w| (u128::from(total) * u128::from(w) / sum) as u64)
        .collect();
    let rest = total - amounts.iter().sum::<u64>();
    let heaviest = (0..weights.len()).rev().max_by_key(|&i| weights[i]);
    if let Some(i) = heaviest {
        amounts[i] += rest;
    }
    amounts
}

/// The senders, the recipients (as the workload's receivers) and the stream's splits
/// of a `kind: stream` workload, after checking names, weights, shares and paths.
pub(super) fn parties(
    ctx: &Ctx,
    groups: &Groups,
    channels: Option<&[Spanned<RawChannel>]>,
    w: &RawWorkload,
    amount_msat: u64,
) -> Result<(Vec<String>, Vec<String>, Stream), ScenarioError> {
    let given = |at: &Location| *at != Location::UNKNOWN;
    if let Some(a) = &w.activity {
        return Err(ctx.error(
            &a.referenced,
            "kind: stream with activity: is not supported",
            "remove activity: and list the listeners under senders: and the recipients under recipients:",
        ));
    }
    if given(&w.receiver.referenced) {
        return Err(ctx.error(
            &w.receiver.referenced,
            "kind: stream pays recipients:, not one receiver:",
            "write recipients: [{ node: host, split: 60 }, { node: guest, split: 40 }] in place of receiver:",
        ));
    }
    let Some(recipients) = &w.recipients else {
        return Err(ctx.error(
            &w.kind.referenced,
            "kind: stream without recipients:",
            "add recipients: [{ node: host, split: 60 }, { node: guest, split: 40 }] (who shares each tick, by weight)",
        ));
    };
    if recipients.value.is_empty() {
        return Err(ctx.error(
            &recipients.referenced,
            "recipients: is empty",
            "list at least one recipient, e.g. recipients: [{ node: host, split: 100 }]",
        ));
    }
    if !given(&w.senders.referenced) || w.senders.value.is_empty() {
        return Err(ctx.error(
            &w.kind.referenced,
            "kind: stream without senders:",
            "add senders: [listener] (the nodes that stream to the recipients)",
        ));
    }
    let senders = senders(ctx, groups, w)?;
    let mut receivers = Vec::new();
    let mut weights = Vec::new();
    let mut named = HashSet::new();
    for r in &recipients.value {
        let node = &r.value.node;
        let instances = groups
            .instances(&node.value)
            .ok_or_else(|| groups.unknown(ctx, node, "recipients:"))?;
        check_recipient(ctx, w, r, instances, &mut named)?;
        if let Some(channels) = channels {
            check_paths(ctx, channels, w, node)?;
        }
        receivers.push(instances[0].clone());
        weights.push(r.value.split.value);
    }
    let amounts = split_amounts(amount_msat, &weights);
    for (r, amount) in recipients.value.iter().zip(&amounts) {
        if *amount == 0 {
            let sum: u64 = weights.iter().sum();
            return Err(ctx.error(
                &r.value.split.referenced,
                format!(
                    "split {} of {sum} gives {} less than 1 msat of a tick's amount_msat: {amount_msat}",
                    r.value.split.value, r.value.node.value
                ),
                format!(
                    "raise this split:, or raise amount_msat: to at least {} so every share is 1 msat or more",
                    sum.div_ceil(weights.iter().copied().min().unwrap_or(1).max(1))
                ),
            ));
        }
    }
    let splits = (receivers.iter().zip(weights).zip(amounts))
        .map(|((recipient, weight), amount_msat)| Split {
            recipient: recipient.clone(),
            weight,
            amount_msat,
        })
        .collect();
    Ok((senders, receivers, Stream { splits }))
}

/// The listeners' instances, each group listed once.
fn senders(ctx: &Ctx, groups: &Groups, w: &RawWorkload) -> Result<Vec<String>, ScenarioError> {
    let mut senders = Vec::new();
    let mut seen = HashSet::new();
    for sender in &w.senders.value {
        let instances = super::groups::sender_instances(ctx, groups, sender, &mut seen)?;
        senders.extend(instances.iter().cloned());
    }
    Ok(senders)
}

/// Every sender reaches recipient `node` through the scenario's channels.
fn check_paths(
    ctx: &Ctx,
    channels: &[Spanned<RawChannel>],
    w: &RawWorkload,
    node: &Spanned<String>,
) -> Result<(), ScenarioError> {
    for sender in &w.senders.value {
        if !super::paths::reaches(channels, &sender.value, &node.value) {
            return Err(ctx.error(
                &node.referenced,
                format!(
                    "sender {} has no channel path to recipient {}: no chain of channels under channels: leads there",
                    sender.value, node.value
                ),
                format!(
                    "add a channel under channels: such as {{ from: {}, to: {}, capacity_sat: 5000000 }}",
                    sender.value, node.value
                ),
            ));
        }
    }
    Ok(())
}

/// `recipients:` belongs to `kind: stream` only.
pub(super) fn refuse_recipients(ctx: &Ctx, w: &RawWorkload) -> Result<(), ScenarioError> {
    match &w.recipients {
        Some(r) => Err(ctx.error(
            &r.referenced,
            "recipients: is for kind: stream",
            "write kind: stream to split each payment across recipients:, or pay one receiver: instead",
        )),
        None => Ok(()),
    }
}

/// A recipient: named once, not a sender, one instance, a weight above 0.
fn check_recipient<'a>(
    ctx: &Ctx,
    w: &RawWorkload,
    r: &'a Spanned<RawRecipient>,
    instances: &[String],
    named: &mut HashSet<&'a str>,
) -> Result<(), ScenarioError> {
    let node = &r.value.node;
    if !named.insert(node.value.as_str()) {
        return Err(ctx.error(
            &node.referenced,
            format!("{} is listed twice under recipients:", node.value),
            format!("list {} once, with the sum of its splits", node.value),
        ));
    }
    if w.senders.value.iter().any(|s| s.value == node.value) {
        return Err(ctx.error(
            &node.referenced,
            format!("{} is both a sender and a recipient", node.value),
            format!("remove {} from senders: or from recipients:", node.value),
        ));
    }
    if instances.len() != 1 {
        return Err(ctx.error(
            &node.referenced,
            format!(
                "recipient {} has {} replicas, and a split goes to one node",
                node.value,
                instances.len()
            ),
            "give each recipient its own node group with replicas: 1",
        ));
    }
    if r.value.split.value == 0 {
        return Err(ctx.error(
            &r.value.split.referenced,
            format!("split of {} is 0", node.value),
            "write a weight of 1 or more (shares are split: over the sum of all splits), or remove the recipient",
        ));
    }
    Ok(())
}

/// Senders must send the podcast record, recipients must take keysend.
pub(super) fn check_nodes(
    ctx: &Ctx,
    nodes: &[(Spanned<String>, RawNode)],
    w: &RawWorkload,
) -> Result<(), ScenarioError> {
    if !matches!(w.kind.value, super::raw::RawPaymentKind::Stream) {
        return Ok(());
    }
    let implementation_of = |group: &str| {
        (nodes.iter().find(|(name, _)| name.value == group)).map(|(_, n)| n.implementation.value)
    };
    for sender in &w.senders.value {
        let Some(implementation) = implementation_of(&sender.value) else {
            continue;
        };
        let driver = crate::node::driver(implementation);
        if let Some(why) =
            (driver.missing(Feature::Keysend)).or(driver.missing(Feature::CustomRecords))
        {
            return Err(ctx.error(
                &sender.referenced,
                format!(
                    "kind: stream sends a podcast TLV record by keysend, but sender {} is {implementation}: {why}",
                    sender.value
                ),
                "stream from an LND node (implementation: lnd)",
            ));
        }
    }
    for r in w.recipients.iter().flat_map(|r| &r.value) {
        let node = &r.value.node;
        let Some(implementation) = implementation_of(&node.value) else {
            continue;
        };
        if let Some(why) = crate::node::driver(implementation).missing(Feature::Keysend) {
            return Err(ctx.error(
                &node.referenced,
                format!(
                    "kind: stream pays recipients by keysend, but recipient {} is {implementation}: {why}",
                    node.value
                ),
                "pick a recipient whose implementation takes keysend (lnd, cln or eclair)",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::split_amounts;

    #[test]
    fn shares_add_up_to_the_total_and_follow_the_weights() {
        assert_eq!(split_amounts(1_000, &[50, 30, 20]), vec![500, 300, 200]);
        // 1000 / 3 = 333 each, the msat lost to rounding go to the first heaviest.
        assert_eq!(split_amounts(1_000, &[1, 1, 1]), vec![334, 333, 333]);
        assert_eq!(split_amounts(10, &[1, 5, 5]), vec![0, 6, 4]);
        let amounts = split_amounts(u64::MAX, &[u64::MAX, 1]);
        assert_eq!(amounts.iter().sum::<u64>(), u64::MAX);
    }
}
