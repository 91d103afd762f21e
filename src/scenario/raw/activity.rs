//! `workload: activity:` as written.

use super::super::dist::RawDist;
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::fmt;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::scenario) struct RawActivity {
    /// `all` (the default) or a share of the nodes, e.g. 0.5.
    #[serde(default)]
    pub senders: Option<Spanned<RawShare>>,
    #[serde(default)]
    pub amount_msat: Option<Spanned<RawDist>>,
    /// Picks the senders, each payment's peer and amount.
    #[serde(default)]
    pub seed: Option<u64>,
}

/// `all`, or a number between 0 and 1.
#[derive(Debug)]
pub(in crate::scenario) enum RawShare {
    All,
    Word(String),
    Share(f64),
}

impl<'de> Deserialize<'de> for RawShare {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ShareVisitor;

        impl<'de> serde::de::Visitor<'de> for ShareVisitor {
            type Value = RawShare;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("all, or a share of the nodes such as 0.5")
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawShare, E> {
                Ok(match v.trim() {
                    "all" => RawShare::All,
                    other => RawShare::Word(other.to_string()),
                })
            }

            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<RawShare, E> {
                Ok(RawShare::Share(v))
            }

            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<RawShare, E> {
                Ok(RawShare::Share(v as f64))
            }
        }

        deserializer.deserialize_any(ShareVisitor)
    }
}
