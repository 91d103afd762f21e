//! `links:`, `faults:` and `mining:` as written.

use serde::Deserialize;
use serde_saphyr::Spanned;

/// One entry of `links:`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::scenario) struct RawLink {
    pub between: Spanned<Vec<Spanned<String>>>,
    #[serde(default)]
    pub latency: Option<Spanned<String>>,
    #[serde(default)]
    pub jitter: Option<Spanned<String>>,
    #[serde(default)]
    pub bandwidth: Option<Spanned<u64>>,
}

/// One entry of `faults:`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::scenario) struct RawFault {
    #[serde(default)]
    pub at: Option<Spanned<String>>,
    #[serde(default)]
    pub after_payments: Option<Spanned<u64>>,
    #[serde(default)]
    pub kill: Option<Spanned<String>>,
    #[serde(default)]
    pub restart_after: Option<Spanned<String>>,
    #[serde(default)]
    pub restart: Option<Spanned<String>>,
    #[serde(default)]
    pub pause: Option<Spanned<String>>,
    #[serde(default)]
    pub link: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    pub latency: Option<Spanned<String>>,
    #[serde(default)]
    pub jitter: Option<Spanned<String>>,
    #[serde(default)]
    pub bandwidth: Option<Spanned<u64>>,
    #[serde(default)]
    pub down: Option<Spanned<bool>>,
    #[serde(default)]
    pub reset: Option<Spanned<bool>>,
    #[serde(default)]
    pub mine: Option<Spanned<u32>>,
    /// `stop` or `resume` (the background mining of `mining:`).
    #[serde(default)]
    pub mining: Option<Spanned<String>>,
    #[serde(default, rename = "for")]
    pub for_: Option<Spanned<String>>,
}

/// `mining: { every: 10s }`: background mining during the load.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::scenario) struct RawMining {
    pub every: Spanned<String>,
}
