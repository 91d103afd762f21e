//! Setup of one network: the chain, the scenario's nodes, funds, channels, and probes
//! until each sender can pay each receiver.

use crate::chain::MiningWallet;
use crate::runtime::Runtime;
use crate::scenario::Scenario;
use crate::setup::{self, ReadyNode, StepLog};
use anyhow::{Context, Result};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How long a node may take to start and sync before the run gives up.
const NODE_READY_TIMEOUT: Duration = Duration::from_secs(90);
/// How long a restored node that migrates its database may take (LND's key-value to
/// native SQL migration runs before it answers; a long history takes minutes).
const MIGRATION_READY_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// How long restored channels may take to be active again.
const CHANNELS_BACK_TIMEOUT: Duration = Duration::from_secs(120);
/// The lines of a migrated node's output read for its migrations (LND writes about
/// 300 from its start until it is ready).
const MIGRATION_LOG_LINES: usize = 5000;

/// What setup learned, for the report.
#[derive(Default)]
pub struct RunFacts {
    /// `local`, or `docker (images)`.
    pub runtime: String,

    pub(super) chain_version: String,
    pub(super) nodes: Vec<(crate::scenario::NodeSpec, ReadyNode, PathBuf)>,
    /// The database servers the runtime started for the nodes.
    pub(super) services: Vec<crate::runtime::Service>,
    /// The snapshot the network was restored from: setup skips funds and channels.
    pub(super) snapshot: Option<crate::report::SnapshotRef>,
    /// A restored snapshot's chain (raw blocks from height 1), submitted before setup.
    pub(super) blocks: Vec<String>,
    /// Seconds from the nodes' start until each answered synced to the chain, by name.
    pub(super) ready_s: HashMap<String, f64>,
}

impl RunFacts {
    /// Facts of a run on `runtime`, before setup.
    pub fn on(runtime: &dyn Runtime) -> Self {
        RunFacts {
            runtime: runtime.describe(),
            ..RunFacts::default()
        }
    }
}

/// The network, ready for load.
pub struct Network {
    pub(super) nodes: HashMap<String, ReadyNode>,
    /// LND's profiling listener by node name (`profile:`).
    pub(super) pprof: HashMap<String, String>,
    /// The fault proxy's links, when peer connections go through it.
    pub(super) links: Option<crate::links::LinkProxies>,
    /// The tool's chain client (None for external nodes): `mine:` faults.
    pub(super) chain: Option<Arc<dyn crate::chain::ChainBackend>>,
}

impl Network {
    /// A network of nodes the run did not set up (external): no chain client, no
    /// profiling listener, no fault proxy.
    pub(super) fn without_chain(nodes: HashMap<String, ReadyNode>) -> Network {
        Network {
            nodes,
            pprof: HashMap::new(),
            links: None,
            chain: None,
        }
    }

    /// The node of that instance name.
    pub fn node(&self, name: &str) -> Option<&ReadyNode> {
        self.nodes.get(name)
    }
}

/// Setup on its own: the chain, the scenario's nodes, funds, channels, and probes
/// until each sender can pay each receiver. (Tests use it to drive real nodes directly.)
pub async fn bring_up(
    scenario: &Scenario,
    runtime: &mut dyn Runtime,
    log: &mut StepLog,
    facts: &mut RunFacts,
) -> Result<Network> {
    // Nodes that already run elsewhere are reached, not started.
    let Some(starts) = runtime.starts() else {
        return super::external::bring_up(scenario, log, facts).await;
    };
    log.begin("chain up");
    let wallet = MiningWallet::generate();
    let endpoint = starts
        .start_chain(&scenario.chain, &wallet.address().to_string())
        .await?;
    facts.chain_version = endpoint.version.clone();
    log.progress("mining until coins are mature");
    let chain = starts
        .connect_chain(&endpoint, wallet, &facts.blocks)
        .await
        .context("preparing the regtest chain")?;
    let chain_arc = chain;
    let chain = chain_arc.as_ref();
    let height = chain.height().await?;

    log.begin("nodes up");
    if let Some(servers) = runtime.servers() {
        servers.set_etcd_members(scenario.etcd_members);
    }
    // Profiled LND nodes get their pprof listener (loopback) on the command line.
    let (specs, pprof) = crate::profile::listener_args(scenario, runtime);
    let started = std::time::Instant::now();
    let starts = runtime
        .starts()
        .context("internal: the runtime stopped starting nodes")?;
    let endpoints = starts.start_nodes(&specs, &endpoint).await?;
    facts.services = crate::runtime::services(runtime);
    let nodes = nodes_synced(scenario, runtime, (&endpoints, started), height, log, facts).await?;

    // A restored snapshot has its funds and channels: only its peers to dial again.
    let restored = facts.snapshot.is_some();
    if !restored {
        log.begin("wallets funded");
        setup::fund_openers(chain, &nodes, &scenario.channels, log).await?;
    }

    let links = if scenario.proxied_links() {
        Some(proxy_links(scenario, runtime, &nodes, log, facts).await?)
    } else {
        None
    };

    log.begin("peers connected");
    setup::connect_peers(&nodes, &scenario.channels, links.as_ref(), restored, log).await?;

    log.begin("channels active");
    if restored {
        channels_back(&nodes, &scenario.channels, log).await?;
    } else {
        setup::open_channels(chain, &nodes, &scenario.channels, log).await?;
    }

    log.begin("routes ready");
    let names = route_probes(scenario);
    let pairs: Vec<(ReadyNode, ReadyNode)> = (names.iter())
        .map(|(s, r)| (nodes[s].clone(), nodes[r].clone()))
        .collect();
    setup::wait_routable(&pairs, log).await?;
    log.end();
    Ok(Network {
        nodes,
        pprof,
        links,
        chain: Some(Arc::clone(&chain_arc)),
    })
}

/// Who must be able to pay whom before the load starts: each sender each receiver
/// (or the activity's probes), and an attack's attacker its accomplice, whose route
/// crosses the jammed hop and is learnt by gossip like the honest ones.
fn route_probes(scenario: &Scenario) -> Vec<(String, String)> {
    let w = &scenario.workload;
    let mut names: Vec<(String, String)> = super::activity::probes(scenario).unwrap_or_else(|| {
        (w.senders.iter())
            .flat_map(|s| w.receivers.iter().map(move |r| (s.clone(), r.clone())))
            .collect()
    });
    if let Some(a) = &w.attack {
        names.push((a.attacker.clone(), a.accomplice.clone()));
    }
    names
}

/// Connects to each started node and waits, for all at once, until each is synced
/// to `height`; each is a fact of the run. A restored node that migrates its database
/// is given [`MIGRATION_READY_TIMEOUT`], and its time from `started` (the nodes'
/// start) until it was ready goes to the snapshot's record of the migration.
async fn nodes_synced(
    scenario: &Scenario,
    runtime: &mut dyn Runtime,
    (endpoints, started): (&[crate::node::NodeEndpoint], std::time::Instant),
    height: u64,
    log: &mut StepLog,
    facts: &mut RunFacts,
) -> Result<HashMap<String, ReadyNode>> {
    let mut connected = Vec::new();
    let connector = runtime.node_connector();
    for (spec, ep) in scenario.nodes.iter().zip(endpoints) {
        // A node can pass the runtime's readiness check and exit a moment later (a flag
        // or a chain backend it refuses): its log says why.
        let node = connector.connect(ep).await.with_context(|| {
            format!(
                "{} {} stopped answering right after it started; last lines of its log:\n{}",
                spec.implementation,
                spec.name,
                runtime.log_tail(&spec.name, 20)
            )
        })?;
        connected.push(node);
    }
    let migrating =
        |name: &str| (facts.snapshot.iter()).any(|s| s.migrations.iter().any(|m| m.node == name));
    let waits = scenario.nodes.iter().zip(&connected).map(|(spec, node)| {
        let driver = crate::node::driver(spec.implementation);
        let limit = match migrating(&spec.name) {
            true => MIGRATION_READY_TIMEOUT,
            false => NODE_READY_TIMEOUT,
        };
        async move {
            let starting = |e: &crate::node::NodeError| driver.is_starting_up(e);
            let info = setup::wait_synced(node.as_ref(), height, limit, starting).await;
            (info, started.elapsed().as_secs_f64())
        }
    });
    let synced = futures::future::join_all(waits).await;
    let mut nodes = HashMap::new();
    for (((spec, ep), node), (info, ready_s)) in (scenario.nodes.iter().zip(endpoints))
        .zip(connected)
        .zip(synced)
    {
        let info = info.with_context(|| {
            format!(
                "{} {} did not become ready; last lines of its log:\n{}",
                spec.implementation,
                spec.name,
                runtime.log_tail(&spec.name, 20)
            )
        })?;
        log.progress(&format!("{} ready ({})", spec.name, info.version));
        facts.ready_s.insert(spec.name.clone(), ready_s);
        let migrations = facts
            .snapshot
            .iter_mut()
            .flat_map(|s| s.migrations.iter_mut());
        for m in migrations.filter(|m| m.node == spec.name) {
            m.ready_s = ready_s;
            let log = runtime.log_tail(&spec.name, MIGRATION_LOG_LINES);
            // An upgrade of an implementation whose log the tool does not read for
            // migrations (any but LND) is still timed, with none listed.
            m.logged = (crate::node::driver(spec.implementation).migrations())
                .map(|reader| reader.in_log(&log))
                .unwrap_or_default();
            crate::lines::errln!("    {}", m.line());
        }
        let ready = ReadyNode {
            node,
            info,
            p2p_addr: ep.p2p_addr.clone(),
        };
        facts
            .nodes
            .push((spec.clone(), ready.clone(), ep.binary.clone()));
        nodes.insert(spec.name.clone(), ready);
    }
    Ok(nodes)
}

/// Starts the fault proxy and a proxy per directed link of the channels.
async fn proxy_links(
    scenario: &Scenario,
    runtime: &mut dyn Runtime,
    nodes: &HashMap<String, ReadyNode>,
    log: &mut StepLog,
    facts: &mut RunFacts,
) -> Result<crate::links::LinkProxies> {
    log.begin("links through the fault proxy");
    let directed = crate::links::directed(&scenario.channels);
    let host = crate::runtime::start_link_proxy(runtime, directed.len()).await?;
    let wanted: Vec<(String, String, String)> = (directed.into_iter())
        .map(|(from, to)| {
            let upstream = nodes[&to].p2p_addr.clone();
            (from, to, upstream)
        })
        .collect();
    let proxies = crate::links::LinkProxies::create(&host, &wanted, &scenario.links).await?;
    facts.services = crate::runtime::services(runtime);
    log.progress(&format!("{} links proxied", proxies.links().len()));
    Ok(proxies)
}

/// After a restored network's nodes are up and their peers dialled: waits until each
/// node has as many active channels as the scenario opens with it.
async fn channels_back(
    nodes: &HashMap<String, ReadyNode>,
    channels: &[crate::scenario::ChannelSpec],
    log: &mut StepLog,
) -> Result<()> {
    let mut wanted: HashMap<&str, u32> = HashMap::new();
    for ch in channels {
        *wanted.entry(ch.from.as_str()).or_default() += ch.count;
        *wanted.entry(ch.to.as_str()).or_default() += ch.count;
    }
    for (name, count) in wanted {
        let node = (nodes.get(name)).with_context(|| format!("no node {name}"))?;
        let what = format!("{name}'s {count} restored channel(s) active");
        crate::setup::poll(
            &what,
            CHANNELS_BACK_TIMEOUT,
            Duration::from_millis(200),
            || async {
                let active = node.node.get_info().await?.num_active_channels;
                Ok((active >= count).then_some(()))
            },
        )
        .await?;
        log.progress(&format!("{name}: {count} channel(s) active"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::route_probes;
    use crate::scenario::attack_tests::JAM;
    use std::path::Path;

    fn probes(text: &str) -> Vec<(String, String)> {
        let s = crate::scenario::parse(Path::new("t.yaml"), text, crate::runtime::capabilities)
            .unwrap();
        route_probes(&s)
    }

    /// A CI run on an Eclair hop (gossip relayed once a minute then) started the attack
    /// before mallory knew carol -> eve: not one slot was held.
    #[test]
    fn the_attacker_must_reach_its_accomplice_before_the_load_starts() {
        let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(
            probes(JAM),
            [pair("alice", "carol"), pair("mallory", "eve")]
        );
        let (honest, _) = JAM.split_once("  attack:").unwrap();
        assert_eq!(probes(honest), [pair("alice", "carol")]);
    }
}
