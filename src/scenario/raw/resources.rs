//! `resources:` as written.

use serde::Deserialize;
use serde_saphyr::Spanned;
use std::fmt;

/// `resources:` at the top level.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::scenario) struct RawResources {
    #[serde(default)]
    pub(in crate::scenario) nodes: Option<Spanned<RawEnvelope>>,
    #[serde(default)]
    pub(in crate::scenario) chain: Option<Spanned<RawEnvelope>>,
    #[serde(default)]
    pub(in crate::scenario) databases: Option<Spanned<RawEnvelope>>,
}

/// One envelope as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawEnvelope {
    #[serde(default)]
    pub(in crate::scenario) cpus: Option<Spanned<f64>>,
    #[serde(default)]
    pub(in crate::scenario) memory: Option<Spanned<Text>>,
    #[serde(default)]
    pub(in crate::scenario) cpuset: Option<Spanned<Text>>,
}

/// A value written as a word or a number (`cpuset: 1`, `memory: 1073741824`).
#[derive(Debug)]
pub(crate) struct Text(pub(in crate::scenario) String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl serde::de::Visitor<'_> for Visit {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a word or a number, e.g. 2GiB or \"0-1\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Text, E> {
                Ok(Text(v.trim().to_string()))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
        }
        deserializer.deserialize_any(Visit)
    }
}
