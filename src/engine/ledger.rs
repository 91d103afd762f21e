//! Mainnet caps at run time: what a run may spend (`runtime: external` with
//! `allow_mainnet: true`), counted payment by payment.
//!
//! Before a payment starts its amount and the most it may pay in routing fees are
//! reserved against `max_total_msat`; when they would not fit, the payment is refused
//! and the load stops. After it, the reservation becomes what it cost: the amount plus
//! the fee the node reported when it succeeded, nothing when the node said it failed,
//! and the whole reservation when the outcome is not known (timed out, abandoned, an
//! RPC error: the node may still complete it). One ledger serves every worker, the
//! warm-up, and every point and repeat of a run, so the total holds across them.
//!
//! `max_payment_msat` caps one payment's amount plus its fee: an amount above it (an
//! activity sample) is clamped to it, and the fee limit the node is given is what the
//! cap leaves above the amount (and never more than the total has left).

use std::sync::Mutex;

/// What a run spent under the caps, and what the caps changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spent {
    /// Amounts plus reported fees of the payments that succeeded.
    pub paid_msat: u64,
    /// Reservations kept whole: payments whose outcome is not known.
    pub unknown_msat: u64,
    /// Reservations of payments in flight.
    pub reserved_msat: u64,
    /// Payments refused because they would have crossed `max_total_msat`.
    pub refused: u64,
    /// Amounts lowered to `max_payment_msat`.
    pub clamped: u64,
}

impl Spent {
    /// Everything counted against `max_total_msat`.
    pub fn committed_msat(&self) -> u64 {
        (self.paid_msat)
            .saturating_add(self.unknown_msat)
            .saturating_add(self.reserved_msat)
    }
}

/// The run's spend under mainnet caps; shared by every load of the run.
#[derive(Debug)]
pub struct SpendLedger {
    max_payment_msat: u64,
    max_total_msat: u64,
    spent: Mutex<Spent>,
}

/// One payment's reservation: its amount and the fee limit the node is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "a reservation is settled once the payment ends"]
pub struct Reservation {
    pub amount_msat: u64,
    pub max_fee_msat: u64,
}

/// How a reserved payment ended, as far as money goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// The node reports it paid, with this routing fee.
    Paid { fee_msat: u64 },
    /// The node reports it failed: nothing was spent.
    Failed,
    /// Not known (timed out, abandoned, an RPC error): it may still be paid.
    Unknown,
}

impl SpendLedger {
    pub fn new(max_payment_msat: u64, max_total_msat: u64) -> SpendLedger {
        SpendLedger {
            max_payment_msat,
            max_total_msat,
            spent: Mutex::new(Spent::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Spent> {
        self.spent.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `amount_msat`, lowered to `max_payment_msat` if above it (counted).
    pub fn clamp(&self, amount_msat: u64) -> u64 {
        if amount_msat <= self.max_payment_msat {
            return amount_msat;
        }
        self.lock().clamped += 1;
        self.max_payment_msat
    }

    /// Reserves a payment of `amount_msat` with the fee limit the caps leave (the
    /// driver lowers it further to its own default); None (counted as refused) when
    /// the amount alone does not fit in what the total has left, or is above
    /// `max_payment_msat`.
    pub fn reserve(&self, amount_msat: u64) -> Option<Reservation> {
        let mut spent = self.lock();
        let left = self.max_total_msat.saturating_sub(spent.committed_msat());
        if amount_msat > left || amount_msat > self.max_payment_msat {
            spent.refused += 1;
            return None;
        }
        let max_fee_msat = (self.max_payment_msat - amount_msat).min(left - amount_msat);
        spent.reserved_msat += amount_msat + max_fee_msat;
        Some(Reservation {
            amount_msat,
            max_fee_msat,
        })
    }

    /// Turns a reservation into what the payment cost.
    pub fn settle(&self, reservation: Reservation, settled: Settled) {
        let held = reservation.amount_msat + reservation.max_fee_msat;
        let mut spent = self.lock();
        spent.reserved_msat = spent.reserved_msat.saturating_sub(held);
        match settled {
            Settled::Paid { fee_msat } => {
                let cost = reservation.amount_msat.saturating_add(fee_msat);
                spent.paid_msat = spent.paid_msat.saturating_add(cost);
            }
            Settled::Failed => {}
            Settled::Unknown => spent.unknown_msat = spent.unknown_msat.saturating_add(held),
        }
    }

    /// What was spent, reserved, refused and clamped so far.
    pub fn spent(&self) -> Spent {
        *self.lock()
    }

    pub fn max_total_msat(&self) -> u64 {
        self.max_total_msat
    }

    pub fn max_payment_msat(&self) -> u64 {
        self.max_payment_msat
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payment_is_refused_once_its_amount_would_cross_the_total() {
        let ledger = SpendLedger::new(1_000, 2_500);
        for _ in 0..2 {
            let r = ledger.reserve(1_000).expect("fits");
            ledger.settle(r, Settled::Paid { fee_msat: 0 });
        }
        assert_eq!(ledger.reserve(1_000), None);
        let spent = ledger.spent();
        assert_eq!((spent.paid_msat, spent.refused), (2_000, 1));
        // A smaller one still fits, with the fee limit the total leaves.
        let r = ledger.reserve(400).expect("fits");
        assert_eq!(r.max_fee_msat, 100);
    }

    #[test]
    fn the_fee_limit_is_what_the_caps_leave_above_the_amount() {
        let ledger = SpendLedger::new(1_500, 10_000);
        assert_eq!(ledger.reserve(1_000).unwrap().max_fee_msat, 500);
        assert_eq!(ledger.reserve(1_500).unwrap().max_fee_msat, 0);
        // Near the total, the fee limit is what the total has left.
        let ledger = SpendLedger::new(1_500, 1_200);
        assert_eq!(ledger.reserve(1_000).unwrap().max_fee_msat, 200);
    }

    #[test]
    fn a_reservation_settles_to_amount_plus_reported_fee() {
        let ledger = SpendLedger::new(2_000, 100_000);
        let r = ledger.reserve(1_000).unwrap();
        assert_eq!(ledger.spent().reserved_msat, 2_000);
        ledger.settle(r, Settled::Paid { fee_msat: 3 });
        let spent = ledger.spent();
        assert_eq!((spent.paid_msat, spent.reserved_msat), (1_003, 0));
    }

    #[test]
    fn a_failed_payment_frees_its_reservation_an_unknown_one_keeps_it() {
        let ledger = SpendLedger::new(1_500, 100_000);
        let failed = ledger.reserve(1_000).unwrap();
        ledger.settle(failed, Settled::Failed);
        assert_eq!(ledger.spent().committed_msat(), 0);
        let unknown = ledger.reserve(1_000).unwrap();
        ledger.settle(unknown, Settled::Unknown);
        let spent = ledger.spent();
        assert_eq!((spent.unknown_msat, spent.committed_msat()), (1_500, 1_500));
    }

    #[test]
    fn payments_in_flight_count_against_the_total() {
        let ledger = SpendLedger::new(1_000, 2_000);
        let a = ledger.reserve(1_000).unwrap();
        let b = ledger.reserve(1_000).unwrap();
        assert_eq!(ledger.reserve(1), None, "both in flight fill the total");
        ledger.settle(a, Settled::Failed);
        assert!(ledger.reserve(1_000).is_some());
        ledger.settle(b, Settled::Unknown);
    }

    #[test]
    fn amounts_above_the_payment_cap_are_clamped_and_counted() {
        let ledger = SpendLedger::new(1_000, 1_000_000);
        assert_eq!(ledger.clamp(999), 999);
        assert_eq!(ledger.clamp(1_000), 1_000);
        assert_eq!(ledger.clamp(5_000_000), 1_000);
        assert_eq!(ledger.spent().clamped, 1);
        assert_eq!(ledger.reserve(1_001), None);
    }
}
