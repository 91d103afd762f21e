//! `sweep:`: a matrix of values for a closed set of parameters. Every combination
//! (the Cartesian product) is a point, and every point is the scenario file with the
//! point's values put in, validated like any scenario, so a point that makes no sense
//! (say, replicas that collide with another node's name) fails at `validate` time with
//! its line and column.
//!
//! Points are ordered so the parameters that need a fresh network (replicas, database
//! backend) vary slowest: consecutive points that differ only in load (concurrency,
//! rate, payment kind) share one network (`network` is the same number).

use super::db_backend::DbBackend;
use super::duration;
use super::error::Ctx;
use super::error::ScenarioError;
use super::raw::{Counts, RawSweep};
use super::raw::{RawChain, RawChainKind, RawPaymentKind, RawScenario};
use super::validate::validate;
use super::{ChainKind, Database, PaymentKind, Runtimes, Scenario};
use crate::node::PaymentEngine;
pub use matrix::ImplChoice;

mod dims;
mod matrix;
use serde_saphyr::{Location, Spanned};
use std::fmt;
use std::path::Path;
use std::time::Duration;

/// More points than this is almost certainly a mistake (and hours of running).
pub const MAX_POINTS: usize = 64;

/// A parameter a sweep can vary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SweepParam {
    /// Closed-loop payments in flight.
    Concurrency,
    /// Open-loop rate of the hold phase (and the end of the ramp), payments/s.
    Rate,
    Kind,
    /// Replicas of a node group (senders, intermediaries of a line, ...).
    Replicas(String),
    DbBackend,
    /// The chain backend (btcd, bitcoind) every node runs on.
    Chain,
    /// The implementation (and release) of one node group, or of every node (`None`).
    Implementation(Option<String>),
    /// Every node's `database:`.
    Database,
    /// Every Core Lightning node's `payment_engine:`.
    PaymentEngine,
    /// The run of a point, 1..=N (`repeat:`): the fastest-varying parameter.
    Repeat,
    /// Closed and open loop on one axis (`concurrency:` and `rate:` both swept): a
    /// concurrency value runs a closed loop, a rate the workload's open-loop phases.
    Load,
    /// The HTLC slots `workload: attack:` holds (`attack_slots:`).
    AttackSlots,
    /// A history ladder's step (`history:`): the payments made before the load.
    History,
}

impl SweepParam {
    /// The name in labels and reports: `concurrency`, `carol.replicas`, ...
    pub fn name(&self) -> String {
        match self {
            SweepParam::Concurrency => "concurrency".into(),
            SweepParam::Rate => "rate".into(),
            SweepParam::Kind => "kind".into(),
            SweepParam::Replicas(group) => format!("{group}.replicas"),
            SweepParam::DbBackend => "db_backend".into(),
            SweepParam::Chain => "chain".into(),
            SweepParam::Implementation(None) => "implementation".into(),
            SweepParam::Implementation(Some(group)) => format!("{group}.implementation"),
            SweepParam::Database => "database".into(),
            SweepParam::PaymentEngine => "payment_engine".into(),
            SweepParam::Load => "load".into(),
            SweepParam::Repeat => "repeat".into(),
            SweepParam::AttackSlots => "attack.slots".into(),
            SweepParam::History => "history".into(),
        }
    }

    /// The name a value of this parameter is labelled with: the parameter's, except on
    /// the load axis, where a count is a `concurrency` and a rate a `rate`.
    pub fn name_for(&self, value: &SweepValue) -> String {
        match (self, value) {
            (SweepParam::Load, SweepValue::Count(_)) => "concurrency".into(),
            (SweepParam::Load, _) => "rate".into(),
            _ => self.name(),
        }
    }

    /// An implementation axis (the sweep is an implementation matrix).
    pub fn is_implementation(&self) -> bool {
        matches!(self, SweepParam::Implementation(_))
    }

    /// Whether a new value needs a fresh network (other nodes, another database, or
    /// another payment engine: the nodes' clients are made with the network).
    pub fn needs_new_network(&self) -> bool {
        matches!(
            self,
            SweepParam::Replicas(_)
                | SweepParam::DbBackend
                | SweepParam::Chain
                | SweepParam::Implementation(_)
                | SweepParam::Database
                | SweepParam::PaymentEngine
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SweepValue {
    Count(u32),
    Rate(f64),
    Kind(PaymentKind),
    Db(DbBackend),
    Chain(ChainKind),
    Implementation(ImplChoice),
    Database(Database),
    PaymentEngine(PaymentEngine),
}

impl SweepValue {
    /// The value as a number, for charts; `None` for kinds and backends.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            SweepValue::Count(n) => Some(f64::from(*n)),
            SweepValue::Rate(r) => Some(*r),
            SweepValue::Kind(_)
            | SweepValue::Db(_)
            | SweepValue::Chain(_)
            | SweepValue::Implementation(_)
            | SweepValue::Database(_)
            | SweepValue::PaymentEngine(_) => None,
        }
    }
}

impl fmt::Display for SweepValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SweepValue::Count(n) => write!(f, "{n}"),
            SweepValue::Rate(r) => write!(f, "{r}"),
            SweepValue::Kind(k) => f.write_str(kind_name(*k)),
            SweepValue::Db(d) => f.write_str(d.as_str()),
            SweepValue::Chain(c) => f.write_str(c.as_str()),
            SweepValue::Implementation(c) => write!(f, "{c}"),
            SweepValue::Database(Database::Default) => f.write_str("default"),
            SweepValue::Database(Database::Postgres) => f.write_str("postgres"),
            SweepValue::PaymentEngine(e) => f.write_str(e.as_str()),
        }
    }
}

fn kind_name(kind: PaymentKind) -> &'static str {
    match kind {
        PaymentKind::Keysend => "keysend",
        PaymentKind::Invoice => "invoice",
        PaymentKind::InvoicePregenerated => "invoice-pregenerated",
        PaymentKind::Stream => "stream",
    }
}

/// One point of a sweep: a complete scenario (without a sweep) and what it set.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPoint {
    /// `concurrency=4`, or `carol.replicas=4,concurrency=1`; also its report folder.
    pub label: String,
    pub values: Vec<(SweepParam, SweepValue)>,
    /// Points with the same number run one after the other on one network.
    pub network: usize,
    pub scenario: Scenario,
    /// Why the point cannot run (a database its implementation lacks): it is listed
    /// as skipped, with this reason, and never started.
    pub skip: Option<String>,
    /// The payment kind the file asks for. A skipped point's `scenario` may fall back
    /// to invoices (to validate); this is what it would have run.
    pub kind: PaymentKind,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    /// Swept parameters, slowest-varying first (network parameters lead).
    pub params: Vec<SweepParam>,
    /// "Highest TPS whose p99 stays under" this bound, when given.
    pub p99_bound: Option<Duration>,
    pub points: Vec<SweepPoint>,
    /// Groups that are the intermediaries of a line (`through:`): their replica
    /// count is the number of hops added.
    pub line_groups: Vec<String>,
}

/// One dimension as written, with the location of each value.
struct Dim {
    param: SweepParam,
    at: Location,
    values: Vec<(SweepValue, Location)>,
}

/// Expands a scenario that has `sweep:` into its points. The returned scenario is the
/// first point's, with the sweep attached.
pub(super) fn expand(
    path: &Path,
    text: &str,
    raw: RawScenario,
    runtimes: Runtimes,
) -> Result<Scenario, ScenarioError> {
    let ctx = Ctx { path, source: text };
    let Some(sweep) = &raw.sweep else {
        return validate(path, text, raw, runtimes);
    };
    let dims = dims::dimensions(&ctx, &raw, sweep)?;
    let p99_bound = match &sweep.value.p99_bound {
        Some(b) => Some(bound(&ctx, b)?),
        None => None,
    };
    // Counted before the product is built: a huge sweep is refused, not expanded.
    let count = dims
        .iter()
        .fold(1usize, |n, d| n.saturating_mul(d.values.len()));
    if count > MAX_POINTS {
        return Err(ctx.error(
            &sweep.referenced,
            format!("sweep: makes {count} points, more than {MAX_POINTS}"),
            "sweep fewer values; each point is a whole run",
        ));
    }
    let combos = cartesian(&dims);
    let implementations_swept = (dims.iter()).any(|d| d.param.is_implementation());
    let line_groups = raw
        .channels
        .iter()
        .filter_map(|c| c.value.through.as_ref().map(|t| t.value.clone()))
        .collect();
    let mut points = Vec::with_capacity(combos.len());
    let mut network = 0;
    let mut last_key: Option<String> = None;
    for combo in combos {
        let values: Vec<(SweepParam, SweepValue)> = dims
            .iter()
            .zip(&combo)
            .map(|(d, (v, _))| (d.param.clone(), *v))
            .collect();
        let label = label_of(&values);
        let key = label_of(
            &values
                .iter()
                .filter(|(p, _)| p.needs_new_network())
                .cloned()
                .collect::<Vec<_>>(),
        );
        if last_key.as_ref().is_some_and(|k| *k != key) {
            network += 1;
        }
        last_key = Some(key);
        let mut point_raw: RawScenario =
            serde_saphyr::from_str(text).map_err(|e| ScenarioError::from_yaml(path, text, &e))?;
        point_raw.sweep = None;
        for ((param, value), (_, at)) in values.iter().zip(&combo) {
            apply(&mut point_raw, param, *value, *at);
        }
        let kind = point_raw.workload.value.kind.value.kind();
        let skip = matrix::reason(&mut point_raw, implementations_swept);
        let scenario =
            validate(path, text, point_raw, runtimes).map_err(|e| in_point(e, &label))?;
        points.push(SweepPoint {
            label,
            values,
            network,
            scenario,
            skip,
            kind,
        });
    }
    let mut first = points[0].scenario.clone();
    first.sweep = Some(Sweep {
        params: dims.into_iter().map(|d| d.param).collect(),
        p99_bound,
        points,
        line_groups,
    });
    Ok(first)
}

/// `concurrency=4,kind=keysend`.
fn label_of(values: &[(SweepParam, SweepValue)]) -> String {
    let parts: Vec<String> = values
        .iter()
        .map(|(p, v)| format!("{}={v}", p.name_for(v)))
        .collect();
    parts.join(",")
}

/// Names the point in an error found while validating it.
fn in_point(err: ScenarioError, label: &str) -> ScenarioError {
    match err {
        ScenarioError::Invalid {
            path,
            at,
            message,
            excerpt,
            hint,
        } => ScenarioError::Invalid {
            path,
            at,
            message: format!("sweep point {label}: {message}"),
            excerpt,
            hint,
        },
        other => other,
    }
}

/// Every combination, the first dimension varying slowest.
fn cartesian(dims: &[Dim]) -> Vec<Vec<(SweepValue, Location)>> {
    let mut out: Vec<Vec<(SweepValue, Location)>> = vec![Vec::new()];
    for dim in dims {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                dim.values.iter().map(move |v| {
                    let mut next = prefix.clone();
                    next.push(*v);
                    next
                })
            })
            .collect();
    }
    out
}

/// Puts one value into the raw scenario, located at the sweep value so that a rule it
/// breaks is reported there.
fn apply(raw: &mut RawScenario, param: &SweepParam, value: SweepValue, at: Location) {
    let w = &mut raw.workload.value;
    match (param, value) {
        (SweepParam::Concurrency, SweepValue::Count(n)) => {
            w.concurrency = Some(Spanned::new(n, at, at));
        }
        (SweepParam::Rate, SweepValue::Rate(r)) => {
            if let Some(rate) = &mut w.rate {
                if let Some(hold) = &mut rate.value.hold {
                    hold.value.rate = Spanned::new(r, at, at);
                }
                if let Some(ramp) = &mut rate.value.ramp {
                    ramp.value.to = Spanned::new(r, at, at);
                }
            }
        }
        (SweepParam::Kind, SweepValue::Kind(k)) => {
            let kind = match k {
                PaymentKind::Keysend => RawPaymentKind::Keysend,
                PaymentKind::Invoice => RawPaymentKind::Invoice,
                PaymentKind::InvoicePregenerated => RawPaymentKind::InvoicePregenerated,
                PaymentKind::Stream => RawPaymentKind::Stream,
            };
            w.kind = Spanned::new(kind, at, at);
        }
        (SweepParam::Replicas(group), SweepValue::Count(n)) => {
            if let Some((_, node)) = raw
                .nodes
                .value
                .0
                .iter_mut()
                .find(|(g, _)| g.value == *group)
            {
                node.replicas = Some(Spanned::new(n, at, at));
            }
        }
        (SweepParam::DbBackend, SweepValue::Db(db)) => {
            for (_, node) in &mut raw.nodes.value.0 {
                node.args
                    .extend(db.lnd_flags().iter().map(|f| f.to_string()));
            }
            if db == DbBackend::EtcdCluster {
                raw.etcd = Some(super::raw::RawEtcd {
                    members: Spanned::new(3, at, at),
                });
            }
        }
        (SweepParam::Chain, SweepValue::Chain(kind)) => {
            let implementation = match kind {
                ChainKind::Btcd => RawChainKind::Btcd,
                ChainKind::Bitcoind => RawChainKind::Bitcoind,
            };
            match &mut raw.chain {
                Some(chain) => chain.implementation = implementation,
                None => {
                    raw.chain = Some(RawChain {
                        implementation,
                        binary: None,
                        image: None,
                        args: Vec::new(),
                    });
                }
            }
        }
        (SweepParam::Implementation(group), SweepValue::Implementation(choice)) => {
            matrix::apply_implementation(raw, group.as_deref(), choice, at);
        }
        (SweepParam::Database, SweepValue::Database(db)) => matrix::apply_database(raw, db, at),
        (SweepParam::PaymentEngine, SweepValue::PaymentEngine(engine)) => {
            for (_, node) in &mut raw.nodes.value.0 {
                if dims::takes_payment_engine(node.implementation.value) {
                    node.payment_engine = Some(Spanned::new(engine, at, at));
                }
            }
        }
        (SweepParam::Load, SweepValue::Count(n)) => {
            w.concurrency = Some(Spanned::new(n, at, at));
            w.rate = None;
        }
        (SweepParam::Load, SweepValue::Rate(_)) => apply(raw, &SweepParam::Rate, value, at),
        (SweepParam::AttackSlots, SweepValue::Count(n)) => {
            if let Some(attack) = &mut w.attack {
                attack.value.slots = Some(Spanned::new(n, at, at));
                attack.value.share = None;
            }
        }
        (SweepParam::History, SweepValue::Count(n)) => {
            super::history::set_payments(raw, u64::from(n), at);
        }
        // `dimensions` pairs every parameter with its own kind of value.
        _ => {}
    }
}

fn bound(ctx: &Ctx, text: &Spanned<String>) -> Result<Duration, ScenarioError> {
    let rule = duration::Rule {
        name: "sweep p99_bound",
        hint: "write the latency bound with its unit, e.g. p99_bound: 500ms or 2s",
        zero: Some("write the latency bound with its unit, e.g. p99_bound: 500ms"),
        max: None,
    };
    duration::parse(ctx, text, &rule)
}

#[cfg(test)]
mod tests;
