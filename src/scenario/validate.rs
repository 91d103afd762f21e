//! Semantic checks on the raw model and expansion into the validated [`Scenario`]:
//! names, nodes and replicas, channels. The workload is checked in `workload.rs`.

use super::error::{Ctx, ScenarioError};
use super::groups::Groups;
use super::raw::{RawAfterLoad, RawChain, RawChainKind, RawPull, RawRestart, RawScenario};
use super::{ChainKind, ChainSpec, PullPolicy, RuntimeKind, Runtimes, Scenario, Support};
use channels::{MAX_TOTAL_CHANNELS, expand_channel};
use nodes::{
    check_chain, check_databases, check_image, check_keysend, check_payment_engines, expand_nodes,
};
use serde_saphyr::{Location, Spanned};
use std::path::Path;

/// The longest scenario name: it becomes part of directory and container names.
const MAX_NAME_LEN: usize = 64;

mod channels;
mod nodes;

pub(super) fn validate(
    path: &Path,
    source: &str,
    mut raw: RawScenario,
    runtimes: Runtimes,
) -> Result<Scenario, ScenarioError> {
    let ctx = Ctx { path, source };
    let name = scenario_name(&ctx, &raw.name)?;
    let runtime = raw
        .runtime
        .as_ref()
        .map_or(RuntimeKind::default(), |r| r.value);
    let caps = runtimes(runtime);
    if !caps.starts_nodes {
        super::external::add_nodes_file(&ctx, &mut raw)?;
    }
    let pull = pull_policy(raw.pull);
    let chain = chain_spec(&ctx, raw.chain.take())?;
    let topology = super::topology::apply(&ctx, &mut raw)?;
    check_nodes_given(&ctx, &raw)?;
    let (mut nodes, groups) = expand_nodes(&ctx, &raw.nodes)?;
    // Nodes that already run do so on a chain of their own, whatever it is.
    if caps.starts_nodes {
        check_chain(&ctx, &raw.nodes.value.0, chain.kind)?;
    }
    check_databases(&ctx, &raw.nodes.value.0)?;
    let resources = super::resources::apply(&ctx, &raw, caps, &mut nodes)?;
    let mut channels = Vec::new();
    let mut total: u64 = 0;
    for (i, channel) in raw.channels.iter().enumerate() {
        let expanded = expand_channel(&ctx, &groups, &raw.nodes.value.0, i + 1, channel)?;
        total += (expanded.iter()).map(|c| u64::from(c.count)).sum::<u64>();
        if total > MAX_TOTAL_CHANNELS {
            return Err(ctx.error(
                &channel.referenced,
                format!(
                    "the channels up to channel {} make {total} channels in all, more than \
                     {MAX_TOTAL_CHANNELS}",
                    i + 1
                ),
                "open fewer channels: lower count:, or the replicas of the groups a channel \
                 joins (every pair of their instances gets count: channels)",
            ));
        }
        channels.extend(expanded);
    }
    let known_channels = caps.starts_nodes.then_some(&raw.channels[..]);
    let mut workload = super::workload::validate(&ctx, &groups, known_channels, &raw.workload)?;
    let (w, raw_nodes) = (&raw.workload.value, &raw.nodes.value.0);
    let load = (&workload.load, &workload.stop);
    workload.attack = super::attack::validate(&ctx, &groups, known_channels, w, load, raw_nodes)?;
    super::attack::check_nodes(&ctx, raw_nodes, w)?;
    workload.rebalance = super::rebalance::validate(&ctx, &groups, known_channels, w, load)?;
    super::rebalance::check_nodes(&ctx, raw_nodes, w)?;
    let activity = activity(&ctx, &groups, &raw)?;
    let workload = super::activity::apply(workload, activity.as_ref());
    check_keysend(&ctx, &raw.nodes.value.0, &raw.workload.value)?;
    super::stream::check_nodes(&ctx, &raw.nodes.value.0, &raw.workload.value)?;
    super::parts::check_senders_split(&ctx, &raw.nodes.value.0, &raw.workload.value)?;
    check_payment_engines(
        &ctx,
        &raw.nodes.value.0,
        &raw.workload.value,
        caps.node_sockets,
    )?;
    let (thresholds, phase_thresholds) =
        super::thresholds::validate(&ctx, raw.thresholds.as_ref(), &workload.load)?;
    let (external, mut endpoints) =
        super::external::validate(&ctx, &raw, caps, workload.amount_msat, &workload.stop)?;
    for node in &mut nodes {
        let at = endpoints.iter().position(|(group, _)| *group == node.group);
        node.external = at.map(|i| endpoints.swap_remove(i).1);
    }
    let restart = restarts(&ctx, &groups, raw.after_load.as_ref())?;
    let profile = super::profile::validate(&ctx, &groups, raw.profile.as_ref())?;
    let (links, faults) = super::faults::validate(&ctx, &groups, &raw, &workload.stop)?;
    let mining = super::faults::mining(&ctx, &raw)?;
    check_fault_runtime(
        &ctx,
        (runtime, runtimes),
        &raw,
        (&links, &faults),
        chain.kind,
    )?;
    let kubernetes = super::kube::validate(&ctx, &groups, caps, &raw)?;
    let etcd_members = etcd_members(&ctx, &raw)?;
    let history = super::history::validate(&ctx, &raw, caps, workload.kind)?;
    let snapshot = (raw.snapshot.as_ref()).map(|s| super::SnapshotField {
        value: s.value.trim().to_string(),
        at: format!(
            "{}:{}:{}",
            path.display(),
            s.referenced.line(),
            s.referenced.column()
        ),
    });
    Ok(Scenario {
        name,
        description: raw.description.unwrap_or_default().trim().to_string(),
        runtime,
        pull,
        chain,
        nodes,
        channels,
        workload,
        thresholds,
        phase_thresholds,
        path: path.to_path_buf(),
        source: source.to_string(),
        sweep: None,
        repeat: super::Repeat::default(),
        restart,
        etcd_members,
        external,
        profile,
        links,
        faults,
        mining,
        topology,
        activity,
        kubernetes,
        resources,
        snapshot,
        history,
    })
}

/// `nodes:` may be left out only when sim-ln's node file gives the nodes.
fn check_nodes_given(ctx: &Ctx, raw: &RawScenario) -> Result<(), ScenarioError> {
    if raw.nodes.referenced == Location::UNKNOWN && raw.nodes.value.0.is_empty() {
        return Err(ctx.error(
            &raw.name.referenced,
            "missing field `nodes`",
            "add `nodes:` with at least a sender and a receiver, e.g. alice: { implementation: lnd } \
             and bob: { implementation: lnd } (with runtime: external, external: { nodes_file: sim.json } \
             may give them instead)",
        ));
    }
    Ok(())
}

/// `workload: activity:` (sim-ln's random payments), checked; None without.
fn activity(
    ctx: &Ctx,
    groups: &Groups,
    raw: &RawScenario,
) -> Result<Option<super::Activity>, ScenarioError> {
    let w = &raw.workload.value;
    (w.activity.as_ref())
        .map(|a| super::activity::validate(ctx, groups, a, &raw.nodes.value.0, &w.kind))
        .transpose()
}

fn pull_policy(raw: Option<RawPull>) -> PullPolicy {
    match raw {
        None | Some(RawPull::IfMissing) => PullPolicy::IfMissing,
        Some(RawPull::Always) => PullPolicy::Always,
        Some(RawPull::Never) => PullPolicy::Never,
    }
}

/// The chain backend, btcd when `chain:` is left out.
fn chain_spec(ctx: &Ctx, raw: Option<RawChain>) -> Result<ChainSpec, ScenarioError> {
    Ok(match raw {
        Some(chain) => ChainSpec {
            kind: match chain.implementation {
                RawChainKind::Btcd => ChainKind::Btcd,
                RawChainKind::Bitcoind => ChainKind::Bitcoind,
            },
            binary: chain.binary,
            image: check_image(ctx, chain.image.as_ref(), "the chain")?,
            args: chain.args,
        },
        None => ChainSpec {
            kind: ChainKind::Btcd,
            binary: None,
            image: None,
            args: Vec::new(),
        },
    })
}

/// The scenario's `name:`, trimmed; it becomes part of run directory, container and
/// report folder names, so it keeps to a safe alphabet.
fn scenario_name(ctx: &Ctx, raw: &Spanned<String>) -> Result<String, ScenarioError> {
    let name = raw.value.trim().to_string();
    if name.is_empty() {
        return Err(ctx.error(
            &raw.referenced,
            "name is empty",
            "give the scenario a short name, e.g. name: alice-pays-bob (reports and output folders use it)",
        ));
    }
    let safe = name.len() <= MAX_NAME_LEN
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !safe {
        return Err(ctx.error(
            &raw.referenced,
            format!("name \"{name}\" is not allowed"),
            format!(
                "use at most {MAX_NAME_LEN} letters, digits, -, _ and ., starting with a letter or digit, e.g. name: alice-pays-bob (it becomes part of directory and container names)"
            ),
        ));
    }
    Ok(name)
}

/// `etcd: { members: N }` (1 when absent): a cluster size a quorum allows.
fn etcd_members(ctx: &Ctx, raw: &RawScenario) -> Result<u32, ScenarioError> {
    match &raw.etcd {
        None => Ok(1),
        Some(etcd) if super::ETCD_MEMBER_COUNTS.contains(&etcd.members.value) => {
            Ok(etcd.members.value)
        }
        Some(etcd) => Err(ctx.error(
            &etcd.members.referenced,
            format!(
                "etcd: members: {} is not a cluster size",
                etcd.members.value
            ),
            "write members: 1, 3 or 5 (a quorum needs an odd count)".to_string(),
        )),
    }
}

/// Links and link faults need a runtime that proxies peer links; node and chain
/// faults one that can signal its nodes. Each is refused where the runtime does not
/// declare it, at `links:` or `faults:`; a fault that stops the chain where it cannot.
fn check_fault_runtime(
    ctx: &Ctx,
    (kind, runtimes): (RuntimeKind, Runtimes),
    raw: &RawScenario,
    (links, faults): (&[super::LinkSpec], &[super::Fault]),
    chain: ChainKind,
) -> Result<(), ScenarioError> {
    let runtime = runtimes(kind);
    if !links.is_empty() || faults.iter().any(super::Fault::is_link) {
        let at = match (&raw.links, &raw.faults) {
            (Some(l), _) if !links.is_empty() => &l.referenced,
            (_, Some(f)) => &f.referenced,
            (Some(l), None) => &l.referenced,
            (None, None) => &raw.name.referenced,
        };
        check_support(ctx, at, runtime, |c| c.links, runtimes)?;
    }
    if faults.iter().any(|f| !f.is_link()) {
        let at = raw
            .faults
            .as_ref()
            .map_or(&raw.name.referenced, |f| &f.referenced);
        check_support(ctx, at, runtime, |c| c.faults, runtimes)?;
    }
    super::faults::check_chain_faults(ctx, raw.faults.as_ref(), faults, chain, runtime)
}

/// An error at `at` when `runtime` does not run what `support` reads, naming the
/// runtimes that do.
fn check_support(
    ctx: &Ctx,
    at: &Location,
    runtime: &super::Capabilities,
    support: fn(&super::Capabilities) -> Support,
    runtimes: Runtimes,
) -> Result<(), ScenarioError> {
    let why = match support(runtime) {
        Support::Runs => return Ok(()),
        Support::Never(why) => why.to_string(),
    };
    let able: Vec<&str> = (RuntimeKind::ALL.iter())
        .map(|k| runtimes(*k))
        .filter(|c| support(c) == Support::Runs)
        .map(|c| c.name)
        .collect();
    Err(ctx.error(
        at,
        why,
        format!(
            "write runtime: {} (the runtimes that run them)",
            able.join(" or ")
        ),
    ))
}

/// `after_load: { restart: ... }`: the instances to restart after the load, in order.
fn restarts(
    ctx: &Ctx,
    groups: &Groups,
    after: Option<&Spanned<RawAfterLoad>>,
) -> Result<Vec<String>, ScenarioError> {
    const HINT: &str = "write restart: all, or restart: [alice, bob] (names under nodes:)";
    let Some(after) = after else {
        return Ok(Vec::new());
    };
    let Some(restart) = &after.value.restart else {
        return Err(ctx.error(
            &after.referenced,
            "after_load: names no step",
            format!("{HINT}, or remove after_load:"),
        ));
    };
    let names = match &restart.value {
        RawRestart::All => {
            return Ok(groups
                .order
                .iter()
                .flat_map(|(_, instances)| instances.iter().cloned())
                .collect());
        }
        RawRestart::Word(word) => {
            return Err(ctx.error(
                &restart.referenced,
                format!("restart: \"{word}\" is neither all nor a list of nodes"),
                HINT,
            ));
        }
        RawRestart::Nodes(names) => names,
    };
    if names.is_empty() {
        return Err(ctx.error(
            &restart.referenced,
            "restart: is an empty list",
            format!("{HINT}, or remove after_load:"),
        ));
    }
    let mut instances: Vec<String> = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let of_group = groups
            .instances(&name.value)
            .ok_or_else(|| groups.unknown(ctx, name, "after_load restart:"))?;
        if names[..i].iter().any(|n| n.value == name.value) {
            return Err(ctx.error(
                &name.referenced,
                format!("restart: names node {} twice", name.value),
                "name each node once; nodes restart one after the other in the order written",
            ));
        }
        instances.extend(of_group.iter().cloned());
    }
    Ok(instances)
}
