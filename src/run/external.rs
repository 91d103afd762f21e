//! Setup of a `runtime: external` run: connect to each node where it already runs,
//! check what can be checked (it answers, its network is not mainnet unless allowed,
//! its pubkey is the one given, the scenario's channels exist, each sender can pay each
//! receiver) and do nothing else: no chain, no funding, no channel opened.

use super::{Network, RunFacts};
use crate::node::NodeEndpoint;
use crate::scenario::Scenario;
use crate::scenario::external::ExternalSettings;
use crate::setup::{self, ReadyNode, StepLog};
use anyhow::{Context, Result, bail};
use std::collections::HashMap;
use std::path::PathBuf;

/// Networks payments may be made on without `allow_mainnet`.
const TEST_NETWORKS: [&str; 5] = ["regtest", "signet", "testnet", "testnet4", "simnet"];

pub(super) async fn bring_up(
    scenario: &Scenario,
    log: &mut StepLog,
    facts: &mut RunFacts,
) -> Result<Network> {
    let settings = scenario.external.clone().unwrap_or_default();
    check_caps(scenario, &settings)?;
    log.begin("nodes reachable");
    let mut nodes = HashMap::new();
    let mut networks = Vec::new();
    for spec in &scenario.nodes {
        let ext = (spec.external.as_ref())
            .with_context(|| format!("internal: external node {} has no address", spec.name))?;
        let endpoint = NodeEndpoint {
            name: spec.name.clone(),
            implementation: spec.implementation,
            rpc_addr: ext.rpc_addr.clone(),
            p2p_addr: String::new(),
            credentials: ext.credentials.clone(),
            data_dir: PathBuf::new(),
            binary: PathBuf::from(format!("external at {}", ext.rpc_addr)),
            pid: None,
            payment_engine: spec.payment_engine,
        };
        let driver = crate::node::driver(spec.implementation);
        let cannot = || {
            format!(
                "cannot reach external {} node {} at {} (is it running, and are the \
                 credential paths right?)",
                spec.implementation, spec.name, ext.rpc_addr
            )
        };
        let node = driver.connect(&endpoint).await.with_context(cannot)?;
        let info = node.get_info().await.with_context(cannot)?;
        if let Some(expected) = &ext.pubkey
            && !info.pubkey.eq_ignore_ascii_case(expected)
        {
            bail!(
                "external node {} reports pubkey {}, not the {expected} its id gives",
                spec.name,
                info.pubkey
            );
        }
        // A client that cannot tell the network is taken as one that does not say.
        let network = match node.network_name() {
            Some(name) => name.network().await.with_context(cannot)?,
            None => None,
        };
        check_network(&spec.name, network.as_deref(), &settings, log)?;
        if !info.synced_to_chain {
            bail!(
                "external node {} is not synced to its chain (at block {}): wait for it, \
                 then run again",
                spec.name,
                info.block_height
            );
        }
        let network = network.unwrap_or_default();
        log.progress(&format!(
            "{} ready ({}, {network}, {} active channels)",
            spec.name, info.version, info.num_active_channels
        ));
        if !networks.contains(&network) {
            networks.push(network);
        }
        let ready = ReadyNode {
            node,
            info,
            p2p_addr: String::new(),
        };
        facts
            .nodes
            .push((spec.clone(), ready.clone(), endpoint.binary.clone()));
        nodes.insert(spec.name.clone(), ready);
    }
    facts.chain_version = networks.join(", ");

    log.begin("channels checked");
    check_channels(scenario, &nodes, log).await?;

    log.begin("routes ready");
    let w = &scenario.workload;
    let pairs: Vec<(ReadyNode, ReadyNode)> = (w.senders.iter())
        .flat_map(|s| w.receivers.iter().map(move |r| (s, r)))
        .map(|(s, r)| (nodes[s].clone(), nodes[r].clone()))
        .collect();
    if settings.allow_mainnet {
        // Probes would be payments beyond the caps.
        log.progress("no probe payments (mainnet allowed): routes are tried by the load");
    } else {
        setup::wait_routable(&pairs, log).await?;
    }
    log.end();
    Ok(Network::without_chain(nodes))
}

/// A node's chain, as it reports it: a test network, or mainnet where allowed.
fn check_network(
    name: &str,
    network: Option<&str>,
    settings: &ExternalSettings,
    log: &mut StepLog,
) -> Result<()> {
    match network {
        Some(n) if TEST_NETWORKS.contains(&n) => {}
        Some("main") if settings.allow_mainnet => log.progress(&format!(
            "{} is on mainnet: allowed, at most {} msat per payment and {} msat in all",
            name,
            settings.max_payment_msat.unwrap_or(0),
            settings.max_total_msat.unwrap_or(0)
        )),
        Some("main") => bail!(
            "external node {} runs on mainnet: refused (payments there spend real \
             money); to allow it, set external: {{ allow_mainnet: true, \
             max_payment_msat: N, max_total_msat: M }} and stop: payments:",
            name
        ),
        other => bail!(
            "external node {} runs on network {other:?}, which is not regtest, signet \
             or testnet: refused",
            name
        ),
    }
    Ok(())
}

/// Each pair of the scenario's channels has at least its `count` active channels:
/// runtime: external opens none.
async fn check_channels(
    scenario: &Scenario,
    nodes: &HashMap<String, ReadyNode>,
    log: &mut StepLog,
) -> Result<()> {
    for ch in &scenario.channels {
        let (from, to) = (&nodes[&ch.from], &nodes[&ch.to]);
        let channels = from.node.list_channels().await?;
        let active = (channels.iter())
            .filter(|c| c.active && c.remote_pubkey.eq_ignore_ascii_case(&to.info.pubkey))
            .count();
        if active < ch.count as usize {
            bail!(
                "the scenario expects {} active channel(s) between {} and {}, the node \
                 reports {active}: runtime: external opens none; open them on the nodes, or \
                 change channels:",
                ch.count,
                ch.from,
                ch.to
            );
        }
        log.progress(&format!("{} - {}: {active} active", ch.from, ch.to));
    }
    Ok(())
}

/// Mainnet's caps again, as the run will go (`--payments` may have changed the stop
/// after validation): each payment and the total must stay under them.
fn check_caps(
    scenario: &Scenario,
    settings: &crate::scenario::external::ExternalSettings,
) -> Result<()> {
    if !settings.allow_mainnet {
        return Ok(());
    }
    let w = &scenario.workload;
    let (per, total) = (
        settings.max_payment_msat.unwrap_or(0),
        settings.max_total_msat.unwrap_or(0),
    );
    let Some(payments) = w.stop.payments else {
        bail!("mainnet allowed, but the run has no payment count: give stop: payments:");
    };
    let spent = u128::from(payments) * u128::from(w.amount_msat);
    if w.amount_msat > per || spent > u128::from(total) {
        bail!(
            "{payments} payments of {} msat ({spent} msat) exceed the mainnet caps \
             (max_payment_msat: {per}, max_total_msat: {total}): refused",
            w.amount_msat
        );
    }
    Ok(())
}

#[cfg(test)]
#[path = "external_tests.rs"]
mod tests;
