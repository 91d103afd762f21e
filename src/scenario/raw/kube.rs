//! `kubernetes:` as written.

use serde::Deserialize;
use serde_saphyr::Spanned;
use std::collections::BTreeMap;

/// `kubernetes:` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::scenario) struct RawKubernetes {
    /// The kubeconfig context (else the kubeconfig's current one).
    #[serde(default)]
    pub context: Option<Spanned<String>>,
    /// `spread` (each node's pod preferably on a cluster node of its own) or `any`.
    #[serde(default)]
    pub placement: Option<Spanned<String>>,
    /// Nodes (or groups) pinned to a cluster node: `{ alice: worker-1 }`.
    #[serde(default)]
    pub pin: Option<Spanned<BTreeMap<String, Spanned<String>>>>,
}
