//! `workload:` as written: the load and its sections.

use super::activity::RawActivity;
use super::attack::RawAttack;
use super::rebalance::RawRebalance;
use super::stream::RawRecipient;
use serde::Deserialize;
use serde_saphyr::Spanned;

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(in crate::scenario) enum RawPaymentKind {
    Keysend,
    Invoice,
    InvoicePregenerated,
    /// Podcast streaming: keysends split across `recipients:` (stream.rs).
    Stream,
}

impl RawPaymentKind {
    /// The kind as the validated scenario names it.
    pub fn kind(self) -> crate::scenario::PaymentKind {
        match self {
            RawPaymentKind::Keysend => crate::scenario::PaymentKind::Keysend,
            RawPaymentKind::Invoice => crate::scenario::PaymentKind::Invoice,
            RawPaymentKind::InvoicePregenerated => {
                crate::scenario::PaymentKind::InvoicePregenerated
            }
            RawPaymentKind::Stream => crate::scenario::PaymentKind::Stream,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::scenario) struct RawWorkload {
    pub kind: Spanned<RawPaymentKind>,
    /// Absent (empty, at an unknown location) only with `activity:`.
    #[serde(default = "unset")]
    pub senders: Spanned<Vec<Spanned<String>>>,
    #[serde(default = "unset")]
    pub receiver: Spanned<String>,
    /// `kind: stream`: who shares each tick, by weight.
    #[serde(default)]
    pub recipients: Option<Spanned<Vec<Spanned<RawRecipient>>>>,
    /// Payments across the network: random peers instead of senders and a receiver.
    #[serde(default)]
    pub activity: Option<Spanned<RawActivity>>,
    #[serde(default)]
    pub amount_msat: Option<Spanned<u64>>,
    #[serde(default)]
    pub concurrency: Option<Spanned<u32>>,
    #[serde(default)]
    pub rate: Option<Spanned<RawRate>>,
    pub stop: Spanned<RawStop>,
    #[serde(default)]
    pub payment_timeout: Option<Spanned<String>>,
    /// Invoice payments: the most parts the sender may split one into (`parts.rs`).
    #[serde(default)]
    pub max_parts: Option<Spanned<u32>>,
    /// Jamming under load: an attacker holding HTLC slots on the honest route (`attack.rs`).
    #[serde(default)]
    pub attack: Option<Spanned<RawAttack>>,
    /// Circular rebalancing during the load (`rebalance.rs`).
    #[serde(default)]
    pub rebalance: Option<Spanned<RawRebalance>>,
}

/// Open-loop phases; they always run in this order, whatever the order in the file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::scenario) struct RawRate {
    #[serde(default)]
    pub warm_up: Option<Spanned<RawSteady>>,
    #[serde(default)]
    pub ramp: Option<Spanned<RawRamp>>,
    #[serde(default)]
    pub hold: Option<Spanned<RawSteady>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::scenario) struct RawSteady {
    pub rate: Spanned<f64>,
    pub duration: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::scenario) struct RawRamp {
    pub from: Spanned<f64>,
    pub to: Spanned<f64>,
    pub duration: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::scenario) struct RawStop {
    #[serde(default)]
    pub payments: Option<Spanned<u64>>,
    #[serde(default)]
    pub duration: Option<Spanned<String>>,
    /// Draining channels: stop after this many payments failed for lack of liquidity.
    #[serde(default)]
    pub liquidity_failures: Option<Spanned<u64>>,
}
/// A field left out: empty, at an unknown location.
fn unset<T: Default>() -> Spanned<T> {
    use serde_saphyr::Location;
    Spanned::new(T::default(), Location::UNKNOWN, Location::UNKNOWN)
}
