//! `repeat:`: the load (each sweep point) runs N times, so the report can give the
//! spread of every figure and `compare` can tell a change from noise.
//!
//! ```yaml
//! repeat: 5                    # or:
//! repeat: { count: 5, settle: 10s, fresh_network: false, thresholds: median }
//! ```
//!
//! Repeats become the fastest-varying parameter of a sweep (`repeat=1`, `repeat=2`,
//! ...): a scenario without `sweep:` becomes a sweep of its repeats. On the same
//! network by default, with `settle` between two repeats; each on a network of its own
//! with `fresh_network: true`.

use super::duration;
use super::error::Ctx;
use super::error::ScenarioError;
pub use super::raw::Judge;
use super::raw::RawRepeat;
use super::sweep::{Sweep, SweepParam, SweepPoint, SweepValue};
use super::{MAX_POINTS, Scenario};
use serde_saphyr::{Location, Spanned};
use std::time::Duration;

/// More repeats than this is hours of running for little more certainty.
pub const MAX_REPEATS: u32 = 20;
const DEFAULT_SETTLE: Duration = Duration::from_secs(5);
const MAX_SETTLE: Duration = Duration::from_secs(600);

/// `repeat:` as the run uses it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Repeat {
    /// Runs of each point (1: no repeats).
    pub count: u32,
    /// Pause between two repeats on one network (nodes settle, buffers flush).
    pub settle: Duration,
    /// Each repeat on a network of its own.
    pub fresh_network: bool,
    /// What the thresholds judge: each repeat, or the median across repeats.
    pub judge: Judge,
}

impl Default for Repeat {
    fn default() -> Self {
        Repeat {
            count: 1,
            settle: DEFAULT_SETTLE,
            fresh_network: false,
            judge: Judge::Each,
        }
    }
}

/// Checks `repeat:` (with `--repeat N` in place of its count when given).
pub(super) fn validate(
    ctx: &Ctx,
    raw: Option<&Spanned<RawRepeat>>,
    count_override: Option<u32>,
) -> Result<Repeat, ScenarioError> {
    let mut repeat = Repeat::default();
    let Some(raw) = raw else {
        repeat.count = count_override.unwrap_or(1);
        return Ok(repeat);
    };
    let r = &raw.value;
    let count_at = if r.count.referenced == Location::UNKNOWN {
        raw.referenced
    } else {
        r.count.referenced
    };
    repeat.count = count_override.unwrap_or(r.count.value);
    if count_override.is_none() && !(1..=MAX_REPEATS).contains(&repeat.count) {
        return Err(ctx.error(
            &count_at,
            format!("repeat count {} is not between 1 and {MAX_REPEATS}", repeat.count),
            "write repeat: 5 (each point runs 5 times; 5 or more lets compare call a change significant)",
        ));
    }
    if let Some(text) = &r.settle {
        let rule = duration::Rule {
            name: "repeat settle",
            hint: "write the pause between repeats with its unit, e.g. settle: 10s",
            zero: None,
            max: Some(duration::Max {
                limit: MAX_SETTLE,
                says: "is longer than 10 minutes",
                hint: "write a pause of at most 10m, e.g. settle: 10s (0s for none)",
            }),
        };
        repeat.settle = duration::parse(ctx, text, &rule)?;
    }
    repeat.fresh_network = r.fresh_network.unwrap_or(false);
    repeat.judge = r.thresholds.as_ref().map_or(Judge::Each, |j| j.value);
    Ok(repeat)
}

/// Repeats of a draining load (`stop: liquidity_failures:`) each need a network of
/// their own: on a shared one, every repeat after the first starts with the channels
/// the first left dry, and measures nothing.
pub(super) fn check_drain(
    ctx: &Ctx,
    scenario: &Scenario,
    at: &Location,
) -> Result<(), ScenarioError> {
    let repeat = scenario.repeat;
    let drains = |s: &Scenario| s.workload.stop.liquidity_failures.is_some();
    let any_drains = drains(scenario)
        || (scenario.sweep.as_ref())
            .is_some_and(|sw| sw.points.iter().any(|p| drains(&p.scenario)));
    if repeat.count <= 1 || repeat.fresh_network || !any_drains {
        return Ok(());
    }
    Err(ctx.error(
        at,
        format!(
            "{} repeats of a draining load (stop: liquidity_failures:) on one network: each after the first would start with the channels the first left dry",
            repeat.count
        ),
        format!(
            "write repeat: {{ count: {}, fresh_network: true }} (each repeat sets up a network of its own)",
            repeat.count
        ),
    ))
}

/// Turns the scenario's repeats into sweep points: each point (or the scenario itself)
/// `count` times, labelled `...,repeat=K`, consecutive, on the point's network unless
/// `fresh_network`. `at` locates an error (too many points).
pub(super) fn expand(
    ctx: &Ctx,
    mut scenario: Scenario,
    at: &Location,
) -> Result<Scenario, ScenarioError> {
    let repeat = scenario.repeat;
    if repeat.count <= 1 {
        return Ok(scenario);
    }
    let base = match scenario.sweep.take() {
        Some(sweep) => sweep,
        None => Sweep {
            params: Vec::new(),
            p99_bound: None,
            points: vec![SweepPoint {
                label: String::new(),
                values: Vec::new(),
                network: 0,
                kind: scenario.workload.kind,
                scenario: scenario.clone(),
                skip: None,
            }],
            line_groups: Vec::new(),
        },
    };
    let total = base.points.len().saturating_mul(repeat.count as usize);
    if total > MAX_POINTS {
        return Err(ctx.error(
            at,
            format!(
                "{} point(s) × {} repeats make {total} runs, more than {MAX_POINTS}",
                base.points.len(),
                repeat.count
            ),
            "repeat fewer times, or sweep fewer values",
        ));
    }
    let mut points = Vec::with_capacity(total);
    for (i, point) in base.points.into_iter().enumerate() {
        for k in 1..=repeat.count {
            let mut p = point.clone();
            p.scenario.repeat = repeat;
            p.values.push((SweepParam::Repeat, SweepValue::Count(k)));
            p.label = if point.label.is_empty() {
                format!("repeat={k}")
            } else {
                format!("{},repeat={k}", point.label)
            };
            if repeat.fresh_network {
                p.network = i * repeat.count as usize + (k as usize - 1);
            }
            points.push(p);
        }
    }
    let mut params = base.params;
    params.push(SweepParam::Repeat);
    let mut first = points[0].scenario.clone();
    first.repeat = repeat;
    first.sweep = Some(Sweep {
        params,
        points,
        ..base
    });
    Ok(first)
}

#[cfg(test)]
mod tests;
