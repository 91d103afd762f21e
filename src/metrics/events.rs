//! What the operator and the schedule did during a run: pauses, resumes, load
//! changes, stop requests and open-loop phase starts, with their times. The report
//! lists them and the charts mark them on their time axes.

use super::Stage;
use serde::Serialize;

/// Most events kept for a run; later ones are only counted (`events_dropped`).
pub const MAX_EVENTS: usize = 10_000;

/// One event, `at_s` seconds after the run started (the clock of
/// [`super::SeriesPoint::at_s`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunEvent {
    pub at_s: f64,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What happened. Serialized with a `kind` tag in snake_case next to `at_s`, e.g.
/// `{"at_s": 12.5, "kind": "concurrency_changed", "from": 4, "to": 5}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EventKind {
    /// No new payments start from here until `Resumed` (or the end of the run).
    Paused,
    Resumed,
    /// Closed loop: the number of workers changed by command.
    ConcurrencyChanged {
        from: u32,
        to: u32,
    },
    /// Open loop: a constant rate (payments/s) set by command.
    RateChanged {
        from: f64,
        to: f64,
    },
    /// The operator asked the run to end.
    StopRequested,
    /// Open loop: the schedule entered a phase (`warm-up`, `ramp` or `hold`).
    PhaseStarted {
        phase: Stage,
    },
    /// A fault of the scenario's `faults:` began (`kill bob`, `partition alice–bob`).
    FaultBegan {
        fault: String,
    },
    /// It was lifted: the node started again or resumed, the link restored.
    FaultEnded {
        fault: String,
    },
}

impl EventKind {
    /// A short human description, e.g. `concurrency 4 → 5`.
    pub fn describe(&self) -> String {
        match self {
            EventKind::Paused => "paused".into(),
            EventKind::Resumed => "resumed".into(),
            EventKind::ConcurrencyChanged { from, to } => format!("concurrency {from} → {to}"),
            EventKind::RateChanged { from, to } => format!("rate {from:.1}/s → {to:.1}/s"),
            EventKind::StopRequested => "stop requested".into(),
            EventKind::PhaseStarted { phase } => format!("{} phase started", phase.as_str()),
            EventKind::FaultBegan { fault } => fault.clone(),
            EventKind::FaultEnded { fault } => format!("{fault} ended"),
        }
    }
}

/// The run's events, bounded by [`MAX_EVENTS`].
#[derive(Debug, Clone)]
pub(super) struct EventLog {
    events: Vec<RunEvent>,
    dropped: u64,
    cap: usize,
}

impl EventLog {
    pub(super) fn new(cap: usize) -> Self {
        EventLog {
            events: Vec::new(),
            dropped: 0,
            cap,
        }
    }

    pub(super) fn push(&mut self, event: RunEvent) {
        if self.events.len() < self.cap {
            self.events.push(event);
        } else {
            self.dropped += 1;
        }
    }

    pub(super) fn events(&self) -> &[RunEvent] {
        &self.events
    }

    pub(super) fn dropped(&self) -> u64 {
        self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_keeps_the_first_events_and_counts_the_rest() {
        let mut log = EventLog::new(2);
        for i in 0..5 {
            log.push(RunEvent {
                at_s: f64::from(i),
                kind: EventKind::Paused,
            });
        }
        assert_eq!(log.events().len(), 2);
        assert_eq!(log.events()[1].at_s, 1.0);
        assert_eq!(log.dropped(), 3);
    }

    #[test]
    fn events_serialize_flat_with_a_snake_case_kind() {
        let json = |kind| serde_json::to_value(RunEvent { at_s: 1.5, kind }).unwrap();
        assert_eq!(
            json(EventKind::ConcurrencyChanged { from: 4, to: 5 }),
            serde_json::json!({"at_s": 1.5, "kind": "concurrency_changed", "from": 4, "to": 5})
        );
        assert_eq!(
            json(EventKind::Paused),
            serde_json::json!({"at_s": 1.5, "kind": "paused"})
        );
        assert_eq!(
            json(EventKind::PhaseStarted {
                phase: Stage::WarmUp
            }),
            serde_json::json!({"at_s": 1.5, "kind": "phase_started", "phase": "warm-up"})
        );
        assert_eq!(
            json(EventKind::StopRequested)["kind"],
            serde_json::json!("stop_requested")
        );
    }
}
