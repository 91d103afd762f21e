//! `workload: attack:` as written.

use serde::Deserialize;
use serde_saphyr::Spanned;

/// `attack:` under `workload:`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::scenario) struct RawAttack {
    pub attacker: Spanned<String>,
    pub accomplice: Spanned<String>,
    #[serde(default)]
    pub slots: Option<Spanned<u32>>,
    #[serde(default)]
    pub share: Option<Spanned<f64>>,
    #[serde(default)]
    pub amount_msat: Option<Spanned<u64>>,
    pub hold: Spanned<String>,
    #[serde(default)]
    pub start: Option<Spanned<String>>,
    #[serde(rename = "for")]
    pub duration: Spanned<String>,
}
