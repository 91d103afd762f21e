//! `history:` as written.

use serde::Deserialize;
use serde_saphyr::Spanned;

/// `history:`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::scenario) struct RawHistory {
    /// Absent only when `sweep: { history: [...] }` gives each point's.
    #[serde(default)]
    pub payments: Option<Spanned<u64>>,
    #[serde(default)]
    pub concurrency: Option<Spanned<u32>>,
    #[serde(default)]
    pub within: Option<Spanned<String>>,
}
