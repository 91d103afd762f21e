//! Load controls shared by the controller, the dispatcher and the workers.
//!
//! Workers read plain atomics on every payment; the watch channel only wakes those
//! that wait (paused, or above the concurrency limit) when something changed.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// The operator's commands, from the TUI or elsewhere.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Command {
    /// No new payments start; in-flight ones finish. Paused time is not load time.
    Pause,
    Resume,
    /// Closed loop: the number of workers paying.
    SetConcurrency(u32),
    /// Open loop: a constant rate (payments/s) from now on, replacing the phases.
    SetRate(f64),
    /// End the run as if its stop condition was met.
    Stop,
}

#[derive(Debug)]
pub(super) struct Control {
    paused: AtomicBool,
    concurrency: AtomicU32,
    /// f64 bits of a rate set by hand; NaN when none.
    rate_override: AtomicU64,
    /// Completed pauses, nanoseconds: open-loop tickets shift by pauses since release.
    completed_pause_ns: AtomicU64,
    paused_since: std::sync::Mutex<Option<Instant>>,
    changes: watch::Sender<u64>,
}

impl Control {
    pub(super) fn new(concurrency: u32) -> Self {
        Control {
            paused: AtomicBool::new(false),
            concurrency: AtomicU32::new(concurrency),
            rate_override: AtomicU64::new(f64::NAN.to_bits()),
            completed_pause_ns: AtomicU64::new(0),
            paused_since: std::sync::Mutex::new(None),
            changes: watch::Sender::new(0),
        }
    }

    /// Whether worker `id` must wait before starting a payment.
    pub(super) fn must_wait(&self, id: u32) -> bool {
        self.paused.load(Ordering::Acquire) || id >= self.concurrency.load(Ordering::Acquire)
    }

    pub(super) fn is_paused(&self) -> bool {
        self.paused.load(Ordering::Acquire)
    }

    /// A receiver that sees every change made after this call.
    pub(super) fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    fn changed(&self) {
        self.changes.send_modify(|generation| *generation += 1);
    }

    /// Returns whether the state changed.
    pub(super) fn set_paused(&self, paused: bool) -> bool {
        let now = Instant::now();
        let mut since = self.paused_since.lock().unwrap_or_else(|e| e.into_inner());
        match (paused, *since) {
            (true, None) => *since = Some(now),
            (false, Some(start)) => {
                let ns = u64::try_from((now - start).as_nanos()).unwrap_or(u64::MAX);
                self.completed_pause_ns.fetch_add(ns, Ordering::AcqRel);
                *since = None;
            }
            _ => return false,
        }
        self.paused.store(paused, Ordering::Release);
        drop(since);
        self.changed();
        true
    }

    pub(super) fn completed_pause(&self) -> Duration {
        Duration::from_nanos(self.completed_pause_ns.load(Ordering::Acquire))
    }

    pub(super) fn concurrency(&self) -> u32 {
        self.concurrency.load(Ordering::Acquire)
    }

    pub(super) fn set_concurrency(&self, n: u32) {
        self.concurrency.store(n, Ordering::Release);
        self.changed();
    }

    pub(super) fn set_rate(&self, rate: f64) {
        self.rate_override.store(rate.to_bits(), Ordering::Release);
        self.changed();
    }

    /// The rate set by hand, if any.
    pub(super) fn rate_override(&self) -> Option<f64> {
        let rate = f64::from_bits(self.rate_override.load(Ordering::Acquire));
        (!rate.is_nan()).then_some(rate)
    }
}
