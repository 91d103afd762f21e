//! The worker side of the recorder: each worker batches its results without a lock
//! and merges them into the shared state when the batch is full, on `flush`, or on drop.

use super::{BATCH, FailureKind, Recorder, Stage, histogram, phase_slot};
use crate::metrics::PaymentRow;
use std::time::Duration;
use tokio::time::Instant;

/// One worker's unmerged results. Owned by the worker: recording takes no lock.
#[derive(Debug)]
pub struct WorkerRecorder {
    recorder: Recorder,
    /// Latencies of successes, µs (u32 holds 71 minutes, beyond the histogram range).
    latencies_us: Vec<u32>,
    failures: [u32; FailureKind::COUNT],
    pending_failures: u32,
    indeterminate: u32,
    warm_up: u32,
    /// The measured phase the pending results belong to (see [`phase_slot`]).
    phase: Option<u8>,
    /// The pending results' rows for `payments.csv`; `None` when the run keeps none.
    payments: Option<Vec<PaymentRow>>,
    /// The recorder's clock start, which the rows' times count from.
    started: Instant,
}

impl WorkerRecorder {
    /// The stage the next results belong to: the phase their payments were
    /// scheduled in. Merges the batch first when the phase changes, so each batch
    /// holds one phase.
    pub fn set_stage(&mut self, stage: Stage) {
        let slot = phase_slot(stage);
        if slot != self.phase {
            self.flush();
            self.phase = slot;
        }
    }

    pub fn success(&mut self, latency: Duration) {
        let us = u32::try_from(latency.as_micros()).unwrap_or(u32::MAX);
        self.latencies_us.push(us);
        self.flush_if_full();
    }

    pub fn failure(&mut self, kind: FailureKind) {
        self.failures[kind.index()] += 1;
        self.pending_failures += 1;
        self.flush_if_full();
    }

    /// Whether the run keeps a row per payment ([`WorkerRecorder::payment`]).
    pub fn logs_payments(&self) -> bool {
        self.payments.is_some()
    }

    /// Seconds from the recorder's clock start to `t` (0 for an earlier `t`).
    pub fn seconds_at(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.started).as_secs_f64()
    }

    /// A payment's row for `payments.csv`, beside its [`success`](Self::success) or
    /// [`failure`](Self::failure); dropped when the run keeps no payment log.
    pub fn payment(&mut self, row: PaymentRow) {
        if let Some(rows) = self.payments.as_mut() {
            rows.push(row);
        }
    }

    /// A payment whose fate the tool does not know (it timed out, or the load ended
    /// while it was in flight): neither a success nor a failure until reconciled.
    pub fn indeterminate(&mut self) {
        self.indeterminate += 1;
        self.flush_if_full();
    }

    /// A warm-up payment finished (whatever its result): counted apart.
    pub fn warm_up(&mut self) {
        self.warm_up += 1;
        self.flush_if_full();
    }

    fn pending(&self) -> usize {
        self.latencies_us.len()
            + self.pending_failures as usize
            + self.indeterminate as usize
            + self.warm_up as usize
    }

    fn flush_if_full(&mut self) {
        if self.pending() >= BATCH {
            self.flush();
        }
    }

    /// Merges the batch into the shared recorder (call before waiting on anything).
    pub fn flush(&mut self) {
        if self.pending() > 0 || self.payments.as_ref().is_some_and(|p| !p.is_empty()) {
            let recorder = self.recorder.clone();
            recorder.merge(self);
        }
    }
}

impl Drop for WorkerRecorder {
    fn drop(&mut self) {
        self.flush();
    }
}

impl WorkerRecorder {
    pub(super) fn new(recorder: Recorder) -> Self {
        let (started, logs_payments) = {
            let state = recorder.state();
            (state.started, state.payment_log.is_some())
        };
        WorkerRecorder {
            recorder,
            payments: logs_payments.then(|| Vec::with_capacity(BATCH)),
            started,
            latencies_us: Vec::with_capacity(BATCH),
            failures: [0; FailureKind::COUNT],
            pending_failures: 0,
            indeterminate: 0,
            warm_up: 0,
            phase: None,
        }
    }
}

impl Recorder {
    /// Adds a worker's batch to the shared figures and empties it.
    fn merge(&self, batch: &mut WorkerRecorder) {
        let mut state = self.state();
        for &us in &batch.latencies_us {
            state.interval.saturating_record(u64::from(us).max(1));
        }
        let ok = batch.latencies_us.len() as u64;
        let failed = u64::from(batch.pending_failures);
        state.interval_ok += ok;
        state.ok += ok;
        state.interval_failed += failed;
        state.failed += failed;
        state.warm_up += u64::from(batch.warm_up);
        state.indeterminate += u64::from(std::mem::take(&mut batch.indeterminate));
        if let Some(x) = &state.export {
            x.record_batch(&batch.latencies_us, &batch.failures, batch.warm_up);
        }
        for (total, n) in state.failures.iter_mut().zip(batch.failures.iter_mut()) {
            *total += u64::from(std::mem::take(n));
        }
        if let Some(slot) = batch.phase {
            let phase = &mut state.phases[slot as usize];
            if !batch.latencies_us.is_empty() {
                let h = phase.histogram.get_or_insert_with(histogram);
                for &us in &batch.latencies_us {
                    h.saturating_record(u64::from(us).max(1));
                }
            }
            phase.ok += ok;
            phase.failed += failed;
        }
        if let Some(rows) = batch.payments.as_mut().filter(|r| !r.is_empty()) {
            if let Some(log) = state.payment_log.as_mut() {
                log.append(rows);
            }
            rows.clear();
        }
        batch.latencies_us.clear();
        batch.pending_failures = 0;
        batch.warm_up = 0;
    }
}
