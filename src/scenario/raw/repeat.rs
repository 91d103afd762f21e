//! `repeat:` as written.

use serde::Deserialize;
use serde_saphyr::{Location, Spanned};
use std::fmt;
use std::marker::PhantomData;

/// `thresholds:` under `repeat:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Judge {
    /// Every repeat must pass (a noisy repeat fails the run).
    Each,
    /// The median of each figure across the repeats must pass.
    Median,
}

/// `repeat: N` or `repeat: { count: N, ... }`, as written.
#[derive(Debug)]
pub(in crate::scenario) struct RawRepeat {
    pub(in crate::scenario) count: Spanned<u32>,
    pub(in crate::scenario) settle: Option<Spanned<String>>,
    pub(in crate::scenario) fresh_network: Option<bool>,
    pub(in crate::scenario) thresholds: Option<Spanned<Judge>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRepeatMap {
    count: Spanned<u32>,
    #[serde(default)]
    settle: Option<Spanned<String>>,
    #[serde(default)]
    fresh_network: Option<bool>,
    #[serde(default)]
    thresholds: Option<Spanned<Judge>>,
}

impl<'de> Deserialize<'de> for RawRepeat {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit(PhantomData<RawRepeat>);
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = RawRepeat;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a count (repeat: 5) or { count: 5, settle: 10s, fresh_network: false, thresholds: median }")
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<RawRepeat, E> {
                let count = u32::try_from(n).map_err(|_| E::custom("repeat count is too large"))?;
                Ok(RawRepeat {
                    // Located by the caller's `Spanned<RawRepeat>`.
                    count: Spanned::new(count, Location::UNKNOWN, Location::UNKNOWN),
                    settle: None,
                    fresh_network: None,
                    thresholds: None,
                })
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<RawRepeat, E> {
                let n = u64::try_from(n).map_err(|_| E::custom("repeat count is negative"))?;
                self.visit_u64(n)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<RawRepeat, A::Error> {
                let m =
                    RawRepeatMap::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(RawRepeat {
                    count: m.count,
                    settle: m.settle,
                    fresh_network: m.fresh_network,
                    thresholds: m.thresholds,
                })
            }
        }
        deserializer.deserialize_any(Visit(PhantomData))
    }
}
