//! Reading `links:` and `faults:` from the raw scenario into [`LinkSpec`]s and
//! [`Fault`]s, with an error that points at the offending key.

use super::super::duration;
use super::super::error::Ctx;
use super::super::error::ScenarioError;
use super::super::groups::Groups;
use super::{
    EVERY, Fault, FaultAction, FaultTrigger, LinkChange, LinkEnd, LinkPair, LinkShape, LinkSpec,
};
use crate::scenario::raw::RawFault;
use serde_saphyr::{Location, Spanned};
use std::time::Duration;

const MAX_LATENCY: Duration = Duration::from_secs(10);
const MAX_AT: Duration = Duration::from_secs(30 * 24 * 3600);
const MAX_BLOCKS: u32 = 1000;

const MIN_EVERY: Duration = Duration::from_secs(1);
const MAX_EVERY: Duration = Duration::from_secs(3600);

/// Reads `mining:`; a `mining: stop` or `resume` fault needs it.
pub(in crate::scenario) fn mining(
    ctx: &Ctx,
    raw: &crate::scenario::raw::RawScenario,
) -> Result<Option<Duration>, ScenarioError> {
    let every = match &raw.mining {
        Some(m) => {
            let every = duration(ctx, &m.value.every, "every", false, MAX_EVERY)?;
            if every < MIN_EVERY {
                return Err(ctx.error(
                    &m.value.every.referenced,
                    format!("every: {} is too often to mine", m.value.every.value),
                    "write at least 1s",
                ));
            }
            Some(every)
        }
        None => None,
    };
    let faults = raw.faults.iter().flat_map(|f| &f.value);
    if every.is_none()
        && let Some(m) = faults.filter_map(|f| f.value.mining.as_ref()).next()
    {
        return Err(ctx.error(
            &m.referenced,
            format!("mining: {} has no background mining to act on", m.value),
            "add mining: { every: 10s } at the top of the scenario",
        ));
    }
    Ok(every)
}

const FAULT_HINT: &str = "give each fault one of kill:, restart:, pause:, link:, mine: or mining:, e.g. \
                          - { at: 20s, kill: bob, restart_after: 5s }";

/// Reads `links:` and `faults:`; `instances` are the scenario's node instances.
/// Faults the load ends before are refused (`stop` is when it ends).
pub(in crate::scenario) fn validate(
    ctx: &Ctx,
    groups: &Groups,
    raw: &crate::scenario::raw::RawScenario,
    stop: &crate::scenario::StopCondition,
) -> Result<(Vec<LinkSpec>, Vec<Fault>), ScenarioError> {
    let (links, faults) = (raw.links.as_ref(), raw.faults.as_ref());
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
    check_reachable(ctx, faults, &out, stop)?;
    Ok((out_links, out))
}

/// A fault the load ends before can never fire: refused where it is written, as a
/// scenario that validates must do what it says. The load ends at `stop.duration` at
/// the latest and after `stop.payments` payments at the most.
fn check_reachable(
    ctx: &Ctx,
    raw: Option<&Spanned<Vec<Spanned<RawFault>>>>,
    faults: &[Fault],
    stop: &crate::scenario::StopCondition,
) -> Result<(), ScenarioError> {
    for (raw, fault) in raw.iter().flat_map(|f| &f.value).zip(faults) {
        let late = match fault.trigger {
            FaultTrigger::At(t) => stop.duration.filter(|end| t >= *end).map(|end| {
                let at = raw.value.at.as_ref().map_or(&raw.referenced, |a| &a.referenced);
                let end = humantime::format_duration(end);
                (at, format!("this fault is at: {}, but the load stops at {end} (stop: duration:)", humantime::format_duration(t)),
                 format!("write an at: below {end}, or a longer stop: duration:"))
            }),
            FaultTrigger::AfterPayments(n) => stop.payments.filter(|last| n >= *last).map(|last| {
                let at = raw.value.after_payments.as_ref().map_or(&raw.referenced, |a| &a.referenced);
                (at, format!("this fault is after_payments: {n}, but the load stops after {last} payments (stop: payments:)"),
                 format!("write an after_payments: below {last}, or more stop: payments:"))
            }),
        };
        if let Some((at, message, hint)) = late {
            return Err(ctx.error(at, message, hint));
        }
    }
    Ok(())
}

fn fault(ctx: &Ctx, groups: &Groups, raw: &Spanned<RawFault>) -> Result<Fault, ScenarioError> {
    let f = &raw.value;
    let at = &raw.referenced;
    let trigger = trigger(ctx, f, at)?;
    let actions = [
        f.kill.as_ref().map(|s| &s.referenced),
        f.restart.as_ref().map(|s| &s.referenced),
        f.pause.as_ref().map(|s| &s.referenced),
        f.link.as_ref().map(|s| &s.referenced),
        f.mine.as_ref().map(|s| &s.referenced),
        f.mining.as_ref().map(|s| &s.referenced),
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
    let action = action(ctx, groups, f, for_)?;
    Ok(Fault { trigger, action })
}

/// `at:` or `after_payments:`; `at` locates the fault when it has neither.
fn trigger(ctx: &Ctx, f: &RawFault, at: &Location) -> Result<FaultTrigger, ScenarioError> {
    match (&f.at, &f.after_payments) {
        (Some(_), Some(n)) => Err(ctx.error(
            &n.referenced,
            "a fault has both at: and after_payments:",
            "keep one: at: 20s (into the load) or after_payments: 500",
        )),
        (Some(t), None) => Ok(FaultTrigger::At(duration(ctx, t, "at", true, MAX_AT)?)),
        (None, Some(n)) if n.value == 0 => Err(ctx.error(
            &n.referenced,
            "after_payments: is 0",
            "write a count above zero, or at: 0s to begin with the load",
        )),
        (None, Some(n)) => Ok(FaultTrigger::AfterPayments(n.value)),
        (None, None) => Err(ctx.error(
            at,
            "a fault says not when it happens",
            "add at: 20s (into the load) or after_payments: 500",
        )),
    }
}

/// The one action `f` names (checked before), refusing keys of another action.
fn action(
    ctx: &Ctx,
    groups: &Groups,
    f: &RawFault,
    for_: Option<Duration>,
) -> Result<FaultAction, ScenarioError> {
    let no_for = || {
        stray(
            ctx,
            f.for_.as_ref().map(|s| &s.referenced),
            "for:",
            "pause: or link:",
        )
    };
    if let Some(n) = &f.kill {
        link_keys(ctx, f)?;
        no_for()?;
        let restart_after = match &f.restart_after {
            Some(t) => Some(duration(ctx, t, "restart_after", true, MAX_AT)?),
            None => None,
        };
        return Ok(FaultAction::Kill {
            node: node_or_chain(ctx, groups, n, "kill:")?,
            restart_after,
        });
    }
    stray(
        ctx,
        f.restart_after.as_ref().map(|s| &s.referenced),
        "restart_after:",
        "kill:",
    )?;
    if let Some(n) = &f.restart {
        link_keys(ctx, f)?;
        no_for()?;
        Ok(FaultAction::Restart {
            node: node_or_chain(ctx, groups, n, "restart:")?,
        })
    } else if let Some(n) = &f.pause {
        link_keys(ctx, f)?;
        let Some(duration) = for_ else {
            return Err(ctx.error(
                &n.referenced,
                "a pause says not how long",
                "add for: 3s (the node is resumed after it)",
            ));
        };
        Ok(FaultAction::Pause {
            node: instance(ctx, groups, n, "pause:")?,
            duration,
        })
    } else if let Some(m) = &f.mine {
        link_keys(ctx, f)?;
        no_for()?;
        if m.value == 0 || m.value > MAX_BLOCKS {
            return Err(ctx.error(
                &m.referenced,
                format!("mine: {} is not a burst of blocks", m.value),
                format!("write 1 to {MAX_BLOCKS} blocks"),
            ));
        }
        Ok(FaultAction::Mine { blocks: m.value })
    } else if let Some(m) = &f.mining {
        link_keys(ctx, f)?;
        no_for()?;
        match m.value.as_str() {
            "stop" => Ok(FaultAction::Mining { on: false }),
            "resume" => Ok(FaultAction::Mining { on: true }),
            other => Err(ctx.error(
                &m.referenced,
                format!("mining: {other} is neither stop nor resume"),
                "write mining: stop or mining: resume",
            )),
        }
    } else {
        let l = f.link.as_ref().expect("one action is given");
        Ok(FaultAction::Link {
            pair: pair(ctx, groups, l, "link:")?,
            change: link_change(ctx, f, l)?,
            duration: for_,
        })
    }
}

/// What a `link:` fault does: `down:`, `reset:` or a shape, exactly one.
fn link_change(
    ctx: &Ctx,
    f: &RawFault,
    l: &Spanned<Vec<Spanned<String>>>,
) -> Result<LinkChange, ScenarioError> {
    let down = f.down.as_ref().filter(|d| d.value);
    let reset = f.reset.as_ref().filter(|r| r.value);
    let shaped = f.latency.is_some() || f.jitter.is_some() || f.bandwidth.is_some();
    match (down, reset, shaped) {
        (Some(_), None, false) => Ok(LinkChange::Down),
        (None, Some(_), false) => match &f.for_ {
            Some(t) => Err(ctx.error(
                &t.referenced,
                "a reset has for:",
                "remove for: (a reset cuts the connections once), or write down: true",
            )),
            None => Ok(LinkChange::Reset),
        },
        (None, None, true) => Ok(LinkChange::Shape(shape(
            ctx,
            f.latency.as_ref(),
            f.jitter.as_ref(),
            f.bandwidth.as_ref(),
        )?)),
        (None, None, false) => Err(ctx.error(
            &l.referenced,
            "a link fault says not what happens to the link",
            "add latency: 50ms, bandwidth: 100 (KB/s), down: true or reset: true",
        )),
        _ => Err(ctx.error(
            &l.referenced,
            "a link fault has more than one of latency/bandwidth, down: and reset:",
            "write one link fault per change",
        )),
    }
}

/// A key given (at `key`) that belongs to another action than the one given.
fn stray(
    ctx: &Ctx,
    key: Option<&Location>,
    name: &str,
    belongs: &str,
) -> Result<(), ScenarioError> {
    match key {
        Some(loc) => Err(ctx.error(
            loc,
            format!("{name} belongs to {belongs}"),
            format!("remove {name}, or make this a {belongs} fault"),
        )),
        None => Ok(()),
    }
}

/// Refuses the keys of a link fault on a fault of another kind.
fn link_keys(ctx: &Ctx, f: &RawFault) -> Result<(), ScenarioError> {
    let keys = [
        (f.latency.as_ref().map(|s| &s.referenced), "latency:"),
        (f.jitter.as_ref().map(|s| &s.referenced), "jitter:"),
        (f.bandwidth.as_ref().map(|s| &s.referenced), "bandwidth:"),
        (f.down.as_ref().map(|s| &s.referenced), "down:"),
        (f.reset.as_ref().map(|s| &s.referenced), "reset:"),
    ];
    for (key, name) in keys {
        stray(ctx, key, name, "link:")?;
    }
    Ok(())
}

/// One instance (a group of one replica gives its instance; of more, an error).
/// A node instance, or `chain` (the chain backend: `kill: chain`, `restart: chain`).
fn node_or_chain(
    ctx: &Ctx,
    groups: &Groups,
    name: &Spanned<String>,
    what: &str,
) -> Result<String, ScenarioError> {
    match name.value.trim() {
        crate::chain::CHAIN_NAME => Ok(crate::chain::CHAIN_NAME.to_string()),
        _ => instance(ctx, groups, name, what),
    }
}

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
