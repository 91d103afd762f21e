//! How a multi-part payment was split, as the paying node tells it.

use super::PaymentOutcome;

/// The HTLCs of one payment: those that settled it (its parts) and every one the
/// node tried (parts, and attempts that failed and were retried).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parts {
    pub settled: u32,
    pub attempts: u32,
}

/// A payment's outcome and, where the client reads it, how it was split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    pub outcome: PaymentOutcome,
    pub parts: Option<Parts>,
}
