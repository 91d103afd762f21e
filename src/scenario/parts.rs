//! `workload: max_parts:` (multi-part payments) and `stop: liquidity_failures:`
//! (draining channels): their bounds, checked where the file writes them.

use super::error::Ctx;
use super::error::ScenarioError;
use super::raw::{RawChannel, RawNode, RawPaymentKind, RawStop, RawWorkload};
use serde_saphyr::Spanned;

/// The most parts a scenario may allow one payment: far more than a sender's
/// channels to one receiver, and each part pays its own fees and takes an HTLC slot.
pub(super) const MAX_PARTS: u32 = 128;

/// `max_parts:` checked: set only for invoice payments, between 1 and [`MAX_PARTS`].
pub(super) fn max_parts(ctx: &Ctx, w: &RawWorkload) -> Result<Option<u32>, ScenarioError> {
    let Some(parts) = &w.max_parts else {
        return Ok(None);
    };
    if matches!(w.kind.value, RawPaymentKind::Keysend) {
        return Err(ctx.error(
            &parts.referenced,
            "max_parts with kind: keysend: a keysend has no payment address, so it cannot be split",
            "write kind: invoice (or invoice-pregenerated) to pay in parts, or remove max_parts",
        ));
    }
    match parts.value {
        0 => Err(ctx.error(
            &parts.referenced,
            "max_parts is 0",
            "write max_parts: 1 or more (1 pays in one part; e.g. 8 lets the sender split a payment over up to 8 HTLCs)",
        )),
        n if n > MAX_PARTS => Err(ctx.error(
            &parts.referenced,
            format!("max_parts is {n}, more than {MAX_PARTS}"),
            format!("write max_parts: {MAX_PARTS} or fewer, e.g. max_parts: 16"),
        )),
        n => Ok(Some(n)),
    }
}

/// A payment split in parts must fit in the channels each sender opened, together.
/// With parts allowed, this replaces the check that one channel holds the amount.
pub(super) fn check_split_amount(
    ctx: &Ctx,
    channels: &[Spanned<RawChannel>],
    w: &Spanned<RawWorkload>,
    amount_msat: u64,
) -> Result<(), ScenarioError> {
    for sender in &w.value.senders.value {
        let total_sat: u64 = (channels.iter().map(|c| &c.value))
            .filter(|c| c.from.value == sender.value)
            .map(|c| {
                let count = c.count.as_ref().map_or(1, |n| u64::from(n.value));
                c.capacity_sat.value.saturating_mul(count)
            })
            .fold(0, u64::saturating_add);
        if amount_msat > total_sat.saturating_mul(1000) {
            let at = (w.value.amount_msat.as_ref()).map_or(&w.referenced, |a| &a.referenced);
            return Err(ctx.error(
                at,
                format!(
                    "amount_msat is {amount_msat}, more than {}'s channels hold together ({total_sat} sat)",
                    sender.value
                ),
                format!(
                    "lower amount_msat below {}, or open more channels from {} (add count: to a channel)",
                    total_sat.saturating_mul(1000),
                    sender.value
                ),
            ));
        }
    }
    Ok(())
}

/// `max_parts:` only when every sender's client can set a part limit.
pub(super) fn check_senders_split(
    ctx: &Ctx,
    nodes: &[(Spanned<String>, RawNode)],
    w: &RawWorkload,
) -> Result<(), ScenarioError> {
    let Some(parts) = &w.max_parts else {
        return Ok(());
    };
    for sender in &w.senders.value {
        let Some((_, node)) = nodes.iter().find(|(name, _)| name.value == sender.value) else {
            continue;
        };
        let implementation = node.implementation.value;
        if let Some(why) =
            crate::node::driver(implementation).missing(crate::node::Feature::PartLimit)
        {
            return Err(ctx.error(
                &parts.referenced,
                format!(
                    "max_parts is set, but sender {} runs {implementation}: {why}",
                    sender.value
                ),
                "pay from LND or LDK nodes to set max_parts, or remove max_parts (the node then splits by its own default)",
            ));
        }
    }
    Ok(())
}

/// `liquidity_failures:` under `stop:`: at least 1, and never the only bound (a
/// channel that never depletes would run forever).
pub(super) fn liquidity_failures(
    ctx: &Ctx,
    stop: &Spanned<RawStop>,
) -> Result<Option<u64>, ScenarioError> {
    let s = &stop.value;
    let Some(n) = &s.liquidity_failures else {
        return Ok(None);
    };
    if n.value == 0 {
        return Err(ctx.error(
            &n.referenced,
            "stop liquidity_failures is 0",
            "write liquidity_failures: 1 or more (the load stops after that many payments failed for lack of liquidity)",
        ));
    }
    if s.payments.is_none() && s.duration.is_none() {
        return Err(ctx.error(
            &n.referenced,
            "stop: sets liquidity_failures: without payments: or duration:",
            "add duration: 2m as well: the load stops at whichever comes first, also when the channels never deplete",
        ));
    }
    Ok(Some(n.value))
}
