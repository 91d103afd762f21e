//! `thresholds:` (k6-style pass / fail criteria checked at the end of a run): the
//! validated [`Threshold`] and its checks on the raw section.

use super::duration;
use super::error::Ctx;
use super::raw::{RawThresholdBlocks, RawThresholds};
use super::{Load, PhaseKind, ScenarioError};
use serde_saphyr::Spanned;
use std::time::Duration;

/// A latency statistic of the successful payments of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatencyStat {
    P50,
    P90,
    P99,
    Max,
}

/// One pass / fail criterion on the whole run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threshold {
    /// The statistic is at most `max`.
    Latency { stat: LatencyStat, max: Duration },
    /// Average TPS (successes per active second) is at least this.
    MinTps(f64),
    /// failed / (ok + failed) is at most this fraction (0 to 1).
    MaxFailureRate(f64),
    /// Load from outside the run, percent of one core averaged over the load, is at
    /// most this: a run on a busy machine fails instead of passing off its figures.
    MaxOutsideLoad(f64),
    /// Steal time, percent of all CPU time, is at most this.
    MaxSteal(f64),
    /// Payments the tool and the nodes' ledgers disagree on (reconciliation) are at
    /// most this many; usually 0.
    MaxMismatches(u64),
}

impl Threshold {
    /// The key as written in the scenario.
    pub fn name(&self) -> &'static str {
        match self {
            Threshold::Latency { stat, .. } => match stat {
                LatencyStat::P50 => "p50_latency",
                LatencyStat::P90 => "p90_latency",
                LatencyStat::P99 => "p99_latency",
                LatencyStat::Max => "max_latency",
            },
            Threshold::MinTps(_) => "min_tps",
            Threshold::MaxFailureRate(_) => "max_failure_rate",
            Threshold::MaxOutsideLoad(_) => "max_outside_load",
            Threshold::MaxSteal(_) => "max_steal",
            Threshold::MaxMismatches(_) => "max_mismatches",
        }
    }
}

/// A threshold on one open-loop phase (`phase: hold`): checked against that phase's
/// own payments, TPS and latency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhaseThreshold {
    pub phase: PhaseKind,
    pub threshold: Threshold,
}

/// The scenario's thresholds: on the whole run, and per phase, each in file order.
pub(super) type Validated = (Vec<Threshold>, Vec<PhaseThreshold>);

const LATENCY_HINT: &str =
    "write a duration above zero with its unit, e.g. p99_latency: 2s or 500ms";

pub(super) fn validate(
    ctx: &Ctx,
    raw: Option<&Spanned<RawThresholdBlocks>>,
    load: &Load,
) -> Result<Validated, ScenarioError> {
    let (mut whole, mut phased) = (Vec::new(), Vec::new());
    let (blocks, entries) = raw.map_or((&[][..], &[][..]), |b| (&b.value.0[..], &b.value.1[..]));
    for (block, entry) in blocks.iter().zip(entries) {
        let thresholds = block_thresholds(ctx, block)?;
        if let (true, Some(raw)) = (thresholds.is_empty(), raw) {
            // An empty block would pass every run: say so where it is.
            let at = (block.phase.as_ref().map(|p| &p.referenced))
                .or(entry.as_ref())
                .unwrap_or(&raw.referenced);
            return Err(ctx.error(
                at,
                "a thresholds entry sets no threshold, so it would check nothing",
                "add one, e.g. p99_latency: 500ms or min_tps: 20, or remove the empty entry",
            ));
        }
        match &block.phase {
            None => whole.extend(thresholds),
            Some(name) => {
                let phase = phase(ctx, name, load)?;
                phased.extend(
                    thresholds
                        .into_iter()
                        .map(|threshold| PhaseThreshold { phase, threshold }),
                );
            }
        }
    }
    Ok((whole, phased))
}

/// The phase a `phase:` names: one of the open-loop phases the workload has, and
/// one whose payments are counted (not the warm-up).
fn phase(ctx: &Ctx, name: &Spanned<String>, load: &Load) -> Result<PhaseKind, ScenarioError> {
    let phases = match load {
        Load::Closed { .. } => {
            return Err(ctx.error(
                &name.referenced,
                format!(
                    "thresholds phase: {} is set, but the load is closed-loop (concurrency:), which has no phases",
                    name.value
                ),
                "remove phase: to check the whole run, or use an open-loop workload (rate: with ramp: / hold:)",
            ));
        }
        Load::Open { phases } => phases,
    };
    let counted: Vec<&str> = phases
        .iter()
        .filter_map(|p| match p.kind {
            PhaseKind::WarmUp => None,
            PhaseKind::Ramp => Some("ramp"),
            PhaseKind::Hold => Some("hold"),
        })
        .collect();
    let written = name.value.trim();
    let kind = match written {
        "ramp" => Some(PhaseKind::Ramp),
        "hold" => Some(PhaseKind::Hold),
        "warm_up" | "warm-up" => {
            return Err(ctx.error(
                &name.referenced,
                "thresholds phase: warm-up is not measured (warm-up payments are excluded from every figure)",
                format!("use one of the measured phases: {}", counted.join(", ")),
            ));
        }
        _ => None,
    };
    match kind {
        Some(k) if phases.iter().any(|p| p.kind == k) => Ok(k),
        _ => Err(ctx.error(
            &name.referenced,
            format!(
                "thresholds phase: {written} is not a phase of this workload (its measured phases: {})",
                if counted.is_empty() { "none".to_string() } else { counted.join(", ") }
            ),
            format!(
                "write one of: {}, or add that phase under workload rate:",
                counted.join(", ")
            ),
        )),
    }
}

fn block_thresholds(ctx: &Ctx, raw: &RawThresholds) -> Result<Vec<Threshold>, ScenarioError> {
    let mut out = Vec::new();
    for (stat, field) in [
        (LatencyStat::P50, &raw.p50_latency),
        (LatencyStat::P90, &raw.p90_latency),
        (LatencyStat::P99, &raw.p99_latency),
        (LatencyStat::Max, &raw.max_latency),
    ] {
        if let Some(text) = field {
            let name = Threshold::Latency {
                stat,
                max: Duration::ZERO,
            }
            .name();
            out.push(Threshold::Latency {
                stat,
                max: latency(ctx, text, name)?,
            });
        }
    }
    if let Some(tps) = &raw.min_tps {
        if !(tps.value.is_finite() && tps.value >= 0.0) {
            return Err(ctx.error(
                &tps.referenced,
                format!("thresholds min_tps is {} payments/s", tps.value),
                "write the lowest acceptable average TPS, 0 or more, e.g. min_tps: 20",
            ));
        }
        out.push(Threshold::MinTps(tps.value));
    }
    if let Some(rate) = &raw.max_failure_rate {
        out.push(Threshold::MaxFailureRate(fraction(ctx, rate)?));
    }
    if let Some(load) = &raw.max_outside_load {
        let hint = "write a percentage of one core, e.g. max_outside_load: 10%";
        out.push(Threshold::MaxOutsideLoad(percent(
            ctx,
            load,
            "max_outside_load",
            hint,
        )?));
    }
    if let Some(steal) = &raw.max_steal {
        let hint = "write a percentage of all CPU time, e.g. max_steal: 2%";
        out.push(Threshold::MaxSteal(percent(ctx, steal, "max_steal", hint)?));
    }
    if let Some(mismatches) = &raw.max_mismatches {
        out.push(Threshold::MaxMismatches(mismatches.value));
    }
    Ok(out)
}

/// `10%` (or `10`): a percentage of 0 or more.
fn percent(
    ctx: &Ctx,
    text: &Spanned<String>,
    name: &str,
    hint: &str,
) -> Result<f64, ScenarioError> {
    let written = text.value.trim();
    match written
        .strip_suffix('%')
        .unwrap_or(written)
        .trim()
        .parse::<f64>()
    {
        Ok(p) if p.is_finite() && p >= 0.0 => Ok(p),
        _ => Err(ctx.error(
            &text.referenced,
            format!(
                "thresholds {name} \"{}\" is not a percentage of 0% or more",
                text.value
            ),
            hint,
        )),
    }
}

fn latency(ctx: &Ctx, text: &Spanned<String>, name: &str) -> Result<Duration, ScenarioError> {
    let rule = duration::Rule {
        name: &format!("thresholds {name}"),
        hint: LATENCY_HINT,
        zero: Some(LATENCY_HINT),
        max: None,
    };
    duration::parse(ctx, text, &rule)
}

/// `0.01` or `1%`, between 0 and 1 (0% and 100%).
fn fraction(ctx: &Ctx, text: &Spanned<String>) -> Result<f64, ScenarioError> {
    let written = text.value.trim();
    let parsed = match written.strip_suffix('%') {
        Some(pct) => pct.trim().parse::<f64>().map(|p| p / 100.0),
        None => written.parse::<f64>(),
    };
    match parsed {
        Ok(f) if f.is_finite() && (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(ctx.error(
            &text.referenced,
            format!(
                "thresholds max_failure_rate \"{}\" is not a fraction from 0 to 1 or a percentage from 0% to 100%",
                text.value
            ),
            "write e.g. max_failure_rate: 1% or max_failure_rate: 0.01",
        )),
    }
}
