//! The dimensions of `sweep:` as written: each parameter's values with their
//! locations, checked against the rest of the file (a closed or open loop, nodes that
//! exist, LND-only backends, ...), network parameters first.

use super::{Counts, Dim, RawSweep, SweepParam, SweepValue, matrix};
use crate::scenario::error::Ctx;
use crate::scenario::error::ScenarioError;
use crate::scenario::raw::RawScenario;
use serde_saphyr::{Location, Spanned};

pub(super) fn dimensions(
    ctx: &Ctx,
    raw: &RawScenario,
    sweep: &Spanned<RawSweep>,
) -> Result<Vec<Dim>, ScenarioError> {
    let s = &sweep.value;
    let mut dims = load_dims(ctx, raw, s)?;
    if let Some(list) = &s.kind {
        let values = list
            .value
            .iter()
            .map(|k| (SweepValue::Kind(k.value.kind()), k.referenced))
            .collect();
        dims.push(dim(
            SweepParam::Kind,
            list,
            non_empty(ctx, list, "kind", values)?,
        ));
    }
    dims.extend(replicas_dims(ctx, raw, s)?);
    dims.extend(db_backend_dims(ctx, raw, s)?);
    dims.extend(chain_dims(ctx, raw, s)?);
    if let Some(values) = &s.implementation {
        dims.extend(matrix::implementation_dims(ctx, raw, values)?);
    }
    if let Some(list) = &s.database {
        dims.push(matrix::database_dim(ctx, raw, list)?);
    }
    if let Some(list) = &s.payment_engine {
        dims.push(payment_engine_dim(ctx, raw, s, list)?);
    }
    if let Some(list) = &s.attack_slots {
        if raw.workload.value.attack.is_none() {
            return Err(ctx.error(
                &list.referenced,
                "sweep attack_slots: needs an attack, but workload has no attack:",
                "add workload: attack: { attacker: ..., accomplice: ..., slots: 1, hold: 10s, for: 20s } (the sweep sets its slots), or remove attack_slots:",
            ));
        }
        let values = counts(
            ctx,
            list,
            "attack_slots",
            "HTLCs the attacker holds at once",
        )?;
        dims.push(dim(SweepParam::AttackSlots, list, values));
    }
    if let Some(list) = &s.history {
        dims.push(history_dim(ctx, list)?);
    }
    if dims.is_empty() {
        return Err(ctx.error(
            &sweep.referenced,
            "sweep: sets no parameter to sweep",
            "add one of concurrency, rate, kind, replicas, db_backend, chain, implementation, database, payment_engine, attack_slots, history, e.g. concurrency: [1, 4, 7, 10]",
        ));
    }
    for d in &dims {
        for (i, (v, at)) in d.values.iter().enumerate() {
            if d.values[..i].iter().any(|(w, _)| w == v) {
                return Err(ctx.error(
                    at,
                    format!("sweep {} lists {v} twice", d.param.name()),
                    "list each value once",
                ));
            }
        }
    }
    // File order within each class; network parameters vary slowest, then the
    // history ladder (its steps climb on one network, each step's loads inside it).
    dims.sort_by_key(|d| {
        let class = match &d.param {
            p if p.needs_new_network() => 0,
            SweepParam::History => 1,
            _ => 2,
        };
        (class, d.at.line(), d.at.column())
    });
    Ok(dims)
}

/// `concurrency:` and `rate:`, each its own axis or, both swept, one load axis.
fn load_dims(ctx: &Ctx, raw: &RawScenario, s: &RawSweep) -> Result<Vec<Dim>, ScenarioError> {
    let w = &raw.workload.value;
    let mut dims = Vec::new();
    // Both swept: one load axis, closed-loop points then the open-loop rate search.
    let both = s.concurrency.is_some() && s.rate.is_some();
    if let Some(list) = s.concurrency.as_ref().filter(|_| !both) {
        if w.rate.is_some() {
            return Err(ctx.error(
                &list.referenced,
                "sweep concurrency: needs a closed-loop workload, but workload has rate: (open loop)",
                "remove rate: from workload: (the sweep sets concurrency), or sweep rate: instead",
            ));
        }
        let values = counts(ctx, list, "concurrency", "how many payments are in flight")?;
        dims.push(dim(SweepParam::Concurrency, list, values));
    }
    if let Some(list) = &s.rate {
        if both && w.concurrency.is_some() {
            return Err(ctx.error(
                &list.referenced,
                "the sweep sets concurrency: and rate: (one load axis), and workload has concurrency:",
                "write the open-loop phases under workload rate: (the rate points run them) and no concurrency: (the sweep's concurrency points run a closed loop instead)",
            ));
        }
        let hold = w.rate.as_ref().and_then(|r| r.value.hold.as_ref());
        if w.concurrency.is_some() || hold.is_none() {
            return Err(ctx.error(
                &list.referenced,
                "sweep rate: needs an open-loop workload with a hold: phase",
                "write workload rate: { hold: { rate: 10, duration: 1m } } instead of concurrency:; the sweep sets the hold rate (and the ramp's to:)",
            ));
        }
        let mut values = Vec::new();
        for r in &list.value {
            if !(r.value.is_finite() && r.value > 0.0) {
                return Err(ctx.error(
                    &r.referenced,
                    format!("sweep rate {} is not above 0 payments/s", r.value),
                    "write rates above 0, e.g. rate: [10, 20, 40]",
                ));
            }
            values.push((SweepValue::Rate(r.value), r.referenced));
        }
        let values = non_empty(ctx, list, "rate", values)?;
        match s.concurrency.as_ref().filter(|_| both) {
            Some(closed) => {
                let mut all = counts(
                    ctx,
                    closed,
                    "concurrency",
                    "how many payments are in flight",
                )?;
                all.extend(values);
                dims.push(dim(SweepParam::Load, closed, all));
            }
            None => dims.push(dim(SweepParam::Rate, list, values)),
        }
    }
    Ok(dims)
}

/// `replicas:`: one axis per node group named.
fn replicas_dims(ctx: &Ctx, raw: &RawScenario, s: &RawSweep) -> Result<Vec<Dim>, ScenarioError> {
    let mut dims = Vec::new();
    if let Some(map) = &s.replicas {
        if map.value.0.is_empty() {
            return Err(ctx.error(
                &map.referenced,
                "sweep replicas: is empty",
                "name a node group and its replica counts, e.g. replicas: { carol: [1, 4] }",
            ));
        }
        for (group, list) in &map.value.0 {
            if !raw
                .nodes
                .value
                .0
                .iter()
                .any(|(g, _)| g.value == group.value)
            {
                let defined: Vec<&str> = raw
                    .nodes
                    .value
                    .0
                    .iter()
                    .map(|(g, _)| g.value.as_str())
                    .collect();
                return Err(ctx.error(
                    &group.referenced,
                    format!(
                        "sweep replicas: names node \"{}\", which is not defined under nodes: (defined: {})",
                        group.value,
                        defined.join(", ")
                    ),
                    format!("use one of {}", defined.join(", ")),
                ));
            }
            let what = format!("replicas of {}", group.value);
            let values = counts(ctx, list, &what, "how many instances of the node")?;
            let mut d = dim(SweepParam::Replicas(group.value.clone()), list, values);
            d.at = group.referenced;
            dims.push(d);
        }
    }
    Ok(dims)
}

/// `db_backend:` (LND's backends), on LND nodes that set no backend themselves.
fn db_backend_dims(ctx: &Ctx, raw: &RawScenario, s: &RawSweep) -> Result<Vec<Dim>, ScenarioError> {
    let mut dims = Vec::new();
    if let Some(list) = &s.db_backend {
        if let Some(other) = s
            .implementation
            .as_ref()
            .map(|i| i.referenced)
            .or(s.database.as_ref().map(|d| d.referenced))
        {
            return Err(ctx.error(
                &other,
                "the sweep sets db_backend: (LND's backends) and implementation: or database:",
                "use database: [default, postgres] to compare databases across implementations, or drop implementation:/database:",
            ));
        }
        for (name, node) in &raw.nodes.value.0 {
            let implementation = node.implementation.value;
            if (crate::node::driver(implementation))
                .missing(crate::node::Feature::DbBackends)
                .is_some()
            {
                return Err(ctx.error(
                    &node.implementation.referenced,
                    format!(
                        "the sweep sets db_backend: (LND's --db.backend), and node {} is {implementation}",
                        name.value
                    ),
                    "sweep db_backend: over LND nodes only, or remove db_backend: from sweep:",
                ));
            }
            if node.args.iter().any(|a| a.starts_with("--db.backend")) {
                return Err(ctx.error(
                    &name.referenced,
                    format!(
                        "node {} sets --db.backend in args:, and the sweep sets db_backend:",
                        name.value
                    ),
                    "remove --db.backend from args: (the sweep sets it on every node)",
                ));
            }
            if let Some(db) = &node.database {
                return Err(ctx.error(
                    &db.referenced,
                    format!(
                        "node {} sets database:, and the sweep sets db_backend:",
                        name.value
                    ),
                    "remove database: from the node (the sweep sets it on every node)",
                ));
            }
        }
        let values = list
            .value
            .iter()
            .map(|b| (SweepValue::Db(b.value), b.referenced))
            .collect();
        let values = non_empty(ctx, list, "db_backend", values)?;
        dims.push(dim(SweepParam::DbBackend, list, values));
    }
    Ok(dims)
}

/// `payment_engine:` (Core Lightning's pay command), set on every Core Lightning node:
/// the file needs one, none setting its own, and no implementation: sweep (which would
/// make points where it means nothing).
fn payment_engine_dim(
    ctx: &Ctx,
    raw: &RawScenario,
    s: &RawSweep,
    list: &Spanned<Vec<Spanned<crate::node::PaymentEngine>>>,
) -> Result<Dim, ScenarioError> {
    if s.implementation.is_some() {
        return Err(ctx.error(
            &list.referenced,
            "the sweep sets payment_engine: (Core Lightning's) and implementation:",
            "sweep payment_engine: over a file whose nodes are cln, without implementation:",
        ));
    }
    for (name, node) in &raw.nodes.value.0 {
        if let Some(own) = &node.payment_engine {
            return Err(ctx.error(
                &own.referenced,
                format!(
                    "node {} sets payment_engine:, and the sweep sets payment_engine:",
                    name.value
                ),
                "remove payment_engine: from the node (the sweep sets it on every cln node)",
            ));
        }
    }
    if !raw
        .nodes
        .value
        .0
        .iter()
        .any(|(_, n)| takes_payment_engine(n.implementation.value))
    {
        return Err(ctx.error(
            &list.referenced,
            "the sweep sets payment_engine: (Core Lightning's pay command), and no node is cln",
            "sweep payment_engine: with Core Lightning nodes (implementation: cln), or remove it",
        ));
    }
    let values = list
        .value
        .iter()
        .map(|e| (SweepValue::PaymentEngine(e.value), e.referenced))
        .collect();
    let values = non_empty(ctx, list, "payment_engine", values)?;
    Ok(dim(SweepParam::PaymentEngine, list, values))
}

/// `chain:`, on a chain that runs as built.
fn chain_dims(ctx: &Ctx, raw: &RawScenario, s: &RawSweep) -> Result<Vec<Dim>, ScenarioError> {
    let mut dims = Vec::new();
    if let Some(list) = &s.chain {
        if let Some(chain) = raw
            .chain
            .as_ref()
            .filter(|c| c.binary.is_some() || c.image.is_some() || !c.args.is_empty())
        {
            let at = chain
                .image
                .as_ref()
                .map_or(list.referenced, |i| i.referenced);
            return Err(ctx.error(
                &at,
                "the chain sets binary:, image: or args:, and the sweep sets chain:",
                "remove them from chain: (each backend of the sweep runs as built, with the tool's flags)",
            ));
        }
        let values = list
            .value
            .iter()
            .map(|c| (SweepValue::Chain(c.value), c.referenced))
            .collect();
        let values = non_empty(ctx, list, "chain", values)?;
        dims.push(dim(SweepParam::Chain, list, values));
    }
    Ok(dims)
}

fn dim<T>(param: SweepParam, list: &Spanned<T>, values: Vec<(SweepValue, Location)>) -> Dim {
    Dim {
        param,
        at: list.referenced,
        values,
    }
}

/// `history:`: a ladder of payment counts, rising, 0 allowed (the first step may
/// measure the fresh network).
fn history_dim(ctx: &Ctx, list: &Counts) -> Result<Dim, ScenarioError> {
    let mut values = Vec::new();
    for (i, n) in list.value.iter().enumerate() {
        if u64::from(n.value) > crate::scenario::MAX_HISTORY_PAYMENTS {
            return Err(ctx.error(
                &n.referenced,
                format!(
                    "sweep history has {}, more than {}",
                    n.value,
                    crate::scenario::MAX_HISTORY_PAYMENTS
                ),
                "write payment counts of at most 10000000",
            ));
        }
        if i > 0 && n.value <= list.value[i - 1].value {
            return Err(ctx.error(
                &n.referenced,
                format!(
                    "sweep history is not rising: {} follows {}",
                    n.value,
                    list.value[i - 1].value
                ),
                "list the ladder's steps from the fewest payments to the most, e.g. history: [0, 10000, 50000]",
            ));
        }
        values.push((SweepValue::Count(n.value), n.referenced));
    }
    let values = non_empty(ctx, list, "history", values)?;
    Ok(dim(SweepParam::History, list, values))
}

fn counts(
    ctx: &Ctx,
    list: &Counts,
    what: &str,
    meaning: &str,
) -> Result<Vec<(SweepValue, Location)>, ScenarioError> {
    let mut values = Vec::new();
    for n in &list.value {
        if n.value == 0 {
            return Err(ctx.error(
                &n.referenced,
                format!("sweep {what} has 0"),
                format!("write 1 or more ({meaning}), e.g. [1, 4, 7, 10]"),
            ));
        }
        values.push((SweepValue::Count(n.value), n.referenced));
    }
    non_empty(ctx, list, what, values)
}

fn non_empty<T>(
    ctx: &Ctx,
    list: &Spanned<T>,
    what: &str,
    values: Vec<(SweepValue, Location)>,
) -> Result<Vec<(SweepValue, Location)>, ScenarioError> {
    if values.is_empty() {
        return Err(ctx.error(
            &list.referenced,
            format!("sweep {what}: is an empty list"),
            "list the values to run, e.g. [1, 4, 7, 10], or remove it",
        ));
    }
    Ok(values)
}

/// Whether nodes of `implementation` choose the command that pays invoices
/// (`payment_engine:`), as their driver says.
pub(super) fn takes_payment_engine(implementation: crate::node::Implementation) -> bool {
    (crate::node::driver(implementation))
        .missing(crate::node::Feature::PaymentEngines)
        .is_none()
}
