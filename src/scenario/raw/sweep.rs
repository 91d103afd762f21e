//! `sweep:` as written.

use super::super::db_backend::DbBackend;
use super::workload::RawPaymentKind;
use crate::chain::ChainKind;
use crate::node::{Database, PaymentEngine};
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::fmt;
use std::marker::PhantomData;

/// `sweep:`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::scenario) struct RawSweep {
    #[serde(default)]
    pub concurrency: Option<Counts>,
    #[serde(default)]
    pub rate: Option<Spanned<Vec<Spanned<f64>>>>,
    #[serde(default)]
    pub kind: Option<Spanned<Vec<Spanned<RawPaymentKind>>>>,
    #[serde(default)]
    pub replicas: Option<Spanned<GroupValues>>,
    #[serde(default)]
    pub db_backend: Option<Spanned<Vec<Spanned<DbBackend>>>>,
    #[serde(default)]
    pub chain: Option<Spanned<Vec<Spanned<ChainKind>>>>,
    #[serde(default)]
    pub implementation: Option<Spanned<ImplValues>>,
    #[serde(default)]
    pub database: Option<Spanned<Vec<Spanned<Database>>>>,
    #[serde(default)]
    pub payment_engine: Option<Spanned<Vec<Spanned<PaymentEngine>>>>,
    #[serde(default)]
    pub attack_slots: Option<Counts>,
    /// A history ladder: payments the network has made before each step's load.
    #[serde(default)]
    pub history: Option<Counts>,
    #[serde(default)]
    pub p99_bound: Option<Spanned<String>>,
}

/// A list of whole numbers, each with its location.
pub(in crate::scenario) type Counts = Spanned<Vec<Spanned<u32>>>;

/// `replicas:` under `sweep:`: node group -> list of replica counts, in file order.
#[derive(Debug)]
pub(in crate::scenario) struct GroupValues(pub(in crate::scenario) Vec<(Spanned<String>, Counts)>);

impl<'de> Deserialize<'de> for GroupValues {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries(PhantomData<GroupValues>);
        impl<'de> serde::de::Visitor<'de> for Entries {
            type Value = GroupValues;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping from node name to a list of replica counts")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<GroupValues, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(GroupValues(entries))
            }
        }
        deserializer.deserialize_map(Entries(PhantomData))
    }
}

type Names = Spanned<Vec<Spanned<String>>>;

/// `implementation:` under `sweep:`, as written.
#[derive(Debug)]
pub(in crate::scenario) enum ImplValues {
    Every(Vec<Spanned<String>>),
    PerGroup(Vec<(Spanned<String>, Names)>),
}

impl<'de> Deserialize<'de> for ImplValues {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit(PhantomData<ImplValues>);
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = ImplValues;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a list of implementations ([lnd, cln, eclair, ldk]) or a mapping from \
                     node name to such a list",
                )
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<ImplValues, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = seq.next_element()? {
                    out.push(v);
                }
                Ok(ImplValues::Every(out))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<ImplValues, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    out.push(entry);
                }
                Ok(ImplValues::PerGroup(out))
            }
        }
        deserializer.deserialize_any(Visit(PhantomData))
    }
}
