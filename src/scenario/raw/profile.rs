//! `profile:` as written.

use super::after_load::RawRestart;
use serde::Deserialize;
use serde_saphyr::Spanned;

/// `profile:`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::scenario) struct RawProfile {
    #[serde(default)]
    pub nodes: Option<Spanned<RawRestart>>,
    #[serde(default)]
    pub start: Option<Spanned<String>>,
    #[serde(default)]
    pub duration: Option<Spanned<String>>,
}
