//! Checks of `workload:`: who pays whom, whether a channel path exists, the load model
//! (closed loop or open-loop phases), the stop condition and the timeouts.

use super::duration;
use super::error::Ctx;
use super::error::ScenarioError;
use super::groups::{Groups, sender_instances};
use super::paths::reaches;
use super::raw::{RawChannel, RawPaymentKind, RawRamp, RawRate, RawSteady, RawStop, RawWorkload};
use super::{Load, Phase, PhaseKind, StopCondition, Workload};
use serde_saphyr::{Location, Spanned};
use std::collections::HashSet;
use std::time::Duration;

const DEFAULT_AMOUNT_MSAT: u64 = 1_000;
const DEFAULT_PAYMENT_TIMEOUT: Duration = Duration::from_secs(60);
const DURATION_HINT: &str = "write a number and a unit, e.g. 30s, 5m or 1h30m";
/// The longest duration a scenario may give (a stop, a phase, a timeout).
pub(super) const MAX_DURATION: Duration = Duration::from_secs(30 * 24 * 3600);

/// The most payments `stop: payments:` (and `--payments`) may ask for: more than a
/// month at the fastest node's rate here, and far below what a count can hold.
pub(super) const MAX_STOP_PAYMENTS: u64 = 1_000_000_000;
/// The highest open-loop rate, payments/s: far above any node, low enough that the
/// schedule's offsets stay apart.
const MAX_RATE: f64 = 100_000.0;
/// The most payments in flight at once: each is a task, and far beyond what a node
/// accepts (LND's default limit on HTLCs in flight per channel is 483).
pub(crate) const MAX_CONCURRENCY: u32 = 10_000;
const NONZERO_DURATION_HINT: &str = "write a duration above zero, e.g. 30s, 5m or 1h30m";

/// `channels` is None when the channels already exist (`runtime: external`): paths
/// are then checked on the nodes, not in the file.
pub(super) fn validate(
    ctx: &Ctx,
    groups: &Groups,
    channels: Option<&[Spanned<RawChannel>]>,
    raw: &Spanned<RawWorkload>,
) -> Result<Workload, ScenarioError> {
    let w = &raw.value;
    let amount_msat = match &w.amount_msat {
        Some(a) if a.value == 0 => {
            return Err(ctx.error(
                &a.referenced,
                "amount_msat is 0",
                format!("write an amount in millisatoshis of at least 1, e.g. amount_msat: {DEFAULT_AMOUNT_MSAT}"),
            ));
        }
        Some(a) => a.value,
        None => DEFAULT_AMOUNT_MSAT,
    };
    let (senders, receivers, stream) = match w.kind.value {
        RawPaymentKind::Stream => {
            let (s, r, stream) = super::stream::parties(ctx, groups, channels, w, amount_msat)?;
            (s, r, Some(stream))
        }
        _ => {
            super::stream::refuse_recipients(ctx, w)?;
            let (s, r) = parties(ctx, groups, channels, w)?;
            (s, r, None)
        }
    };
    let max_parts = super::parts::max_parts(ctx, w)?;
    match (channels, max_parts) {
        (Some(channels), Some(n)) if n > 1 => {
            super::parts::check_split_amount(ctx, channels, raw, amount_msat)?
        }
        _ => check_amount_fits(ctx, channels, raw, amount_msat)?,
    }
    let load = match (&w.concurrency, &w.rate) {
        (Some(concurrency), Some(_)) => {
            return Err(ctx.error(
                &concurrency.referenced,
                "workload sets both concurrency: (closed loop) and rate: (open loop)",
                "keep one: concurrency: N keeps N payments in flight, rate: schedules payments per second",
            ));
        }
        (None, None) => {
            return Err(ctx.error(
                &raw.referenced,
                "workload sets neither concurrency: nor rate:",
                "add concurrency: 10 (closed loop: 10 payments in flight) or rate: with hold: { rate: 50, duration: 1m } (open loop)",
            ));
        }
        (Some(c), None) if c.value == 0 => {
            return Err(ctx.error(
                &c.referenced,
                "concurrency is 0",
                "write concurrency: 1 or more (how many payments are in flight at once)",
            ));
        }
        (Some(c), None) if c.value > MAX_CONCURRENCY => {
            return Err(ctx.error(
                &c.referenced,
                format!("concurrency is {}, more than {MAX_CONCURRENCY}", c.value),
                format!(
                    "write concurrency: {MAX_CONCURRENCY} or fewer (payments in flight at once)"
                ),
            ));
        }
        (Some(c), None) => Load::Closed {
            concurrency: c.value,
        },
        (None, Some(rate)) => Load::Open {
            phases: phases(ctx, rate)?,
        },
    };
    let stop = stop_condition(ctx, &w.stop)?;
    let payment_timeout = match &w.payment_timeout {
        Some(t) => nonzero_duration(ctx, t, "payment_timeout")?,
        None => DEFAULT_PAYMENT_TIMEOUT,
    };
    Ok(Workload {
        kind: w.kind.value.kind(),
        senders,
        receivers,
        amount_msat,
        load,
        stop,
        payment_timeout,
        stream,
        max_parts,
        attack: None,
        rebalance: None,
    })
}

/// Sender and receiver instances, after checking names and channel paths.
fn parties(
    ctx: &Ctx,
    groups: &Groups,
    channels: Option<&[Spanned<RawChannel>]>,
    w: &RawWorkload,
) -> Result<(Vec<String>, Vec<String>), ScenarioError> {
    let given = |at: &Location| *at != Location::UNKNOWN;
    if w.activity.is_some() {
        // The activity picks senders and peers (activity.rs).
        let written = [&w.senders.referenced, &w.receiver.referenced];
        return match written.into_iter().find(|at| given(at)) {
            None => Ok((Vec::new(), Vec::new())),
            Some(at) => Err(ctx.error(
                at,
                "workload sets activity: and senders: or receiver:",
                "keep one: activity: pays random peers across the network, senders: and receiver: pay one receiver",
            )),
        };
    }
    for (field, at) in [
        ("senders", &w.senders.referenced),
        ("receiver", &w.receiver.referenced),
    ] {
        if !given(at) {
            return Err(ctx.error(
                &w.kind.referenced,
                format!("missing field `{field}`"),
                format!(
                    "add {field}: (e.g. senders: [{}] and receiver: bob), or activity: {{ senders: all }} to pay random peers",
                    first_group(groups)
                ),
            ));
        }
    }
    if w.senders.value.is_empty() {
        return Err(ctx.error(
            &w.senders.referenced,
            "senders: is empty",
            format!(
                "list the nodes that pay, e.g. senders: [{}]",
                first_group(groups)
            ),
        ));
    }
    let receiver = &w.receiver;
    let receivers = groups
        .instances(&receiver.value)
        .ok_or_else(|| groups.unknown(ctx, receiver, "receiver:"))?
        .to_vec();
    let mut senders = Vec::new();
    let mut seen = HashSet::new();
    for sender in &w.senders.value {
        let instances = sender_instances(ctx, groups, sender, &mut seen)?;
        if sender.value == receiver.value {
            return Err(ctx.error(
                &sender.referenced,
                format!("{} is both a sender and the receiver", sender.value),
                format!(
                    "remove {} from senders: or pick another receiver:",
                    sender.value
                ),
            ));
        }
        if let Some(channels) = channels
            && !reaches(channels, &sender.value, &receiver.value)
        {
            return Err(ctx.error(
                &sender.referenced,
                format!(
                    "sender {} has no channel path to receiver {}: no chain of channels under channels: leads from {} to {}",
                    sender.value, receiver.value, sender.value, receiver.value
                ),
                format!(
                    "add a channel under channels: such as {{ from: {}, to: {}, capacity_sat: 5000000 }}",
                    sender.value, receiver.value
                ),
            ));
        }
        senders.extend(instances.iter().cloned());
    }
    Ok((senders, receivers))
}

fn first_group(groups: &Groups) -> &str {
    groups.order.first().map_or("alice", |(g, _)| g.as_str())
}

fn phases(ctx: &Ctx, rate: &Spanned<RawRate>) -> Result<Vec<Phase>, ScenarioError> {
    let r = &rate.value;
    let mut phases = Vec::new();
    if let Some(s) = &r.warm_up {
        phases.push(steady(ctx, s, PhaseKind::WarmUp, "warm_up")?);
    }
    if let Some(ramp) = &r.ramp {
        phases.push(ramp_phase(ctx, ramp)?);
    }
    if let Some(s) = &r.hold {
        phases.push(steady(ctx, s, PhaseKind::Hold, "hold")?);
    }
    if phases.is_empty() {
        return Err(ctx.error(
            &rate.referenced,
            "rate: has no phase",
            "add at least one of warm_up: { rate, duration }, ramp: { from, to, duration }, hold: { rate, duration }",
        ));
    }
    Ok(phases)
}

fn steady(
    ctx: &Ctx,
    s: &Spanned<RawSteady>,
    kind: PhaseKind,
    name: &str,
) -> Result<Phase, ScenarioError> {
    let rate = positive_rate(ctx, &s.value.rate, &format!("{name} rate"))?;
    Ok(Phase {
        kind,
        from_rate: rate,
        to_rate: rate,
        duration: nonzero_duration(ctx, &s.value.duration, &format!("{name} duration"))?,
    })
}

fn ramp_phase(ctx: &Ctx, ramp: &Spanned<RawRamp>) -> Result<Phase, ScenarioError> {
    let RawRamp { from, to, duration } = &ramp.value;
    Ok(Phase {
        kind: PhaseKind::Ramp,
        from_rate: positive_rate(ctx, from, "ramp from")?,
        to_rate: positive_rate(ctx, to, "ramp to")?,
        duration: nonzero_duration(ctx, duration, "ramp duration")?,
    })
}

fn positive_rate(ctx: &Ctx, rate: &Spanned<f64>, what: &str) -> Result<f64, ScenarioError> {
    if rate.value.is_finite() && rate.value > MAX_RATE {
        Err(ctx.error(
            &rate.referenced,
            format!("{what} is {} payments/s, more than {MAX_RATE}", rate.value),
            format!("write a rate of at most {MAX_RATE} payments per second (no node comes near it; a higher one only spins the scheduler)"),
        ))
    } else if rate.value.is_finite() && rate.value > 0.0 {
        Ok(rate.value)
    } else {
        Err(ctx.error(
            &rate.referenced,
            format!("{what} is {} payments/s", rate.value),
            "write a rate above 0 payments per second, e.g. 20; leave out a phase you do not want",
        ))
    }
}

fn stop_condition(ctx: &Ctx, stop: &Spanned<RawStop>) -> Result<StopCondition, ScenarioError> {
    let s = &stop.value;
    let liquidity_failures = super::parts::liquidity_failures(ctx, stop)?;
    if s.payments.is_none() && s.duration.is_none() {
        return Err(ctx.error(
            &stop.referenced,
            "stop: sets neither payments: nor duration:",
            "add payments: 2000 and/or duration: 5m (the run stops at whichever comes first)",
        ));
    }
    let payments = match &s.payments {
        Some(p) if p.value == 0 => {
            return Err(ctx.error(
                &p.referenced,
                "stop payments is 0",
                "write payments: 1 or more, or remove it and stop by duration: only",
            ));
        }
        Some(p) if p.value > MAX_STOP_PAYMENTS => {
            return Err(ctx.error(
                &p.referenced,
                format!(
                    "stop payments is {}, more than {MAX_STOP_PAYMENTS}",
                    p.value
                ),
                format!(
                    "write at most {MAX_STOP_PAYMENTS} payments; stop a longer run by \
                     duration: (at most 30d)"
                ),
            ));
        }
        Some(p) => Some(p.value),
        None => None,
    };
    let duration = match &s.duration {
        Some(d) => Some(nonzero_duration(ctx, d, "stop duration")?),
        None => None,
    };
    Ok(StopCondition {
        payments,
        duration,
        liquidity_failures,
    })
}

fn nonzero_duration(
    ctx: &Ctx,
    text: &Spanned<String>,
    what: &str,
) -> Result<Duration, ScenarioError> {
    let rule = duration::Rule {
        name: what,
        hint: DURATION_HINT,
        zero: Some(NONZERO_DURATION_HINT),
        max: Some(duration::Max {
            limit: MAX_DURATION,
            says: "is longer than 30 days",
            hint: "write a duration of at most 30d, e.g. 5m or 24h",
        }),
    };
    duration::parse(ctx, text, &rule)
}

/// A payment of `amount_msat` must fit in at least one of the file's channels: above
/// every channel's capacity, every payment would fail.
fn check_amount_fits(
    ctx: &Ctx,
    channels: Option<&[Spanned<RawChannel>]>,
    raw: &Spanned<RawWorkload>,
    amount_msat: u64,
) -> Result<(), ScenarioError> {
    let Some(largest) = channels.and_then(|c| c.iter().map(|c| c.value.capacity_sat.value).max())
    else {
        return Ok(());
    };
    if amount_msat <= largest.saturating_mul(1000) {
        return Ok(());
    }
    let at = (raw.value.amount_msat.as_ref()).map_or(&raw.referenced, |a| &a.referenced);
    Err(ctx.error(
        at,
        format!(
            "amount_msat is {amount_msat}, more than the largest channel holds ({largest} sat)"
        ),
        "lower amount_msat, give a channel a capacity_sat above the amount, or (invoices) set max_parts: to split it over several channels",
    ))
}
