//! The scenario file as written: a serde model that rejects unknown fields and keeps
//! the line and column of every value the validator may complain about.
//!
//! This file holds the whole file (`RawScenario`) and its small top-level fields; each
//! section's shape is a file under `raw/`. The model imports nothing of the sections'
//! validation, which reads it: the sections take their shapes from here, never the
//! other way round.

mod activity;
mod after_load;
mod attack;
mod faults;
mod history;
mod kube;
mod profile;
mod rebalance;
mod repeat;
mod resources;
mod stream;
mod sweep;
mod topology;
mod workload;

pub(super) use activity::{RawActivity, RawShare};
pub(super) use after_load::{RawAfterLoad, RawRestart};
pub(super) use attack::RawAttack;
pub(super) use faults::RawFault;
pub(super) use history::RawHistory;
pub(super) use profile::RawProfile;
pub(super) use rebalance::RawRebalance;
pub use repeat::Judge;
pub(super) use repeat::RawRepeat;
pub(super) use resources::RawEnvelope;
pub(super) use stream::RawRecipient;
pub(super) use sweep::{Counts, ImplValues, RawSweep};
pub(super) use topology::RawTopology;
pub use topology::Shape;
pub(super) use workload::{RawPaymentKind, RawRamp, RawRate, RawSteady, RawStop, RawWorkload};

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
    pub sweep: Option<Spanned<sweep::RawSweep>>,
    /// `repeat: 5` or `repeat: { count: 5, ... }`.
    #[serde(default)]
    pub repeat: Option<Spanned<repeat::RawRepeat>>,
    /// Steps after the load: `restart: [alice, bob]` or `restart: all`.
    #[serde(default)]
    pub after_load: Option<Spanned<RawAfterLoad>>,
    /// The etcd the runtime starts for nodes on `--db.backend=etcd`: `{ members: 3 }`.
    #[serde(default)]
    pub etcd: Option<RawEtcd>,
    /// CPU profiles of the nodes during the load: `{ nodes: [alice], start: 5s, duration: 10s }`.
    #[serde(default)]
    pub profile: Option<Spanned<profile::RawProfile>>,
    /// `runtime: external`'s settings: sim-ln's node file, mainnet and its caps.
    #[serde(default)]
    pub external: Option<Spanned<RawExternal>>,
    /// Shapes of peer links from the start: `[{ between: [alice, bob], latency: 15ms }]`.
    #[serde(default)]
    pub links: Option<Spanned<Vec<Spanned<faults::RawLink>>>>,
    /// Faults during the load: `[{ at: 20s, kill: bob, restart_after: 5s }]`.
    #[serde(default)]
    pub faults: Option<Spanned<Vec<Spanned<faults::RawFault>>>>,
    /// Background mining during the load: `{ every: 10s }`.
    #[serde(default)]
    pub mining: Option<Spanned<faults::RawMining>>,
    /// A generated network in place of `nodes:` and `channels:`.
    #[serde(default)]
    pub topology: Option<Spanned<topology::RawTopology>>,
    /// `runtime: kubernetes`'s settings: the kubeconfig context and placement.
    #[serde(default)]
    pub kubernetes: Option<Spanned<kube::RawKubernetes>>,
    /// The share of the machine of every node, the chain and the database servers.
    #[serde(default)]
    pub resources: Option<Spanned<resources::RawResources>>,
    /// The saved network to start from: a snapshot's name in the cache, or its directory.
    #[serde(default)]
    pub snapshot: Option<Spanned<String>>,
    /// Payments made before the measured load: `{ payments: 10000 }`.
    #[serde(default)]
    pub history: Option<Spanned<history::RawHistory>>,
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
    pub resources: Option<Spanned<resources::RawEnvelope>>,
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
