//! What a sweep's report holds (`sweep.json`, described by docs/sweep.schema.json):
//! the sweep, its points with their figures, and what is read across points (the
//! highest TPS under a p99 bound, the latency each hop adds). The pages drawn from it
//! (`sweep.md`, `sweep.html`, the matrix, the spread, the charts) read it from here.

use crate::metrics::attack::{AttackSummary, AttackWindow};
use crate::metrics::{Percentiles, Summary};
use crate::report::stats::Stats;
use crate::report::{Host, ScenarioText, Tool};
use serde::Serialize;
use std::collections::BTreeMap;

/// Bump on any breaking change of sweep.json; `docs/sweep.schema.json` describes it.
pub const SWEEP_SCHEMA_VERSION: u32 = 2;
pub const JSON_FILE: &str = "sweep.json";
pub const HTML_FILE: &str = "sweep.html";
pub const MD_FILE: &str = "sweep.md";

#[derive(Debug, Clone, Serialize)]
pub struct SweepReport {
    pub schema_version: u32,
    pub tool: Tool,
    /// False when the sweep stopped before its last point ended (signal, error, the
    /// operator quit): the points not run are listed with status `not-run`.
    pub complete: bool,
    pub interrupted_by: Option<String>,
    pub started_at: String,
    pub finished_at: String,
    pub scenario: ScenarioText,
    pub runtime: String,
    pub host: Host,
    /// The swept parameters, slowest-varying first (`concurrency`, `carol.replicas`).
    pub parameters: Vec<String>,
    pub p99_bound_ms: Option<f64>,
    pub points: Vec<PointReport>,
    /// The highest TPS among the finished points whose p99 is at most the bound.
    pub best_under_bound: Option<BestPoint>,
    /// The same per implementation × database (the groups of an implementation matrix;
    /// one group, every point, otherwise). Empty without a bound.
    pub best_by_group: Vec<GroupBest>,
    /// `repeat:` when the points were repeated (count above 1), else null.
    pub repeat: Option<RepeatInfo>,
    /// The spread of each repeated point (empty without repeats).
    pub spread: Vec<Spread>,
    /// Latency added per hop, between points that differ only in the replica count
    /// of a line's intermediaries (`through:`).
    pub per_hop: Vec<HopStep>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PointStatus {
    /// The load ran to its stop condition.
    Done,
    /// Cut short: the figures cover what was done.
    Partial,
    /// Never started (the sweep stopped before it).
    NotRun,
    /// Not run because it cannot be (a database the implementation lacks, a binary not
    /// built here): `reason` says which.
    Skipped,
    /// Not run because its network did not come up (a node that would not start):
    /// `reason` says why. The sweep went on with the other networks, and fails.
    Failed,
}

#[derive(Debug, Clone, Serialize)]
pub struct PointReport {
    /// `concurrency=4`; also the point's report folder under the sweep's.
    pub label: String,
    /// Parameter name -> value (a number, or a name for kinds and backends).
    pub values: BTreeMap<String, serde_json::Value>,
    /// Points with the same number ran on the same network, one after the other.
    pub network: usize,
    /// A history ladder's step: what the network had paid before this point's load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<crate::report::history_phase::HistoryPhase>,
    pub status: PointStatus,
    /// Why a skipped or failed point was not run.
    pub reason: Option<String>,
    /// `keysend`, `invoice` or `invoice-pregenerated`.
    pub kind: String,
    /// What the latency of this kind includes.
    pub timed: String,
    /// Closed loop with N payers, or open loop.
    pub load: String,
    pub results: Option<PointResults>,
    pub thresholds_passed: Option<bool>,
}

impl PointReport {
    /// The label's `key=value` parts but those of `left_out`, in the sweep's order
    /// (`implementation=cln,database=postgres`); `None` when nothing is left.
    pub fn label_without(&self, left_out: &[&str]) -> Option<String> {
        let parts: Vec<&str> = (self.label.split(','))
            .filter(|part| {
                let key = part.split('=').next().unwrap_or("");
                !left_out.contains(&key) && self.values.contains_key(key)
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join(","))
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct PointResults {
    pub ok: u64,
    pub failed: u64,
    pub active_s: f64,
    pub tps_avg: f64,
    pub latency: Percentiles,
    pub failures_by_reason: BTreeMap<&'static str, u64>,
    pub tool_cpu_per_payment_us: Option<f64>,
    /// Average CPU % of each node and the chain over the point's load (100 % = one
    /// core), where the runtime read it; nodes in the scenario's order, then `chain`.
    pub cpu_pct_avg: Vec<NodeCpu>,
    /// Each node: what it ran (implementation, release, database) and its costs.
    pub nodes: Vec<NodeFigures>,
    /// The host's load beside the point's own ([`crate::metrics::MachineLoad`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine: Option<crate::metrics::MachineLoad>,
    /// Payments the point's reconciliation found the tool and the nodes disagree on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mismatches: Option<u64>,
    /// The honest payments around the point's attack (`workload: attack:`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attack: Option<PointAttack>,
}

/// One node of a point, as the implementation matrix shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeFigures {
    pub node: String,
    pub implementation: String,
    /// The release the node reported when it was ready.
    pub version: String,
    /// Where it kept its state (`bbolt`, `sqlite`, `postgres`, ...).
    pub database: String,
    pub cpu_pct_avg: Option<f64>,
    /// Its CPU time per successful payment: average CPU × active load time / payments.
    pub cpu_ms_per_payment: Option<f64>,
    /// Data-dir growth over the load per successful payment.
    pub bytes_per_payment: Option<f64>,
    /// The data dir's size when the load ended.
    pub data_dir_bytes: Option<u64>,
    /// `after_load: restart`: seconds from its start until its channels were active again.
    pub restart_s: Option<f64>,
    /// A sender's way of learning that payments ended (`websocket event, exact`);
    /// absent for other nodes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeCpu {
    pub node: String,
    pub pct: f64,
}

impl PointResults {
    /// The figures of one point: its summary and each node's average CPU %.
    pub fn of(s: &Summary, cpu_pct_avg: &[(String, f64)], nodes: &[NodeFigures]) -> PointResults {
        PointResults {
            ok: s.ok,
            failed: s.failed,
            active_s: s.active_s,
            tps_avg: s.tps_avg,
            latency: s.latency,
            failures_by_reason: s.failures_by_reason.clone(),
            tool_cpu_per_payment_us: s.tool_cpu_per_payment_us(),
            cpu_pct_avg: cpu_pct_avg
                .iter()
                .map(|(node, pct)| NodeCpu {
                    node: node.clone(),
                    pct: *pct,
                })
                .collect(),
            nodes: nodes.to_vec(),
            machine: s.machine.clone(),
            mismatches: s.mismatches,
            attack: s.attack.as_ref().map(PointAttack::of),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BestPoint {
    pub label: String,
    pub tps_avg: f64,
    pub p99_us: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HopStep {
    /// The replica parameter, e.g. `carol.replicas`.
    pub parameter: String,
    pub from: String,
    pub to: String,
    /// Intermediaries (and so hops) added from `from` to `to`.
    pub hops_added: u32,
    pub p50_added_per_hop_us: f64,
    pub mean_added_per_hop_us: f64,
}

/// The index of the finished point with the highest average TPS whose p99 latency is
/// at most `bound_us`. Points not done (partial or not run) and points without a
/// successful payment do not count.
pub fn max_tps_under_bound(points: &[PointReport], bound_us: u64) -> Option<usize> {
    points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.status == PointStatus::Done)
        .filter_map(|(i, p)| p.results.as_ref().map(|r| (i, r)))
        .filter(|(_, r)| r.ok > 0 && r.latency.p99_us <= bound_us)
        .max_by(|a, b| a.1.tps_avg.total_cmp(&b.1.tps_avg))
        .map(|(i, _)| i)
}

/// Latency added per hop: for every point, the next point with the same values of
/// every other parameter and more replicas of `parameter`; the p50 and mean latency
/// difference divided by the replicas added. Only finished points count.
pub fn latency_per_hop(points: &[PointReport], parameter: &str) -> Vec<HopStep> {
    let count = |p: &PointReport| p.values.get(parameter).and_then(serde_json::Value::as_u64);
    let others = |p: &PointReport| {
        let mut v = p.values.clone();
        v.remove(parameter);
        v
    };
    let done: Vec<(&PointReport, u64, &PointResults)> = points
        .iter()
        .filter(|p| p.status == PointStatus::Done)
        .filter_map(|p| Some((p, count(p)?, p.results.as_ref()?)))
        .filter(|(_, _, r)| r.ok > 0)
        .collect();
    let mut steps = Vec::new();
    for (a, n, ra) in &done {
        let next = done
            .iter()
            .filter(|(b, m, _)| m > n && others(b) == others(a))
            .min_by_key(|(_, m, _)| *m);
        if let Some((b, m, rb)) = next {
            let added = (m - n) as f64;
            steps.push(HopStep {
                parameter: parameter.to_string(),
                from: a.label.clone(),
                to: b.label.clone(),
                hops_added: u32::try_from(m - n).unwrap_or(u32::MAX),
                p50_added_per_hop_us: (rb.latency.p50_us as f64 - ra.latency.p50_us as f64) / added,
                mean_added_per_hop_us: (rb.latency.mean_us - ra.latency.mean_us) / added,
            });
        }
    }
    steps
}

/// The highest TPS under the p99 bound within one group (implementation × database).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupBest {
    pub group: String,
    /// `None` when no finished point of the group kept p99 under the bound.
    pub best: Option<BestPoint>,
}

/// `repeat:` as the sweep ran it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepeatInfo {
    pub count: u32,
    pub settle_s: f64,
    pub fresh_network: bool,
    /// `each` or `median`: what the thresholds judged.
    pub thresholds: crate::scenario::Judge,
}

/// One repeat's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepeatFigures {
    pub label: String,
    pub repeat: u32,
    pub tps_avg: f64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
    pub ok: u64,
    pub failed: u64,
    /// Its TPS or p99 stands out from the other repeats'.
    pub outlier: bool,
    /// Load from outside the run (percent of one core) and steal time (percent), and
    /// whether they disturbed this repeat, where the host was sampled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outside_load_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steal_pct: Option<f64>,
    pub disturbed: bool,
    /// Payments its reconciliation found the tool and the nodes disagree on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mismatches: Option<u64>,
}

/// The repeats of one point and their spread.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spread {
    /// The point's values but the repeat (`concurrency=4`), or `all` for a scenario
    /// without `sweep:`.
    pub group: String,
    /// Finished repeats (done or partial), in order.
    pub repeats: Vec<RepeatFigures>,
    pub tps_avg: Option<Stats>,
    pub p50_us: Option<Stats>,
    pub p90_us: Option<Stats>,
    pub p99_us: Option<Stats>,
    /// The TPS's coefficient of variation across repeats: sample standard deviation
    /// over mean, in percent (`None` under two repeats).
    pub tps_cv_pct: Option<f64>,
    /// The outside load (percent of one core) across the repeats whose host was
    /// sampled.
    pub outside_load_pct: Option<Stats>,
    /// How many repeats the outside load or the steal time disturbed.
    pub disturbed: usize,
    /// With `repeat: { thresholds: median }`: whether the medians passed.
    pub thresholds_passed: Option<bool>,
}

/// What a sweep point keeps of its `results.attack`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointAttack {
    pub slots_target: u32,
    pub slots_held_max: u32,
    pub before: AttackWindow,
    pub during: AttackWindow,
    pub after: AttackWindow,
}

impl PointAttack {
    pub fn of(a: &AttackSummary) -> PointAttack {
        PointAttack {
            slots_target: a.slots_target,
            slots_held_max: a.slots_held_max,
            before: a.before.clone(),
            during: a.during.clone(),
            after: a.after.clone(),
        }
    }
}

impl PointReport {
    /// The point's status as the sweep's and the matrix's tables show it: a point
    /// measured on a busy machine says so where its figures stand, and so does one
    /// whose machine was not sampled (a load of about a second or less: fewer than two
    /// readings), whose figures carry no verdict, quiet or not.
    pub fn status_text(&self) -> String {
        let status = match self.status {
            PointStatus::Done => "done",
            PointStatus::Partial => "partial",
            PointStatus::NotRun => "not run",
            PointStatus::Skipped => "skipped",
            PointStatus::Failed => "failed",
        };
        match self.results.as_ref().map(|r| r.machine.as_ref()) {
            Some(Some(m)) if m.disturbed => format!("{status} (disturbed)"),
            Some(None) => format!("{status} (not sampled)"),
            _ => status.to_string(),
        }
    }
}
