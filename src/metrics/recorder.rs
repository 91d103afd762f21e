//! The shared recorder and the per-worker batch that feeds it.

use super::FailureKind;
use super::events::{EventKind, EventLog, MAX_EVENTS, RunEvent};
use super::hlog::IntervalLog;
use super::payments::PaymentLog;
use super::process::ProcessStats;
use super::series::{MAX_SERIES_POINTS, Series, SeriesPoint};
use super::snapshot::{LoadSetting, Percentiles, PhaseSummary, Snapshot, Stage, Summary};
use hdrhistogram::Histogram;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::watch;
use tokio::time::Instant;

mod worker;
pub use worker::WorkerRecorder;

/// Highest latency the histograms hold: 10 minutes in µs; longer values are clamped.
const HIGHEST_US: u64 = 600_000_000;
const SIGNIFICANT_DIGITS: u8 = 3;
/// A worker merges its batch after this many results (or before it waits).
const BATCH: usize = 1024;

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_US, SIGNIFICANT_DIGITS)
        .expect("constant histogram bounds are valid")
}

/// The measured open-loop phases, each with its own figures: its slot in
/// `State::phases`. Other stages have none (warm-up is not measured).
fn phase_slot(stage: Stage) -> Option<u8> {
    match stage {
        Stage::Ramp => Some(0),
        Stage::Hold => Some(1),
        _ => None,
    }
}
const PHASE_STAGES: [Stage; 2] = [Stage::Ramp, Stage::Hold];

/// One phase's own counts, latency and active time.
#[derive(Debug, Default)]
struct PhaseStats {
    /// When the phase first started (for the order phases are listed in).
    started: Option<Instant>,
    ok: u64,
    failed: u64,
    active: Duration,
    /// Allocated when the phase gets its first success.
    histogram: Option<Histogram<u64>>,
}

/// Handle to the run's metrics; cheap to clone.
#[derive(Debug, Clone)]
pub struct Recorder {
    shared: Arc<Shared>,
}

/// A [`Recorder`] that does not keep the run's metrics alive (their followers end
/// when the last [`Recorder`] goes): see [`Recorder::downgrade`].
#[derive(Debug, Clone)]
pub struct WeakRecorder(std::sync::Weak<Shared>);

impl WeakRecorder {
    /// [`Recorder::summary_now`], while the recorder lives.
    pub fn summary_now(&self) -> Option<Summary> {
        let shared = self.0.upgrade()?;
        Some(Recorder { shared }.summary_now())
    }
}

/// See [`Recorder::events`].
#[derive(Debug, Clone)]
pub struct RecorderEvents {
    shared: std::sync::Weak<Shared>,
}

impl RecorderEvents {
    /// Records `kind` now, if the recorder still lives; when, on its clock.
    pub fn event(&self, kind: EventKind) -> Option<f64> {
        let shared = self.shared.upgrade()?;
        Some(Recorder { shared }.event(kind))
    }
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    snapshots: watch::Sender<Snapshot>,
}

#[derive(Debug)]
struct State {
    started: Instant,
    started_wall: SystemTime,
    cpu_at_start: Option<f64>,
    interval: Histogram<u64>,
    cumulative: Histogram<u64>,
    interval_ok: u64,
    interval_failed: u64,
    ok: u64,
    failed: u64,
    indeterminate: u64,
    warm_up: u64,
    dropped: u64,
    failures: [u64; FailureKind::COUNT],
    stage: Stage,
    load: LoadSetting,
    paused_since: Option<Instant>,
    /// Completed pauses.
    paused_total: Duration,
    last_tick: Instant,
    paused_at_last_tick: Duration,
    /// When the timed (counted) load began, and the pause total then.
    timed_start: Option<(Instant, Duration)>,
    series: Series,
    last_interval: Percentiles,
    events: EventLog,
    /// Faults in force (see [`Snapshot::faults`]).
    faults: Vec<String>,
    /// Where [`Snapshot::live`] is read from.
    live: super::live::LiveSources,
    /// Where each closing interval is appended, when the run keeps an `.hlog`.
    interval_log: Option<IntervalLog>,
    /// Where each merged batch's payments are appended, when the run keeps a
    /// `payments.csv`.
    payment_log: Option<PaymentLog>,
    phases: [PhaseStats; 2],
    /// The measured phase whose clock runs, since when, and the pause total then.
    /// Draining keeps the last phase's clock running, as the whole run's does.
    phase_clock: Option<(u8, Instant, Duration)>,
    /// `--metrics-listen`: each merged batch is counted there too.
    export: Option<super::export::Exporter>,
}

impl State {
    /// Stops the running phase clock (if any), adding its active time.
    fn stop_phase_clock(&mut self, now: Instant) {
        if let Some((slot, since, paused_then)) = self.phase_clock.take() {
            let paused = self.paused_at(now) - paused_then;
            self.phases[slot as usize].active += (now - since).saturating_sub(paused);
        }
    }

    fn phase_summaries(&self) -> Vec<PhaseSummary> {
        let mut seen: Vec<(Instant, usize)> = self
            .phases
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.started.map(|at| (at, i)))
            .collect();
        seen.sort();
        seen.into_iter()
            .map(|(_, i)| {
                let p = &self.phases[i];
                let active_s = p.active.as_secs_f64();
                PhaseSummary {
                    phase: PHASE_STAGES[i],
                    active_s,
                    ok: p.ok,
                    failed: p.failed,
                    tps_avg: if active_s > 0.0 {
                        p.ok as f64 / active_s
                    } else {
                        0.0
                    },
                    latency: p
                        .histogram
                        .as_ref()
                        .map(Percentiles::of)
                        .unwrap_or_default(),
                }
            })
            .collect()
    }

    fn paused_at(&self, now: Instant) -> Duration {
        self.paused_total + self.paused_since.map_or(Duration::ZERO, |s| now - s)
    }

    fn active_timed(&self, now: Instant) -> Duration {
        match self.timed_start {
            Some((start, paused_then)) => {
                (now - start).saturating_sub(self.paused_at(now) - paused_then)
            }
            None => Duration::ZERO,
        }
    }

    /// Closes the current interval into the series and the cumulative histogram.
    fn close_interval(&mut self, now: Instant) {
        let length = now - self.last_tick;
        let paused = self.paused_at(now) - self.paused_at_last_tick;
        let active_s = length.saturating_sub(paused).as_secs_f64();
        self.last_interval = Percentiles::of(&self.interval);
        let tps = if active_s > 0.0 {
            self.interval_ok as f64 / active_s
        } else {
            0.0
        };
        self.series.push(SeriesPoint {
            at_s: (now - self.started).as_secs_f64(),
            active_s,
            tps,
            ok: self.interval_ok,
            failed: self.interval_failed,
            p50_us: self.last_interval.p50_us,
            p90_us: self.last_interval.p90_us,
            p99_us: self.last_interval.p99_us,
            max_us: self.last_interval.max_us,
            warm_up: self.stage == Stage::WarmUp,
        });
        if let Some(log) = self.interval_log.as_mut() {
            log.append(&self.interval, self.last_tick - self.started, length);
        }
        self.cumulative
            .add(&self.interval)
            .expect("histograms share bounds");
        self.interval.reset();
        self.interval_ok = 0;
        self.interval_failed = 0;
        self.last_tick = now;
        self.paused_at_last_tick = self.paused_at(now);
    }

    fn snapshot(&self, now: Instant) -> Snapshot {
        let active = self.active_timed(now).as_secs_f64();
        Snapshot {
            elapsed: now - self.started,
            stage: self.stage,
            paused: self.paused_since.is_some(),
            ok: self.ok,
            failed: self.failed,
            warm_up: self.warm_up,
            dropped: self.dropped,
            tps_now: self.series.last().map_or(0.0, |p| p.tps),
            tps_avg: if active > 0.0 {
                self.ok as f64 / active
            } else {
                0.0
            },
            cumulative: Percentiles::of(&self.cumulative),
            last_interval: self.last_interval,
            failures: FailureKind::ALL
                .iter()
                .map(|k| (*k, self.failures[k.index()]))
                .filter(|(_, n)| *n > 0)
                .collect(),
            recent: self.series.recent().copied().collect(),
            load: self.load,
            faults: self.faults.clone(),
            live: self.live.read(),
        }
    }
}

impl Recorder {
    /// A recorder whose clock starts now, and the channel its snapshots go to.
    pub fn new() -> (Recorder, watch::Receiver<Snapshot>) {
        Recorder::with_series_cap(MAX_SERIES_POINTS)
    }

    fn with_series_cap(cap: usize) -> (Recorder, watch::Receiver<Snapshot>) {
        let now = Instant::now();
        let (snapshots, rx) = watch::channel(Snapshot::default());
        let state = State {
            started: now,
            started_wall: SystemTime::now(),
            cpu_at_start: ProcessStats::now().cpu_s,
            interval: histogram(),
            cumulative: histogram(),
            interval_ok: 0,
            interval_failed: 0,
            ok: 0,
            failed: 0,
            indeterminate: 0,
            warm_up: 0,
            dropped: 0,
            failures: [0; FailureKind::COUNT],
            stage: Stage::Preparing,
            load: LoadSetting::default(),
            paused_since: None,
            paused_total: Duration::ZERO,
            last_tick: now,
            paused_at_last_tick: Duration::ZERO,
            timed_start: None,
            series: Series::new(cap),
            last_interval: Percentiles::default(),
            events: EventLog::new(MAX_EVENTS),
            faults: Vec::new(),
            live: Default::default(),
            interval_log: None,
            payment_log: None,
            phases: Default::default(),
            phase_clock: None,
            export: None,
        };
        let shared = Arc::new(Shared {
            state: Mutex::new(state),
            snapshots,
        });
        (Recorder { shared }, rx)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock leaves counters that are still
        // usable for a partial report.
        self.shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// A handle that does not keep the recorder alive.
    pub fn downgrade(&self) -> WeakRecorder {
        WeakRecorder(Arc::downgrade(&self.shared))
    }

    /// A batch for one worker; it merges itself when full, on `flush`, and on drop.
    pub fn worker(&self) -> WorkerRecorder {
        WorkerRecorder::new(self.clone())
    }

    /// Appends every interval from now on to `log` (timestamps count from the
    /// recorder's start); [`Recorder::finish`] flushes it and names it in the summary.
    pub fn log_intervals_to(&self, log: IntervalLog) {
        self.state().interval_log = Some(log);
    }

    /// Appends every payment merged from now on to `log` (times count from the
    /// recorder's start); [`Recorder::finish`] flushes it and names it in the summary.
    /// Workers made before this call write no rows.
    pub fn log_payments_to(&self, log: PaymentLog) {
        self.state().payment_log = Some(log);
    }

    /// Counts every batch merged from now on into `exporter` too (`--metrics-listen`).
    pub fn export_to(&self, exporter: super::export::Exporter) {
        self.state().export = Some(exporter);
    }

    /// When the recorder's clock started.
    pub fn started_wall(&self) -> SystemTime {
        self.state().started_wall
    }

    pub fn set_stage(&self, stage: Stage) {
        let now = Instant::now();
        let mut state = self.state();
        state.stage = stage;
        let running = state.phase_clock.map(|(slot, ..)| slot);
        match phase_slot(stage) {
            Some(slot) if running != Some(slot) => {
                state.stop_phase_clock(now);
                let paused = state.paused_at(now);
                state.phase_clock = Some((slot, now, paused));
                state.phases[slot as usize].started.get_or_insert(now);
            }
            // Warm-up is not measured; draining and the end leave the clock as is.
            None if stage == Stage::WarmUp => state.stop_phase_clock(now),
            _ => {}
        }
    }

    pub fn set_load(&self, load: LoadSetting) {
        self.state().load = load;
    }

    pub fn set_paused(&self, paused: bool) {
        let now = Instant::now();
        let mut state = self.state();
        match (paused, state.paused_since) {
            (true, None) => state.paused_since = Some(now),
            (false, Some(since)) => {
                state.paused_total += now - since;
                state.paused_since = None;
            }
            _ => {}
        }
    }

    /// Shows a workload's live figure in every snapshot from now on, after those
    /// watched before it.
    pub fn watch(&self, source: Arc<dyn super::live::LiveSource>) {
        self.state().live.0.push(source);
    }

    /// The load setting in force.
    pub fn load(&self) -> LoadSetting {
        self.state().load
    }

    /// Records that `kind` happened now; returns when, on the run's clock (seconds).
    pub fn event(&self, kind: EventKind) -> f64 {
        let now = Instant::now();
        let mut state = self.state();
        let at_s = (now - state.started).as_secs_f64();
        let fault = match &kind {
            EventKind::FaultBegan { fault } => {
                state.faults.push(fault.clone());
                true
            }
            EventKind::FaultEnded { fault } => {
                if let Some(i) = state.faults.iter().position(|f| f == fault) {
                    state.faults.remove(i);
                }
                true
            }
            _ => false,
        };
        state.events.push(RunEvent { at_s, kind });
        if fault {
            // The live view and the progress lines show a fault at once.
            let snapshot = state.snapshot(now);
            drop(state);
            self.shared.snapshots.send_replace(snapshot);
        }
        at_s
    }

    /// Seconds since the recorder's clock started (the clock of series and events).
    pub fn elapsed_s(&self) -> f64 {
        let started = self.state().started;
        started.elapsed().as_secs_f64()
    }

    /// A handle that records events while the recorder lives, without keeping it
    /// (and its snapshot channel, which front ends follow to its end) alive.
    pub fn events(&self) -> RecorderEvents {
        RecorderEvents {
            shared: Arc::downgrade(&self.shared),
        }
    }

    /// Paused time so far (completed pauses and the current one).
    pub fn paused_total(&self) -> Duration {
        self.state().paused_at(Instant::now())
    }

    /// The counted load begins now (after any warm-up). Idempotent.
    pub fn begin_timed(&self) {
        let now = Instant::now();
        let mut state = self.state();
        if state.timed_start.is_none() {
            state.timed_start = Some((now, state.paused_at(now)));
        }
    }

    pub fn add_dropped(&self, n: u64) {
        self.state().dropped += n;
    }

    /// Closes the current interval and publishes a snapshot.
    pub fn tick(&self) {
        let now = Instant::now();
        let snapshot = {
            let mut state = self.state();
            state.close_interval(now);
            state.snapshot(now)
        };
        self.shared.snapshots.send_replace(snapshot);
    }

    /// Closes the last (partial) interval, publishes the final snapshot and returns
    /// the summary. Flush or drop every [`WorkerRecorder`] first.
    pub fn finish(&self) -> Summary {
        let now = Instant::now();
        let process = ProcessStats::now();
        let (snapshot, summary) = {
            let mut state = self.state();
            state.stage = Stage::Finished;
            if now > state.last_tick || state.interval_ok + state.interval_failed > 0 {
                state.close_interval(now);
            }
            let snapshot = state.snapshot(now);
            state.stop_phase_clock(now);
            let interval_log = state.interval_log.as_mut().map(IntervalLog::finish);
            let mut summary = summarize(&state, now, &snapshot, process, interval_log);
            summary.payment_log = state.payment_log.as_mut().map(PaymentLog::finish);
            (snapshot, summary)
        };
        self.shared.snapshots.send_replace(snapshot);
        summary
    }

    /// The summary so far while the load goes on (a report snapshot). It closes the
    /// interval in progress early, as a tick does (the series gets one short
    /// interval), and finishes nothing: the run goes on. Workers' unflushed batches
    /// are not in it.
    pub fn summary_now(&self) -> Summary {
        let now = Instant::now();
        let process = ProcessStats::now();
        let (snapshot, summary) = {
            let mut state = self.state();
            state.close_interval(now);
            let snapshot = state.snapshot(now);
            let summary = summarize(&state, now, &snapshot, process, None);
            (snapshot, summary)
        };
        self.shared.snapshots.send_replace(snapshot);
        summary
    }
}

/// The summary of everything recorded up to `now`, with `snapshot` taken at `now`.
fn summarize(
    state: &State,
    now: Instant,
    snapshot: &Snapshot,
    process: ProcessStats,
    interval_log: Option<super::hlog::IntervalLogFile>,
) -> Summary {
    let elapsed = now - state.started;
    let ended_wall = state.started_wall + elapsed;
    let unix_ms = |t: SystemTime| {
        t.duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    };
    Summary {
        started_unix_ms: unix_ms(state.started_wall),
        ended_unix_ms: unix_ms(ended_wall),
        elapsed_s: elapsed.as_secs_f64(),
        active_s: state.active_timed(now).as_secs_f64(),
        paused_s: state.paused_at(now).as_secs_f64(),
        ok: state.ok,
        failed: state.failed,
        indeterminate: state.indeterminate,
        warm_up_excluded: state.warm_up,
        dropped: state.dropped,
        tps_avg: snapshot.tps_avg,
        latency: snapshot.cumulative,
        latency_spectrum: super::spectrum::spectrum(&state.cumulative),
        phases: state.phase_summaries(),
        failures_by_reason: snapshot
            .failures
            .iter()
            .map(|(k, n)| (k.as_str(), *n))
            .collect(),
        series_resolution_s: state.series.resolution(),
        series: state.series.complete(),
        events: state.events.events().to_vec(),
        events_dropped: state.events.dropped(),
        tool_cpu_s: process
            .cpu_s
            .zip(state.cpu_at_start)
            .map(|(end, start)| end - start),
        tool_process: process,
        machine: None,
        mismatches: None,
        routes: Vec::new(),
        stream: None,
        parts: None,
        drain: None,
        attack: None,
        rebalance: None,
        interval_log,
        payment_log: None,
    }
}

#[cfg(test)]
mod tests;
