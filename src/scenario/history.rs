//! `history:`: before the measured load, the network is made to have paid this many
//! payments, unmeasured, as fast as the nodes take them, so that a load runs against
//! a node with that history (a database that grew with it).
//!
//! ```yaml
//! history:
//!   payments: 10000     # paid on this network before the measured load starts
//!   concurrency: 10     # payments in flight during the history phase (default 10)
//!   within: 1h          # the phase fails if it has not paid them by then (default 2h)
//! sweep:
//!   history: [0, 10000, 50000]   # a ladder: one point per step, on one network
//! ```
//!
//! The count is of the payments the tool made on the network: in this run (history
//! phases and the measured loads before), and, for a network restored from a
//! snapshot, those its manifest says were made before it was saved. So a ladder's step
//! tops up from the one before it, and a snapshot saved with `history:` hands its
//! history on. The phase pays like the workload (its kind, senders, receivers and
//! amount), in a closed loop.

use super::error::Ctx;
use super::error::ScenarioError;
use super::raw::RawHistory;
use super::raw::RawScenario;
use super::{Capabilities, PaymentKind, duration};
use serde_saphyr::Spanned;
use std::time::Duration;

/// More history than this is days of load on this kind of machine: a mistake.
pub const MAX_PAYMENTS: u64 = 10_000_000;
const DEFAULT_CONCURRENCY: u32 = 10;
const DEFAULT_WITHIN: Duration = Duration::from_secs(2 * 3600);
const MAX_WITHIN: Duration = Duration::from_secs(7 * 24 * 3600);

/// `history:`, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    /// Payments the network has made (paid, as the tool counted them) when the
    /// measured load starts.
    pub payments: u64,
    /// Payments in flight during the phase.
    pub concurrency: u32,
    /// How long the phase may take.
    pub within: Duration,
}

/// `history:` checked against the rest of the file; None without it.
pub(super) fn validate(
    ctx: &Ctx,
    raw: &RawScenario,
    runtime: &Capabilities,
    kind: PaymentKind,
) -> Result<Option<History>, ScenarioError> {
    let Some(h) = &raw.history else {
        return Ok(None);
    };
    let at = &h.referenced;
    let refuse = |why: &str, hint: &str| Err(ctx.error(at, format!("history: {why}"), hint));
    if !runtime.starts_nodes {
        return refuse(
            "is not run on external nodes (it pays unmeasured payments, possibly on mainnet)",
            "remove history:, or run the scenario on a network the tool starts",
        );
    }
    if kind == PaymentKind::Stream || raw.workload.value.activity.is_some() {
        return refuse(
            "pays like the workload, and a stream or activity: workload has no single payment to repeat",
            "use history: with a keysend or invoice workload",
        );
    }
    if raw.workload.value.attack.is_some() {
        return refuse(
            "cannot run beside an attack (the attack holds slots the history would need)",
            "remove history: or workload: attack:",
        );
    }
    let v = &h.value;
    let Some(payments) = &v.payments else {
        return refuse(
            "says no payments:",
            "write history: { payments: 10000 }, or a ladder under sweep: (history: [0, 10000, 50000])",
        );
    };
    if payments.value > MAX_PAYMENTS {
        return Err(ctx.error(
            &payments.referenced,
            format!(
                "history payments is {}, more than {MAX_PAYMENTS}",
                payments.value
            ),
            format!("write payments: {MAX_PAYMENTS} or fewer"),
        ));
    }
    let concurrency = match &v.concurrency {
        None => DEFAULT_CONCURRENCY,
        Some(c) if c.value == 0 || c.value > super::workload::MAX_CONCURRENCY => {
            return Err(ctx.error(
                &c.referenced,
                format!("history concurrency is {}", c.value),
                format!(
                    "write concurrency: 1 to {} (payments in flight during the history phase)",
                    super::workload::MAX_CONCURRENCY
                ),
            ));
        }
        Some(c) => c.value,
    };
    let within = match &v.within {
        None => DEFAULT_WITHIN,
        Some(text) => duration::parse(
            ctx,
            text,
            &duration::Rule {
                name: "history within",
                hint: "write how long the history phase may take, e.g. within: 2h",
                zero: Some("write how long the history phase may take, e.g. within: 2h"),
                max: Some(duration::Max {
                    limit: MAX_WITHIN,
                    says: "is longer than 7 days",
                    hint: "write within: 7days or less",
                }),
            },
        )?,
    };
    Ok(Some(History {
        payments: payments.value,
        concurrency,
        within,
    }))
}

/// Puts a ladder step's count into the file's `history:` (made with the defaults
/// when the file has none), located at the sweep value.
pub(super) fn set_payments(raw: &mut RawScenario, payments: u64, at: serde_saphyr::Location) {
    let value = Some(Spanned::new(payments, at, at));
    match &mut raw.history {
        Some(h) => h.value.payments = value,
        None => {
            let history = RawHistory {
                payments: value,
                concurrency: None,
                within: None,
            };
            raw.history = Some(Spanned::new(history, at, at));
        }
    }
}
