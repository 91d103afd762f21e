//! The nodes of a scenario: groups expanded into instances, and the checks on each
//! node's name, image, database, chain backend and payment kind.

use super::super::raw::{RawNode, RawWorkload};
use super::super::{ChainKind, Database, NodeSpec, ScenarioError};
use crate::scenario::error::Ctx;
use crate::scenario::groups::Groups;
use serde_saphyr::Spanned;
use std::collections::HashMap;

/// More replicas of one node than this is a mistake on one machine (each is a node).
const MAX_REPLICAS: u32 = 200;
/// More nodes in all (replicas counted) than this is a mistake on one machine.
pub(crate) const MAX_TOTAL_NODES: usize = 500;
/// At most this many `args:` per node, each at most this long.
pub(crate) const MAX_ARGS: usize = 256;
pub(crate) const MAX_ARG_LEN: usize = 4096;

pub(super) fn expand_nodes(
    ctx: &Ctx,
    raw: &Spanned<super::super::raw::NodeMap>,
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
        check_args(ctx, name, &node.args)?;
        check_htlc_limit(ctx, name, node)?;
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
        if nodes.len() > MAX_TOTAL_NODES {
            return Err(ctx.error(
                &name.referenced,
                format!(
                    "the nodes up to {} make {} nodes in all, more than {MAX_TOTAL_NODES}",
                    name.value,
                    nodes.len()
                ),
                format!("make {MAX_TOTAL_NODES} nodes or fewer (replicas count each)"),
            ));
        }
    }
    Ok((nodes, groups))
}

/// A node's `args:`: at most [`MAX_ARGS`] of at most [`MAX_ARG_LEN`] bytes each.
fn check_args(ctx: &Ctx, name: &Spanned<String>, args: &[String]) -> Result<(), ScenarioError> {
    if args.len() > MAX_ARGS {
        return Err(ctx.error(
            &name.referenced,
            format!(
                "node {} has {} args:, more than {MAX_ARGS}",
                name.value,
                args.len()
            ),
            format!("give {MAX_ARGS} args or fewer; a config file the node reads takes the rest"),
        ));
    }
    if let Some(long) = args.iter().find(|a| a.len() > MAX_ARG_LEN) {
        return Err(ctx.error(
            &name.referenced,
            format!(
                "node {} has an argument of {} bytes, more than {MAX_ARG_LEN} ({}...)",
                name.value,
                long.len(),
                long.chars().take(20).collect::<String>()
            ),
            format!("shorten it to {MAX_ARG_LEN} bytes or fewer"),
        ));
    }
    Ok(())
}

/// A node's HTLC limit flag below the smallest its implementation opens a channel
/// with (LND's `--default-remote-max-htlcs` under 5) would fail the run at setup, so
/// it is refused here, with the node it is on.
fn check_htlc_limit(
    ctx: &Ctx,
    name: &Spanned<String>,
    node: &RawNode,
) -> Result<(), ScenarioError> {
    let implementation = node.implementation.value;
    let limit = crate::node::driver(implementation)
        .channel_rules()
        .htlc_limit;
    let (Some(flag), Some(min)) = (limit.flag, limit.min) else {
        return Ok(());
    };
    for arg in &node.args {
        let Some(value) = arg.strip_prefix(flag) else {
            continue;
        };
        match value.trim().parse::<u32>() {
            Ok(n) if n >= min => {}
            _ => {
                return Err(ctx.error(
                    &name.referenced,
                    format!("node {} has {arg}: {implementation} opens no channel with fewer than {min} HTLCs in flight", name.value),
                    format!("write {flag}{min} or more ({} is {implementation}'s default)", limit.default),
                ));
            }
        }
    }
    Ok(())
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
        payment_engine: (node.payment_engine.as_ref()).map_or_else(Default::default, |e| e.value),
        args: node_args(node),
        external: None,
        // Filled by `resources::apply`, which knows the default.
        resources: None,
    }
}

/// The node's `args:`, after the flags its `database:` selects (LND's `--db.backend`).
fn node_args(node: &RawNode) -> Vec<String> {
    let driver = crate::node::driver(node.implementation.value);
    let mut args: Vec<String> = match node.database.as_ref().map(|d| d.value) {
        // Without a PostgreSQL backend, none: `check_databases` refuses the node.
        Some(Database::Postgres) => (driver.postgres().map(|p| p.flags()))
            .unwrap_or_default()
            .iter()
            .map(|f| f.to_string())
            .collect(),
        _ => Vec::new(),
    };
    args.extend(node.args.iter().cloned());
    args
}

/// `database: postgres` only on implementations that have a PostgreSQL backend, and not
/// beside `args:` that choose the database themselves.
pub(super) fn check_databases(
    ctx: &Ctx,
    nodes: &[(Spanned<String>, RawNode)],
) -> Result<(), ScenarioError> {
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
        let Some(postgres) = driver.postgres() else {
            return Err(ctx.error(
                &db.referenced,
                format!(
                    "node {} is {implementation}, which has no PostgreSQL backend",
                    name.value
                ),
                "remove database: postgres from this node",
            ));
        };
        let keys = (postgres.flags().iter()).map(|f| f.split('=').next().unwrap_or(f));
        let own_dsn = postgres.arg_for("");
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
pub(super) fn check_chain(
    ctx: &Ctx,
    nodes: &[(Spanned<String>, RawNode)],
    chain: ChainKind,
) -> Result<(), ScenarioError> {
    for (name, node) in nodes {
        let implementation = node.implementation.value;
        let runs_on = crate::node::driver(implementation).chain_needs().backends;
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
pub(super) fn check_keysend(
    ctx: &Ctx,
    nodes: &[(Spanned<String>, RawNode)],
    w: &RawWorkload,
) -> Result<(), ScenarioError> {
    if !matches!(w.kind.value, super::super::raw::RawPaymentKind::Keysend) {
        return Ok(());
    }
    let parties = (w.senders.value.iter().map(|s| (s.value.as_str(), "sender")))
        .chain(std::iter::once((w.receiver.value.as_str(), "receiver")));
    for (group, role) in parties {
        let Some((_, node)) = nodes.iter().find(|(name, _)| name.value == group) else {
            continue;
        };
        let implementation = node.implementation.value;
        if let Some(why) =
            crate::node::driver(implementation).missing(crate::node::Feature::Keysend)
        {
            return Err(ctx.error(
                &w.kind.referenced,
                format!("kind: keysend, but {role} {group} is {implementation}: {why}"),
                "write kind: invoice (the receiver creates an invoice per payment) or kind: invoice-pregenerated",
            ));
        }
    }
    Ok(())
}

/// `payment_engine:` only on Core Lightning nodes, other than `xpay` only when the
/// workload pays invoices (keysend goes through `xkeysend` whatever the engine), and
/// `renepay` only on the local runtime (`local`: its JSON-RPC socket is on this machine).
pub(super) fn check_payment_engines(
    ctx: &Ctx,
    nodes: &[(Spanned<String>, RawNode)],
    w: &RawWorkload,
    local: bool,
) -> Result<(), ScenarioError> {
    use crate::node::{Feature, PaymentEngine};
    for (name, node) in nodes {
        let Some(engine) = &node.payment_engine else {
            continue;
        };
        let implementation = node.implementation.value;
        if crate::node::driver(implementation)
            .missing(Feature::PaymentEngines)
            .is_some()
        {
            return Err(ctx.error(
                &engine.referenced,
                format!(
                    "node {} is {implementation}, and payment_engine: chooses Core Lightning's pay command",
                    name.value
                ),
                "remove payment_engine: from this node (it applies to implementation: cln only)",
            ));
        }
        if engine.value == PaymentEngine::Renepay && !local {
            return Err(ctx.error(
                &engine.referenced,
                "payment_engine: renepay goes through the node's JSON-RPC socket (Core Lightning's gRPC interface has no renepay call), which only runtime: local reaches",
                "write runtime: local, or payment_engine: xpay or pay",
            ));
        }
        let keysend = matches!(w.kind.value, super::super::raw::RawPaymentKind::Keysend);
        if keysend && engine.value != PaymentEngine::Xpay {
            return Err(ctx.error(
                &engine.referenced,
                format!(
                    "payment_engine: {} pays invoices, and the workload pays by keysend (Core Lightning's keysend is xkeysend whatever the engine)",
                    engine.value.as_str()
                ),
                "write kind: invoice in workload:, or payment_engine: xpay",
            ));
        }
    }
    Ok(())
}

/// An image reference is one word: `repository[:tag]` or `repository@digest`.
pub(super) fn check_image(
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
