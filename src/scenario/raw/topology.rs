//! `topology:` as written.

use super::super::dist::RawDist;
use crate::node::Implementation;
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::fmt;

/// `topology:`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::scenario) struct RawTopology {
    pub shape: Spanned<Shape>,
    pub nodes: Spanned<u32>,
    /// random: the mean number of peers per node; scale-free: peers each new node
    /// links to.
    #[serde(default)]
    pub degree: Option<Spanned<f64>>,
    /// Required, except with `shape: import` (capacities come from the file; given,
    /// it caps them).
    #[serde(default)]
    pub capacity_sat: Option<Spanned<RawDist>>,
    /// `shape: import`: an `lncli describegraph` JSON file, relative to the scenario.
    #[serde(default)]
    pub file: Option<Spanned<String>>,
    #[serde(default)]
    pub channels_per_pair: Option<Spanned<RawDist>>,
    /// Each pair gets channels opened from both ends (so both can pay at once);
    /// false: one end, chosen at random, opens them. Default true.
    #[serde(default)]
    pub both_ways: Option<bool>,
    /// `{ lnd: 0.5, cln: 0.5 }`: shares of the nodes per implementation.
    #[serde(default)]
    pub implementations: Option<Spanned<Shares>>,
    #[serde(default)]
    pub seed: Option<u64>,
    /// Node names are the prefix and a number: n01, n02, ...
    #[serde(default)]
    pub prefix: Option<Spanned<String>>,
    /// Extra command-line arguments for every generated node of an implementation.
    #[serde(default)]
    pub args: Option<std::collections::HashMap<Implementation, Vec<String>>>,
}

/// The shapes a topology can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// Node 1 is the hub, every other node its peer.
    Star,
    Ring,
    Line,
    Complete,
    /// Erdős–Rényi: each pair linked with probability degree / (N - 1), then the
    /// components joined so every node reaches every other.
    Random,
    /// Barabási–Albert preferential attachment: each new node links to `degree`
    /// existing nodes, likelier to the well connected.
    ScaleFree,
    /// A channel graph from `file:` (`lncli describegraph`), cut down to N nodes.
    Import,
}

impl Shape {
    pub fn as_str(self) -> &'static str {
        match self {
            Shape::Star => "star",
            Shape::Ring => "ring",
            Shape::Line => "line",
            Shape::Complete => "complete",
            Shape::Random => "random",
            Shape::ScaleFree => "scale-free",
            Shape::Import => "import",
        }
    }
}

/// `implementations:` in file order with each share's location.
#[derive(Debug)]
pub(in crate::scenario) struct Shares(pub Vec<(Spanned<Implementation>, Spanned<f64>)>);

impl<'de> Deserialize<'de> for Shares {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SharesVisitor;

        impl<'de> serde::de::Visitor<'de> for SharesVisitor {
            type Value = Shares;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping from implementation to share, e.g. { lnd: 0.5, cln: 0.5 }")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Shares, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(Shares(entries))
            }
        }

        deserializer.deserialize_map(SharesVisitor)
    }
}
