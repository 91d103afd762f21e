//! What front ends read while a run goes ([`Snapshot`]) and what a report needs at
//! the end ([`Summary`]).

use super::process::ProcessStats;
use super::{FailureKind, IntervalLogFile, RunEvent, SeriesPoint, SpectrumPoint};
use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// Where the run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// Before the load starts (e.g. pre-generating invoices).
    #[default]
    Preparing,
    /// Open loop: warm-up payments, not counted.
    WarmUp,
    /// Open loop: the rate is ramping.
    Ramp,
    /// Open loop: the rate is held.
    Hold,
    /// Closed loop: workers pay back to back.
    Closed,
    /// No new payments; in-flight ones are finishing.
    Draining,
    Finished,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Preparing => "preparing",
            Stage::WarmUp => "warm-up",
            Stage::Ramp => "ramp",
            Stage::Hold => "hold",
            Stage::Closed => "closed-loop",
            Stage::Draining => "draining",
            Stage::Finished => "finished",
        }
    }
}

/// The load setting in force.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "model")]
pub enum LoadSetting {
    Closed {
        concurrency: u32,
    },
    /// Payments per second scheduled now.
    Open {
        rate: f64,
    },
}

impl Default for LoadSetting {
    fn default() -> Self {
        LoadSetting::Closed { concurrency: 0 }
    }
}

/// Latency percentiles of successful payments, microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Percentiles {
    pub count: u64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
    pub max_us: u64,
    pub mean_us: f64,
}

impl Percentiles {
    pub fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Percentiles::default();
        }
        Percentiles {
            count: h.len(),
            p50_us: h.value_at_quantile(0.5),
            p90_us: h.value_at_quantile(0.9),
            p99_us: h.value_at_quantile(0.99),
            p999_us: h.value_at_quantile(0.999),
            max_us: h.max(),
            mean_us: h.mean(),
        }
    }
}

/// The state of a run, published about once a second and at the end.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Snapshot {
    /// Since the engine started (warm-up and pauses included).
    pub elapsed: Duration,
    pub stage: Stage,
    pub paused: bool,
    pub ok: u64,
    pub failed: u64,
    /// Warm-up payments made (not in `ok` / `failed`).
    pub warm_up: u64,
    /// Open loop: arrivals never started (backlog full, or still queued at the end).
    pub dropped: u64,
    /// Successes per active second in the last interval.
    pub tps_now: f64,
    /// Successes per active second since the timed load began.
    pub tps_avg: f64,
    pub cumulative: Percentiles,
    pub last_interval: Percentiles,
    /// Non-zero failure counts, in [`FailureKind::ALL`] order.
    pub failures: Vec<(FailureKind, u64)>,
    /// The last [`super::RECENT_POINTS`] intervals, oldest first.
    pub recent: Vec<SeriesPoint>,
    pub load: LoadSetting,
    /// Faults of `faults:` in force now (`kill bob`), in the order they began.
    pub faults: Vec<String>,
    /// The attack's slots held and the stream's ticks, where the workload has them.
    pub live: super::live::LiveFigures,
}

/// The figures of one measured open-loop phase (ramp or hold): the payments
/// scheduled in it, wherever they ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseSummary {
    /// `ramp` or `hold`.
    pub phase: Stage,
    /// From the phase's start to the next phase's (or the run's end, draining
    /// included, as for the whole run), pauses excluded: the TPS denominator.
    pub active_s: f64,
    pub ok: u64,
    pub failed: u64,
    pub tps_avg: f64,
    pub latency: Percentiles,
}

/// Everything a report needs about the measured load.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub started_unix_ms: u64,
    pub ended_unix_ms: u64,
    /// Wall time from start to end, warm-up and pauses included.
    pub elapsed_s: f64,
    /// Time of the timed load, pauses excluded: the TPS denominator.
    pub active_s: f64,
    pub paused_s: f64,
    pub ok: u64,
    pub failed: u64,
    /// Payments left indeterminate (timed out, or in flight when the load ended):
    /// neither in `ok` nor in `failed`; reconciliation asks the nodes their fate.
    #[serde(default)]
    pub indeterminate: u64,
    /// Warm-up payments made and excluded from every other figure.
    pub warm_up_excluded: u64,
    pub dropped: u64,
    pub tps_avg: f64,
    /// Cumulative latency of successful payments, microseconds.
    pub latency: Percentiles,
    /// The cumulative latency as HdrHistogram's percentile spectrum (0% to the max),
    /// bounded in size: see [`super::spectrum`].
    pub latency_spectrum: Vec<SpectrumPoint>,
    /// Open loop: each measured phase (ramp, hold) on its own, in run order; empty
    /// for a closed loop.
    pub phases: Vec<PhaseSummary>,
    pub failures_by_reason: BTreeMap<&'static str, u64>,
    /// Seconds each series point covers (1 unless the run outgrew
    /// [`super::MAX_SERIES_POINTS`]).
    pub series_resolution_s: u32,
    pub series: Vec<SeriesPoint>,
    /// Pauses, resumes, load changes, stop requests and open-loop phase starts, in
    /// order (at most [`super::MAX_EVENTS`]).
    pub events: Vec<RunEvent>,
    /// Events past [`super::MAX_EVENTS`], counted but not kept.
    pub events_dropped: u64,
    /// The tool's own CPU during the run and memory at its end.
    pub tool_cpu_s: Option<f64>,
    pub tool_process: ProcessStats,
    /// The host's load beside the run's own, and whether it disturbed the figures
    /// (set by the run, which samples the host during the load).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine: Option<super::MachineLoad>,
    /// Payments the tool and the nodes' ledgers disagree on (the report's
    /// `reconciliation` has the details); absent when the load was not reconciled or a
    /// node's ledger was not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mismatches: Option<u64>,
    /// The HdrHistogram interval log streamed during the run, if one was asked for
    /// ([`super::Recorder::log_intervals_to`]); the report copies it as `latency.hlog`.
    #[serde(skip)]
    pub interval_log: Option<IntervalLogFile>,
    /// The payment log streamed during the run, if one was asked for
    /// ([`super::Recorder::log_payments_to`]); the report copies it as `payments.csv`.
    #[serde(skip)]
    pub payment_log: Option<super::PaymentLogFile>,
    /// Each route's payments as the tool counted them (warm-up included), for
    /// reconciliation with the nodes' ledgers; filled in by the engine.
    #[serde(skip)]
    pub routes: Vec<RouteCount>,
    /// `kind: stream`: ticks, splits and each recipient's splits; filled in by the
    /// engine, absent for other kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<super::stream::StreamSummary>,
    /// `workload: max_parts:`: payments by parts; filled in by the engine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parts: Option<super::parts::PartsSummary>,
    /// `stop: liquidity_failures:`: the drain's figures; filled in by the engine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drain: Option<super::parts::DrainSummary>,
    /// `workload: attack:`: slots held, the honest load around the attack, its cost;
    /// filled in by the engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attack: Option<super::attack::AttackSummary>,
    /// `workload: rebalance:`: the node's payments to itself and their cost; filled
    /// in by the engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rebalance: Option<super::rebalance::RebalanceSummary>,
}

/// One route's payments as the tool counted them, warm-up included: what the
/// sender's and receiver's ledgers should show.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RouteCount {
    pub sender: String,
    pub receiver: String,
    pub ok: u64,
    pub failed: u64,
    pub indeterminate: u64,
}

impl Summary {
    /// Tool CPU per payment attempted (warm-up included, since it cost CPU too), µs.
    pub fn tool_cpu_per_payment_us(&self) -> Option<f64> {
        let payments = self.ok + self.failed + self.indeterminate + self.warm_up_excluded;
        match (self.tool_cpu_s, payments) {
            (Some(cpu), n) if n > 0 => Some(cpu * 1e6 / n as f64),
            _ => None,
        }
    }
}
