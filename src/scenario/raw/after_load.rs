//! `after_load:` as written, and the list of nodes it and `profile:` name.

use serde::Deserialize;
use serde_saphyr::Spanned;
use std::fmt;

/// `after_load:`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::scenario) struct RawAfterLoad {
    #[serde(default)]
    pub restart: Option<Spanned<RawRestart>>,
}

/// `restart: all`, or a list of node names (groups under `nodes:`).
#[derive(Debug)]
pub(in crate::scenario) enum RawRestart {
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
