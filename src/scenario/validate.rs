//! Semantic checks on the raw model and expansion into the validated [`Scenario`]:
//! names, nodes and replicas, channels. The workload is checked in `workload.rs`.

use super::error::{Position, ScenarioError, excerpt};
use super::raw::{
    RawAfterLoad, RawChainKind, RawChannel, RawNode, RawPull, RawRestart, RawRuntime, RawScenario,
};
use super::{
    ChainKind, ChainSpec, ChannelSpec, Database, NodeSpec, PullPolicy, RuntimeKind, Scenario,
};
use crate::runtime::local::etcd::MEMBER_COUNTS;
use serde_saphyr::{Location, Spanned};
use std::collections::HashMap;
use std::path::Path;

/// The longest scenario name: it becomes part of directory and container names.
const MAX_NAME_LEN: usize = 64;
/// More replicas of one node than this is a mistake on one machine (each is a node).
pub(super) const MAX_REPLICAS: u32 = 200;
/// Parallel channels per pair of nodes: each is a funding output and a channel to sync.
const MAX_CHANNELS_PER_PAIR: u32 = 1000;

/// Makes located errors for one file.
pub(super) struct Ctx<'a> {
    pub path: &'a Path,
    pub source: &'a str,
}

impl Ctx<'_> {
    pub fn error(
        &self,
        loc: &Location,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> ScenarioError {
        let at = Position {
            line: loc.line(),
            column: loc.column(),
        };
        ScenarioError::Invalid {
            path: self.path.to_path_buf(),
            at,
            message: message.into(),
            excerpt: excerpt(self.source, at, loc.span().len()),
            hint: hint.into(),
        }
    }
}

/// The node groups of a scenario (names under `nodes:`) and their instances.
pub(super) struct Groups {
    /// Group name -> instance names, in file order.
    pub order: Vec<(String, Vec<String>)>,
    index: HashMap<String, usize>,
}

impl Groups {
    pub fn instances(&self, group: &str) -> Option<&[String]> {
        self.index.get(group).map(|&i| self.order[i].1.as_slice())
    }

    pub fn names(&self) -> String {
        let names: Vec<&str> = self.order.iter().map(|(g, _)| g.as_str()).collect();
        names.join(", ")
    }

    /// An error for a name that is not a group, with the defined ones listed.
    pub fn unknown(&self, ctx: &Ctx, name: &Spanned<String>, what: &str) -> ScenarioError {
        let defined = self.names();
        ctx.error(
            &name.referenced,
            format!(
                "{what} names node \"{}\", which is not defined under nodes: (defined: {defined})",
                name.value
            ),
            format!("add {} under nodes: or use one of {defined}", name.value),
        )
    }
}

pub(super) fn validate(
    path: &Path,
    source: &str,
    mut raw: RawScenario,
) -> Result<Scenario, ScenarioError> {
    let ctx = Ctx { path, source };
    let name = raw.name.value.trim().to_string();
    if name.is_empty() {
        return Err(ctx.error(
            &raw.name.referenced,
            "name is empty",
            "give the scenario a short name, e.g. name: alice-pays-bob (reports and output folders use it)",
        ));
    }
    // The name becomes part of run directory, container and report folder names.
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
            &raw.name.referenced,
            format!("name \"{name}\" is not allowed"),
            format!(
                "use at most {MAX_NAME_LEN} letters, digits, -, _ and ., starting with a letter or digit, e.g. name: alice-pays-bob (it becomes part of directory and container names)"
            ),
        ));
    }
    let runtime = match raw.runtime.unwrap_or(RawRuntime::Auto) {
        RawRuntime::Auto => RuntimeKind::Auto,
        RawRuntime::Docker => RuntimeKind::Docker,
        RawRuntime::Local => RuntimeKind::Local,
        RawRuntime::External => RuntimeKind::External,
        RawRuntime::Kubernetes => RuntimeKind::Kubernetes,
    };
    if runtime == RuntimeKind::External {
        super::external::add_nodes_file(&ctx, &mut raw)?;
    }
    let pull = match raw.pull {
        None | Some(RawPull::IfMissing) => PullPolicy::IfMissing,
        Some(RawPull::Always) => PullPolicy::Always,
        Some(RawPull::Never) => PullPolicy::Never,
    };
    let chain = match raw.chain.take() {
        Some(chain) => ChainSpec {
            kind: match chain.implementation {
                RawChainKind::Btcd => ChainKind::Btcd,
                RawChainKind::Bitcoind => ChainKind::Bitcoind,
            },
            binary: chain.binary,
            image: check_image(&ctx, chain.image.as_ref(), "the chain")?,
            args: chain.args,
        },
        None => ChainSpec {
            kind: ChainKind::Btcd,
            binary: None,
            image: None,
            args: Vec::new(),
        },
    };
    let topology = super::topology::apply(&ctx, &mut raw)?;
    // `nodes:` may be left out only when sim-ln's node file gives the nodes.
    if raw.nodes.referenced == Location::UNKNOWN && raw.nodes.value.0.is_empty() {
        return Err(ctx.error(
            &raw.name.referenced,
            "missing field `nodes`",
            "add `nodes:` with at least a sender and a receiver, e.g. alice: { implementation: lnd } \
             and bob: { implementation: lnd } (with runtime: external, external: { nodes_file: sim.json } \
             may give them instead)",
        ));
    }
    let (mut nodes, groups) = expand_nodes(&ctx, &raw.nodes)?;
    // External nodes run on a chain of their own, whatever it is.
    if runtime != RuntimeKind::External {
        check_chain(&ctx, &raw.nodes.value.0, chain.kind)?;
    }
    check_databases(&ctx, &raw.nodes.value.0)?;
    let mut channels = Vec::new();
    for (i, channel) in raw.channels.iter().enumerate() {
        channels.extend(expand_channel(
            &ctx,
            &groups,
            &raw.nodes.value.0,
            i + 1,
            channel,
        )?);
    }
    let known_channels = (runtime != RuntimeKind::External).then_some(&raw.channels[..]);
    let workload = super::workload::validate(&ctx, &groups, known_channels, &raw.workload)?;
    let activity = (raw.workload.value.activity.as_ref())
        .map(|a| {
            super::activity::validate(
                &ctx,
                &groups,
                a,
                &raw.nodes.value.0,
                &raw.workload.value.kind,
            )
        })
        .transpose()?;
    let workload = super::activity::apply(workload, activity.as_ref());
    check_keysend(&ctx, &raw.nodes.value.0, &raw.workload.value)?;
    let (thresholds, phase_thresholds) =
        super::thresholds::validate(&ctx, raw.thresholds.as_ref(), &workload.load)?;
    let (external, mut endpoints) =
        super::external::validate(&ctx, &raw, runtime, workload.amount_msat, &workload.stop)?;
    for node in &mut nodes {
        let at = endpoints.iter().position(|(group, _)| *group == node.group);
        node.external = at.map(|i| endpoints.swap_remove(i).1);
    }
    let restart = restarts(&ctx, &groups, raw.after_load.as_ref())?;
    let profile = super::profile::validate(&ctx, &groups, raw.profile.as_ref())?;
    let (links, faults) =
        super::faults::validate(&ctx, &groups, raw.links.as_ref(), raw.faults.as_ref())?;
    check_fault_runtime(&ctx, runtime, &raw, &links, &faults)?;
    let kubernetes = super::kube::validate(&ctx, &groups, runtime, &raw)?;
    let etcd_members = match &raw.etcd {
        None => 1,
        Some(etcd) if MEMBER_COUNTS.contains(&etcd.members.value) => etcd.members.value,
        Some(etcd) => {
            return Err(ctx.error(
                &etcd.members.referenced,
                format!(
                    "etcd: members: {} is not a cluster size",
                    etcd.members.value
                ),
                "write members: 1, 3 or 5 (a quorum needs an odd count)".to_string(),
            ));
        }
    };
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
        topology,
        activity,
        kubernetes,
    })
}

/// Links and faults need a runtime that can proxy links and signal nodes: local
/// processes (docker and external nodes cannot yet).
fn check_fault_runtime(
    ctx: &Ctx,
    runtime: RuntimeKind,
    raw: &RawScenario,
    links: &[super::LinkSpec],
    faults: &[super::Fault],
) -> Result<(), ScenarioError> {
    if links.is_empty() && faults.is_empty() {
        return Ok(());
    }
    let why = match runtime {
        RuntimeKind::Docker => "the docker runtime does not run links: or faults: yet",
        RuntimeKind::External => "external nodes cannot be faulted: this tool does not run them",
        RuntimeKind::Kubernetes => "the kubernetes runtime does not run links: or faults: yet",
        RuntimeKind::Local | RuntimeKind::Auto => return Ok(()),
    };
    let at = match (&raw.faults, &raw.links) {
        (Some(f), _) if !faults.is_empty() => &f.referenced,
        (_, Some(l)) => &l.referenced,
        (Some(f), None) => &f.referenced,
        (None, None) => &raw.name.referenced,
    };
    Err(ctx.error(
        at,
        why,
        "write runtime: local (or auto, which then runs local processes)",
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

fn expand_nodes(
    ctx: &Ctx,
    raw: &Spanned<super::raw::NodeMap>,
) -> Result<(Vec<NodeSpec>, Groups), ScenarioError> {
    if raw.value.0.is_empty() {
        return Err(ctx.error(
            &raw.referenced,
            "nodes: is empty",
            "define at least a sender and a receiver, e.g. alice: { implementation: lnd } and bob: { implementation: lnd }",
        ));
    }
    let mut nodes = Vec::new();
    let mut groups = Groups {
        order: Vec::new(),
        index: HashMap::new(),
    };
    // Instance name -> the group that made it, to report collisions.
    let mut taken: HashMap<String, String> = HashMap::new();
    for (name, node) in &raw.value.0 {
        check_node_name(ctx, name)?;
        check_image(ctx, node.image.as_ref(), &format!("node {}", name.value))?;
        let replicas = match &node.replicas {
            Some(r) if r.value == 0 => {
                return Err(ctx.error(
                    &r.referenced,
                    format!("node {} has replicas: 0", name.value),
                    "write replicas: 1 or more, or remove the node",
                ));
            }
            Some(r) if r.value > MAX_REPLICAS => {
                return Err(ctx.error(
                    &r.referenced,
                    format!(
                        "node {} has replicas: {}, more than {MAX_REPLICAS}",
                        name.value, r.value
                    ),
                    format!(
                        "write replicas: {MAX_REPLICAS} or fewer; each replica is a whole node"
                    ),
                ));
            }
            Some(r) => r.value,
            None => 1,
        };
        let instances: Vec<String> = if replicas == 1 {
            vec![name.value.clone()]
        } else {
            (1..=replicas)
                .map(|i| format!("{}-{i}", name.value))
                .collect()
        };
        for instance in &instances {
            if let Some(other) = taken.get(instance) {
                return Err(ctx.error(
                    &name.referenced,
                    format!(
                        "node {} makes an instance named {instance}, which node {other} already makes",
                        name.value
                    ),
                    format!(
                        "rename one of {other} and {}; replicas of alice are named alice-1, alice-2, ...",
                        name.value
                    ),
                ));
            }
            taken.insert(instance.clone(), name.value.clone());
            nodes.push(instance_spec(instance, &name.value, node));
        }
        groups.index.insert(name.value.clone(), groups.order.len());
        groups.order.push((name.value.clone(), instances));
    }
    Ok((nodes, groups))
}

fn instance_spec(instance: &str, group: &str, node: &RawNode) -> NodeSpec {
    NodeSpec {
        name: instance.to_string(),
        group: group.to_string(),
        implementation: node.implementation.value,
        version: node.version.clone(),
        binary: node.binary.clone(),
        image: node.image.as_ref().map(|i| i.value.trim().to_string()),
        database: node.database.as_ref().map(|d| d.value).unwrap_or_default(),
        args: node_args(node),
        external: None,
    }
}

/// The node's `args:`, after the flags its `database:` selects (LND's `--db.backend`).
fn node_args(node: &RawNode) -> Vec<String> {
    let driver = crate::node::driver(node.implementation.value);
    let mut args: Vec<String> = match node.database.as_ref().map(|d| d.value) {
        Some(Database::Postgres) => (driver.postgres_flags().unwrap_or_default().iter())
            .map(|f| f.to_string())
            .collect(),
        _ => Vec::new(),
    };
    args.extend(node.args.iter().cloned());
    args
}

/// `database: postgres` only on implementations that have a PostgreSQL backend, and not
/// beside `args:` that choose the database themselves.
fn check_databases(ctx: &Ctx, nodes: &[(Spanned<String>, RawNode)]) -> Result<(), ScenarioError> {
    for (name, node) in nodes {
        let Some(db) = node
            .database
            .as_ref()
            .filter(|d| d.value == Database::Postgres)
        else {
            continue;
        };
        let implementation = node.implementation.value;
        let driver = crate::node::driver(implementation);
        let Some(flags) = driver.postgres_flags() else {
            return Err(ctx.error(
                &db.referenced,
                format!(
                    "node {} is {implementation}, which has no PostgreSQL backend",
                    name.value
                ),
                "remove database: postgres from this node",
            ));
        };
        let keys = flags.iter().map(|f| f.split('=').next().unwrap_or(f));
        let own_dsn = driver.postgres_arg("");
        let chosen = (keys.chain([own_dsn.trim_end_matches('=')]))
            .filter(|key| !key.is_empty())
            .find_map(|key| node.args.iter().find(|a| a.starts_with(key)));
        if let Some(arg) = chosen {
            return Err(ctx.error(
                &db.referenced,
                format!(
                    "node {} sets database: postgres, and its args: choose the database too ({arg})",
                    name.value
                ),
                format!("remove {arg} from args: (database: postgres sets it)"),
            ));
        }
    }
    Ok(())
}

/// Every node's implementation runs on the chain backend (Core Lightning needs
/// Bitcoin Core's `bitcoin-cli`; btcd has none).
fn check_chain(
    ctx: &Ctx,
    nodes: &[(Spanned<String>, RawNode)],
    chain: ChainKind,
) -> Result<(), ScenarioError> {
    for (name, node) in nodes {
        let implementation = node.implementation.value;
        let runs_on = crate::node::driver(implementation).chains();
        if runs_on.contains(&chain) {
            continue;
        }
        let on: Vec<&str> = runs_on.iter().map(|k| k.as_str()).collect();
        return Err(ctx.error(
            &node.implementation.referenced,
            format!(
                "node {} is {implementation}, which cannot run on chain {chain} (it runs on {})",
                name.value,
                on.join(", ")
            ),
            format!(
                "run the chain it needs: chain: {{ implementation: {} }}",
                on.first().copied().unwrap_or("bitcoind")
            ),
        ));
    }
    Ok(())
}

/// A keysend workload only with senders and a receiver whose implementation has
/// keysend (ldk-server at the pinned commit has none).
fn check_keysend(
    ctx: &Ctx,
    nodes: &[(Spanned<String>, RawNode)],
    w: &super::raw::RawWorkload,
) -> Result<(), ScenarioError> {
    if !matches!(w.kind.value, super::raw::RawPaymentKind::Keysend) {
        return Ok(());
    }
    let parties = (w.senders.value.iter().map(|s| (s.value.as_str(), "sender")))
        .chain(std::iter::once((w.receiver.value.as_str(), "receiver")));
    for (group, role) in parties {
        let Some((_, node)) = nodes.iter().find(|(name, _)| name.value == group) else {
            continue;
        };
        let implementation = node.implementation.value;
        if let Some(why) = crate::node::driver(implementation).keysend_missing() {
            return Err(ctx.error(
                &w.kind.referenced,
                format!("kind: keysend, but {role} {group} is {implementation}: {why}"),
                "write kind: invoice (the receiver creates an invoice per payment) or kind: invoice-pregenerated",
            ));
        }
    }
    Ok(())
}

/// An image reference is one word: `repository[:tag]` or `repository@digest`.
fn check_image(
    ctx: &Ctx,
    image: Option<&Spanned<String>>,
    what: &str,
) -> Result<Option<String>, ScenarioError> {
    let Some(image) = image else {
        return Ok(None);
    };
    let value = image.value.trim();
    let ok = !value.is_empty()
        && !value.chars().any(char::is_whitespace)
        && !value.starts_with(['-', ':', '@', '/'])
        && !value.ends_with([':', '@', '/']);
    if ok {
        Ok(Some(value.to_string()))
    } else {
        Err(ctx.error(
            &image.referenced,
            format!("image of {what} is not an image reference: \"{}\"", image.value),
            "write repository:tag, e.g. image: lnbench/lnd:v0.21.1-beta, or remove image: to use the default",
        ))
    }
}

/// Names become directory and container names: keep them to a safe alphabet.
fn check_node_name(ctx: &Ctx, name: &Spanned<String>) -> Result<(), ScenarioError> {
    let n = &name.value;
    let ok = n.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if n == crate::chain::CHAIN_NAME {
        return Err(ctx.error(
            &name.referenced,
            format!("node name \"{n}\" is reserved for the chain backend"),
            "give the node another name, e.g. chain-node",
        ));
    }
    if n == crate::node::DATABASE_HOST {
        return Err(ctx.error(
            &name.referenced,
            format!("node name \"{n}\" is reserved for the PostgreSQL server the runtime starts"),
            "give the node another name, e.g. postgres-node",
        ));
    }
    if ok {
        Ok(())
    } else {
        Err(ctx.error(
            &name.referenced,
            format!("node name \"{n}\" is not allowed"),
            "use letters, digits, - and _, starting with a letter or digit, e.g. alice or lnd-sender",
        ))
    }
}

fn expand_channel(
    ctx: &Ctx,
    groups: &Groups,
    raw_nodes: &[(Spanned<String>, RawNode)],
    number: usize,
    channel: &Spanned<RawChannel>,
) -> Result<Vec<ChannelSpec>, ScenarioError> {
    let ch = &channel.value;
    let what = format!("channel {number}");
    let from = groups
        .instances(&ch.from.value)
        .ok_or_else(|| groups.unknown(ctx, &ch.from, &format!("{what} from:")))?;
    let to = groups
        .instances(&ch.to.value)
        .ok_or_else(|| groups.unknown(ctx, &ch.to, &format!("{what} to:")))?;
    if ch.from.value == ch.to.value {
        let other = groups
            .order
            .iter()
            .map(|(g, _)| g.as_str())
            .find(|g| *g != ch.from.value)
            .unwrap_or("another node");
        return Err(ctx.error(
            &ch.to.referenced,
            format!("{what} goes from {} to itself", ch.from.value),
            format!(
                "a channel joins two different nodes: set to: to another node, e.g. to: {other}"
            ),
        ));
    }
    let capacity = &ch.capacity_sat;
    if capacity.value == 0 {
        return Err(ctx.error(
            &capacity.referenced,
            format!("{what} has capacity_sat: 0"),
            "write the channel size in satoshis, e.g. capacity_sat: 5000000",
        ));
    }
    // An implementation that caps channel size (LND: wumbo) needs its flag on the end.
    let node_of = |group: &str| raw_nodes.iter().find(|(n, _)| n.value == group);
    let ends = [ch.from.value.as_str(), ch.to.value.as_str()];
    let capped: Vec<(&str, &str, u64, &str)> = ends
        .iter()
        .filter_map(|g| {
            let (_, node) = node_of(g)?;
            let driver = crate::node::driver(node.implementation.value);
            let (cap, flag) = driver.large_channel_flag()?;
            let has = node.args.iter().any(|a| a == flag);
            (capacity.value > cap && !has).then_some((
                *g,
                driver.implementation().as_str(),
                cap,
                flag,
            ))
        })
        .collect();
    if let Some(&(_, implementation, cap, flag)) = capped.first() {
        let missing: Vec<&str> = capped.iter().map(|c| c.0).collect();
        return Err(ctx.error(
            &capacity.referenced,
            format!(
                "{what} has capacity_sat: {}, above {cap} sat, the largest channel {} opens without {flag}",
                capacity.value,
                implementation.to_uppercase()
            ),
            format!(
                "lower capacity_sat to at most {cap}, or add \"{flag}\" to args: of {}",
                missing.join(" and ")
            ),
        ));
    }
    let count = match &ch.count {
        Some(c) if c.value == 0 => {
            return Err(ctx.error(
                &c.referenced,
                format!("{what} has count: 0"),
                "write count: 1 or more (parallel channels per pair), or remove the channel",
            ));
        }
        Some(c) if c.value > MAX_CHANNELS_PER_PAIR => {
            return Err(ctx.error(
                &c.referenced,
                format!(
                    "{what} has count: {}, more than {MAX_CHANNELS_PER_PAIR}",
                    c.value
                ),
                format!("write count: {MAX_CHANNELS_PER_PAIR} or fewer parallel channels per pair"),
            ));
        }
        Some(c) => c.value,
        None => 1,
    };
    let pairs = match &ch.through {
        None => every_pair(from, to),
        Some(through) => line_pairs(ctx, groups, &what, ch, through, from, to)?,
    };
    Ok(pairs
        .into_iter()
        .map(|(from, to)| ChannelSpec {
            from,
            to,
            capacity_sat: capacity.value,
            count,
        })
        .collect())
}

fn every_pair(from: &[String], to: &[String]) -> Vec<(String, String)> {
    from.iter()
        .flat_map(|f| to.iter().map(move |t| (f.clone(), t.clone())))
        .collect()
}

/// `through: carol` makes a line: every instance of `from` to carol-1, carol-1 to
/// carol-2, ..., carol-N to every instance of `to`.
fn line_pairs(
    ctx: &Ctx,
    groups: &Groups,
    what: &str,
    ch: &RawChannel,
    through: &Spanned<String>,
    from: &[String],
    to: &[String],
) -> Result<Vec<(String, String)>, ScenarioError> {
    let hops = groups
        .instances(&through.value)
        .ok_or_else(|| groups.unknown(ctx, through, &format!("{what} through:")))?;
    if through.value == ch.from.value || through.value == ch.to.value {
        return Err(ctx.error(
            &through.referenced,
            format!(
                "{what} goes through {}, which is also its from: or to:",
                through.value
            ),
            "through: names the group of intermediaries between from: and to:, e.g. through: carol",
        ));
    }
    let (first, last) = (&hops[0], &hops[hops.len() - 1]);
    let mut pairs = every_pair(from, std::slice::from_ref(first));
    pairs.extend(hops.windows(2).map(|w| (w[0].clone(), w[1].clone())));
    pairs.extend(every_pair(std::slice::from_ref(last), to));
    Ok(pairs)
}
