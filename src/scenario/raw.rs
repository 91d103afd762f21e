//! The scenario file as written: a serde model that rejects unknown fields and keeps
//! the line and column of every value the validator may complain about.

use crate::node::Implementation;
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::fmt;
use std::marker::PhantomData;
use std::path::PathBuf;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScenario {
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub runtime: Option<Spanned<super::RuntimeKind>>,
    #[serde(default)]
    pub pull: Option<RawPull>,
    #[serde(default)]
    pub chain: Option<RawChain>,
    /// Absent only when `external: nodes_file:` gives the nodes.
    #[serde(default = "no_nodes")]
    pub nodes: Spanned<NodeMap>,
    #[serde(default)]
    pub channels: Vec<Spanned<RawChannel>>,
    pub workload: Spanned<RawWorkload>,
    #[serde(default)]
    pub thresholds: Option<Spanned<RawThresholdBlocks>>,
    #[serde(default)]
    pub sweep: Option<Spanned<super::sweep::RawSweep>>,
    /// `repeat: 5` or `repeat: { count: 5, ... }`.
    #[serde(default)]
    pub repeat: Option<Spanned<super::repeat::RawRepeat>>,
    /// Steps after the load: `restart: [alice, bob]` or `restart: all`.
    #[serde(default)]
    pub after_load: Option<Spanned<RawAfterLoad>>,
    /// The etcd the runtime starts for nodes on `--db.backend=etcd`: `{ members: 3 }`.
    #[serde(default)]
    pub etcd: Option<RawEtcd>,
    /// CPU profiles of the nodes during the load: `{ nodes: [alice], start: 5s, duration: 10s }`.
    #[serde(default)]
    pub profile: Option<Spanned<super::profile::RawProfile>>,
    /// `runtime: external`'s settings: sim-ln's node file, mainnet and its caps.
    #[serde(default)]
    pub external: Option<Spanned<RawExternal>>,
    /// Shapes of peer links from the start: `[{ between: [alice, bob], latency: 15ms }]`.
    #[serde(default)]
    pub links: Option<Spanned<Vec<Spanned<super::faults::RawLink>>>>,
    /// Faults during the load: `[{ at: 20s, kill: bob, restart_after: 5s }]`.
    #[serde(default)]
    pub faults: Option<Spanned<Vec<Spanned<super::faults::RawFault>>>>,
    /// Background mining during the load: `{ every: 10s }`.
    #[serde(default)]
    pub mining: Option<Spanned<super::faults::RawMining>>,
    /// A generated network in place of `nodes:` and `channels:`.
    #[serde(default)]
    pub topology: Option<Spanned<super::topology::RawTopology>>,
    /// `runtime: kubernetes`'s settings: the kubeconfig context and placement.
    #[serde(default)]
    pub kubernetes: Option<Spanned<super::kube::RawKubernetes>>,
    /// The share of the machine of every node, the chain and the database servers.
    #[serde(default)]
    pub resources: Option<Spanned<super::resources::RawResources>>,
    /// The saved network to start from: a snapshot's name in the cache, or its directory.
    #[serde(default)]
    pub snapshot: Option<Spanned<String>>,
    /// Payments made before the measured load: `{ payments: 10000 }`.
    #[serde(default)]
    pub history: Option<Spanned<super::history::RawHistory>>,
}

/// A field left out: empty, at an unknown location.
fn unset<T: Default>() -> Spanned<T> {
    use serde_saphyr::Location;
    Spanned::new(T::default(), Location::UNKNOWN, Location::UNKNOWN)
}

fn no_nodes() -> Spanned<NodeMap> {
    use serde_saphyr::Location;
    Spanned::new(NodeMap(Vec::new()), Location::UNKNOWN, Location::UNKNOWN)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawExternal {
    #[serde(default)]
    pub nodes_file: Option<Spanned<String>>,
    #[serde(default)]
    pub allow_mainnet: Option<Spanned<bool>>,
    #[serde(default)]
    pub max_payment_msat: Option<Spanned<u64>>,
    #[serde(default)]
    pub max_total_msat: Option<Spanned<u64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEtcd {
    pub members: Spanned<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAfterLoad {
    #[serde(default)]
    pub restart: Option<Spanned<RawRestart>>,
}

/// `restart: all`, or a list of node names (groups under `nodes:`).
#[derive(Debug)]
pub(super) enum RawRestart {
    All,
    /// Anything but `all` given as one word, kept to be reported.
    Word(String),
    Nodes(Vec<Spanned<String>>),
}

impl<'de> Deserialize<'de> for RawRestart {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RestartVisitor;

        impl<'de> serde::de::Visitor<'de> for RestartVisitor {
            type Value = RawRestart;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("all, or a list of node names such as [alice, bob]")
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawRestart, E> {
                Ok(match v.trim() {
                    "all" => RawRestart::All,
                    other => RawRestart::Word(other.to_string()),
                })
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<RawRestart, A::Error> {
                let mut names = Vec::new();
                while let Some(name) = seq.next_element()? {
                    names.push(name);
                }
                Ok(RawRestart::Nodes(names))
            }
        }

        deserializer.deserialize_any(RestartVisitor)
    }
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum RawPull {
    IfMissing,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum RawChainKind {
    Btcd,
    Bitcoind,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawChain {
    pub implementation: RawChainKind,
    #[serde(default)]
    pub binary: Option<PathBuf>,
    #[serde(default)]
    pub image: Option<Spanned<String>>,
    #[serde(default)]
    pub args: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawNode {
    pub implementation: Spanned<Implementation>,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub binary: Option<PathBuf>,
    #[serde(default)]
    pub image: Option<Spanned<String>>,
    #[serde(default)]
    pub replicas: Option<Spanned<u32>>,
    #[serde(default)]
    pub database: Option<Spanned<crate::scenario::Database>>,
    /// Core Lightning only: the command that pays invoices.
    #[serde(default)]
    pub payment_engine: Option<Spanned<crate::node::PaymentEngine>>,
    #[serde(default)]
    pub args: Vec<String>,
    /// This node's envelope: its fields win over `resources: nodes:`.
    #[serde(default)]
    pub resources: Option<Spanned<super::resources::RawEnvelope>>,
    /// `runtime: external`: where the node's RPC listens and where its credential
    /// files are (paths, or `$NAME`).
    #[serde(default)]
    pub rpc: Option<Spanned<String>>,
    #[serde(default)]
    pub tls_cert: Option<Spanned<String>>,
    #[serde(default)]
    pub macaroon: Option<Spanned<String>>,
    #[serde(default)]
    pub ca_cert: Option<Spanned<String>>,
    #[serde(default)]
    pub client_cert: Option<Spanned<String>>,
    #[serde(default)]
    pub client_key: Option<Spanned<String>>,
}

/// `nodes:` in file order, each name with its location (a `HashMap` would lose both).
#[derive(Debug)]
pub(super) struct NodeMap(pub Vec<(Spanned<String>, RawNode)>);

impl<'de> Deserialize<'de> for NodeMap {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor(PhantomData<NodeMap>);

        impl<'de> serde::de::Visitor<'de> for EntriesVisitor {
            type Value = NodeMap;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping from node name to node settings")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<NodeMap, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(NodeMap(entries))
            }
        }

        deserializer.deserialize_map(EntriesVisitor(PhantomData))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawChannel {
    pub from: Spanned<String>,
    pub to: Spanned<String>,
    pub capacity_sat: Spanned<u64>,
    #[serde(default)]
    pub count: Option<Spanned<u32>>,
    /// A line through this group's instances: from -> through-1 -> ... -> through-N -> to.
    #[serde(default)]
    pub through: Option<Spanned<String>>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum RawPaymentKind {
    Keysend,
    Invoice,
    InvoicePregenerated,
    /// Podcast streaming: keysends split across `recipients:` (stream.rs).
    Stream,
}

impl RawPaymentKind {
    /// The kind as the validated scenario names it.
    pub fn kind(self) -> super::PaymentKind {
        match self {
            RawPaymentKind::Keysend => super::PaymentKind::Keysend,
            RawPaymentKind::Invoice => super::PaymentKind::Invoice,
            RawPaymentKind::InvoicePregenerated => super::PaymentKind::InvoicePregenerated,
            RawPaymentKind::Stream => super::PaymentKind::Stream,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawWorkload {
    pub kind: Spanned<RawPaymentKind>,
    /// Absent (empty, at an unknown location) only with `activity:`.
    #[serde(default = "unset")]
    pub senders: Spanned<Vec<Spanned<String>>>,
    #[serde(default = "unset")]
    pub receiver: Spanned<String>,
    /// `kind: stream`: who shares each tick, by weight.
    #[serde(default)]
    pub recipients: Option<Spanned<Vec<Spanned<super::stream::RawRecipient>>>>,
    /// Payments across the network: random peers instead of senders and a receiver.
    #[serde(default)]
    pub activity: Option<Spanned<super::activity::RawActivity>>,
    #[serde(default)]
    pub amount_msat: Option<Spanned<u64>>,
    #[serde(default)]
    pub concurrency: Option<Spanned<u32>>,
    #[serde(default)]
    pub rate: Option<Spanned<RawRate>>,
    pub stop: Spanned<RawStop>,
    #[serde(default)]
    pub payment_timeout: Option<Spanned<String>>,
    /// Invoice payments: the most parts the sender may split one into (`parts.rs`).
    #[serde(default)]
    pub max_parts: Option<Spanned<u32>>,
    /// Jamming under load: an attacker holding HTLC slots on the honest route (`attack.rs`).
    #[serde(default)]
    pub attack: Option<Spanned<super::attack::RawAttack>>,
    /// Circular rebalancing during the load (`rebalance.rs`).
    #[serde(default)]
    pub rebalance: Option<Spanned<super::rebalance::RawRebalance>>,
}

/// Open-loop phases; they always run in this order, whatever the order in the file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRate {
    #[serde(default)]
    pub warm_up: Option<Spanned<RawSteady>>,
    #[serde(default)]
    pub ramp: Option<Spanned<RawRamp>>,
    #[serde(default)]
    pub hold: Option<Spanned<RawSteady>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSteady {
    pub rate: Spanned<f64>,
    pub duration: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRamp {
    pub from: Spanned<f64>,
    pub to: Spanned<f64>,
    pub duration: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawStop {
    #[serde(default)]
    pub payments: Option<Spanned<u64>>,
    #[serde(default)]
    pub duration: Option<Spanned<String>>,
    /// Draining channels: stop after this many payments failed for lack of liquidity.
    #[serde(default)]
    pub liquidity_failures: Option<Spanned<u64>>,
}

/// `thresholds:`; durations and the failure rate are read as text and parsed by the
/// validator, so `2s`, `1%` and `0.01` all keep their location.
/// `thresholds:` as one block, or a list of blocks (each may name its `phase:`).
#[derive(Debug)]
pub(super) struct RawThresholdBlocks(
    pub Vec<RawThresholds>,
    pub Vec<Option<serde_saphyr::Location>>,
);

impl<'de> Deserialize<'de> for RawThresholdBlocks {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct BlocksVisitor;

        impl<'de> serde::de::Visitor<'de> for BlocksVisitor {
            type Value = RawThresholdBlocks;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a mapping of thresholds (p99_latency: 2s, ...) or a list of such mappings, each with an optional phase:",
                )
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<RawThresholdBlocks, A::Error> {
                // The block's own fields are read by the map itself, so their
                // locations and unknown-field errors stay as precise as elsewhere.
                let block =
                    RawThresholds::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(RawThresholdBlocks(vec![block], vec![None]))
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<RawThresholdBlocks, A::Error> {
                // Each entry's own location, for an entry with nothing in it.
                let (mut blocks, mut at) = (Vec::new(), Vec::new());
                while let Some(block) = seq.next_element::<Spanned<RawThresholds>>()? {
                    blocks.push(block.value);
                    at.push(Some(block.referenced));
                }
                Ok(RawThresholdBlocks(blocks, at))
            }
        }

        deserializer.deserialize_any(BlocksVisitor)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawThresholds {
    #[serde(default)]
    pub p50_latency: Option<Spanned<String>>,
    #[serde(default)]
    pub p90_latency: Option<Spanned<String>>,
    #[serde(default)]
    pub p99_latency: Option<Spanned<String>>,
    #[serde(default)]
    pub max_latency: Option<Spanned<String>>,
    #[serde(default)]
    pub min_tps: Option<Spanned<f64>>,
    #[serde(default)]
    pub max_failure_rate: Option<Spanned<String>>,
    #[serde(default)]
    pub max_outside_load: Option<Spanned<String>>,
    #[serde(default)]
    pub max_steal: Option<Spanned<String>>,
    #[serde(default)]
    pub max_mismatches: Option<Spanned<u64>>,
    /// The open-loop phase (`ramp` or `hold`) these thresholds apply to; the whole
    /// run when absent.
    #[serde(default)]
    pub phase: Option<Spanned<String>>,
}
