//! `workload: rebalance:` as written.

use serde::Deserialize;
use serde_saphyr::Spanned;

/// `rebalance:` under `workload:`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::scenario) struct RawRebalance {
    pub node: Spanned<String>,
    pub first_hop: Spanned<String>,
    pub last_hop: Spanned<String>,
    pub amount_sat: Spanned<u64>,
    pub every: Spanned<String>,
    #[serde(default)]
    pub below_sat: Option<Spanned<u64>>,
    #[serde(default)]
    pub max_fee_ppm: Option<Spanned<u32>>,
}
