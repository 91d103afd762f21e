//! `workload: recipients:` (a `kind: stream` load) as written.

use serde::Deserialize;
use serde_saphyr::Spanned;

/// One entry of `recipients:`: `{ node: host, split: 50 }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::scenario) struct RawRecipient {
    pub node: Spanned<String>,
    pub split: Spanned<u64>,
}
