//! The TUI's state apart from its view: what the operator asked for and which
//! overlays are open. [`App::update`] applies one [`Action`] and returns the engine
//! command it implies; it does no I/O, so every key's effect is unit-tested.

use crate::engine::Command;
use crate::metrics::{LoadSetting, Snapshot, Stage};

/// Most concurrent payers the `+` key goes to.
pub const MAX_CONCURRENCY: u32 = 10_000;
/// Fewest concurrent payers the `-` key goes to.
pub const MIN_CONCURRENCY: u32 = 1;
/// Lowest target rate (payments/s) the `-` key goes to.
pub const MIN_RATE: f64 = 1.0;
/// Highest target rate (payments/s) the `+` key goes to.
pub const MAX_RATE: f64 = 1_000_000.0;

/// What a key asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    TogglePause,
    /// One step more load: concurrency (closed loop) or rate (open loop).
    Increase,
    /// One step less load.
    Decrease,
    ToggleHelp,
    /// Close the help overlay (Esc); nothing else.
    CloseHelp,
    /// Write a report snapshot now.
    ReportSnapshot,
    Quit,
}

/// The operator's side of the run view.
#[derive(Debug, Clone, PartialEq)]
pub struct App {
    /// Paused as last requested here, or as the engine last reported.
    pub paused: bool,
    /// The load setting as last requested here, or as the engine last reported.
    pub load: LoadSetting,
    pub stage: Stage,
    pub help: bool,
    pub quit: bool,
    /// A one-line note for the footer (e.g. why a key did nothing).
    pub message: Option<String>,
    /// What the engine reported last, to tell its own changes from stale echoes.
    seen_paused: bool,
    seen_load: LoadSetting,
}

impl App {
    pub fn new(snapshot: &Snapshot) -> Self {
        App {
            paused: snapshot.paused,
            load: snapshot.load,
            stage: snapshot.stage,
            help: false,
            quit: false,
            message: None,
            seen_paused: snapshot.paused,
            seen_load: snapshot.load,
        }
    }

    /// Takes in a new snapshot. A value the engine changed replaces what was asked
    /// here (an open-loop ramp moves the rate every second); an unchanged one does
    /// not, so a key pressed just before a snapshot built earlier is not undone.
    pub fn observe(&mut self, snapshot: &Snapshot) {
        if snapshot.paused != self.seen_paused {
            self.paused = snapshot.paused;
            self.seen_paused = snapshot.paused;
        }
        if snapshot.load != self.seen_load {
            self.load = snapshot.load;
            self.seen_load = snapshot.load;
        }
        self.stage = snapshot.stage;
    }

    /// Whether the load can still be paused or changed.
    fn load_running(&self) -> bool {
        !matches!(
            self.stage,
            Stage::Preparing | Stage::Draining | Stage::Finished
        )
    }

    /// Applies `action`; returns the command to send to the engine, if any.
    pub fn update(&mut self, action: Action) -> Option<Command> {
        self.message = None;
        match action {
            Action::ToggleHelp => {
                self.help = !self.help;
                None
            }
            Action::CloseHelp => {
                self.help = false;
                None
            }
            Action::Quit => {
                self.quit = true;
                Some(Command::Stop)
            }
            // The event loop asks the run for it and shows the answer.
            Action::ReportSnapshot => None,
            Action::TogglePause | Action::Increase | Action::Decrease if !self.load_running() => {
                self.message = Some(format!(
                    "load is {}: nothing to change",
                    self.stage.as_str()
                ));
                None
            }
            Action::TogglePause => {
                self.paused = !self.paused;
                Some(if self.paused {
                    Command::Pause
                } else {
                    Command::Resume
                })
            }
            Action::Increase | Action::Decrease => {
                let up = action == Action::Increase;
                let (next, command) = match self.load {
                    LoadSetting::Closed { concurrency } => {
                        let n = step_concurrency(concurrency, up);
                        (
                            LoadSetting::Closed { concurrency: n },
                            Command::SetConcurrency(n),
                        )
                    }
                    LoadSetting::Open { rate } => {
                        let r = step_rate(rate, up);
                        (LoadSetting::Open { rate: r }, Command::SetRate(r))
                    }
                };
                if next == self.load {
                    self.message = Some(match next {
                        LoadSetting::Closed { concurrency } => {
                            format!("concurrency stays at {concurrency} (limit)")
                        }
                        LoadSetting::Open { rate } => format!("rate stays at {rate:.1}/s (limit)"),
                    });
                    return None;
                }
                self.load = next;
                Some(command)
            }
        }
    }
}

/// The next concurrency: steps of 1 up to 10, then 5 or 10 %, whichever is more,
/// within [`MIN_CONCURRENCY`]..=[`MAX_CONCURRENCY`]. Going down never skips 10, so
/// small settings stay reachable.
pub fn step_concurrency(n: u32, up: bool) -> u32 {
    let big_step = |n: u32| (n / 10).max(5);
    let next = if up {
        if n < 10 {
            n + 1
        } else {
            n.saturating_add(big_step(n))
        }
    } else if n <= 10 {
        n.saturating_sub(1)
    } else {
        n.saturating_sub(big_step(n)).max(10)
    };
    next.clamp(MIN_CONCURRENCY, MAX_CONCURRENCY)
}

/// The next rate: 10 % or 1/s, whichever is more, within [`MIN_RATE`]..=[`MAX_RATE`].
pub fn step_rate(rate: f64, up: bool) -> f64 {
    let rate = if rate.is_finite() { rate } else { MIN_RATE };
    let step = (rate * 0.1).max(1.0);
    let next = if up { rate + step } else { rate - step };
    // One decimal is all the header shows; keep the setting equal to what is shown.
    ((next * 10.0).round() / 10.0).clamp(MIN_RATE, MAX_RATE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn running(load: LoadSetting) -> App {
        App::new(&Snapshot {
            stage: Stage::Closed,
            load,
            ..Snapshot::default()
        })
    }

    fn closed(n: u32) -> App {
        running(LoadSetting::Closed { concurrency: n })
    }

    #[test]
    fn pause_then_resume() {
        let mut app = closed(4);
        assert_eq!(app.update(Action::TogglePause), Some(Command::Pause));
        assert!(app.paused);
        assert_eq!(app.update(Action::TogglePause), Some(Command::Resume));
        assert!(!app.paused);
    }

    #[test]
    fn a_stale_snapshot_does_not_undo_a_pause() {
        let mut app = closed(4);
        app.update(Action::TogglePause);
        // Built before the engine saw the pause: same values as the last one.
        app.observe(&Snapshot {
            stage: Stage::Closed,
            load: LoadSetting::Closed { concurrency: 4 },
            ..Snapshot::default()
        });
        assert!(app.paused);
        assert_eq!(app.update(Action::TogglePause), Some(Command::Resume));
    }

    #[test]
    fn the_engine_changing_the_rate_is_followed() {
        let mut app = running(LoadSetting::Open { rate: 10.0 });
        app.observe(&Snapshot {
            stage: Stage::Ramp,
            load: LoadSetting::Open { rate: 50.0 },
            ..Snapshot::default()
        });
        assert_eq!(app.update(Action::Increase), Some(Command::SetRate(55.0)));
    }

    #[test]
    fn concurrency_steps_by_one_below_ten_then_by_five_or_ten_percent() {
        let mut app = closed(9);
        assert_eq!(
            app.update(Action::Increase),
            Some(Command::SetConcurrency(10))
        );
        assert_eq!(
            app.update(Action::Increase),
            Some(Command::SetConcurrency(15))
        );
        assert_eq!(
            app.update(Action::Decrease),
            Some(Command::SetConcurrency(10))
        );
        assert_eq!(
            app.update(Action::Decrease),
            Some(Command::SetConcurrency(9))
        );
        assert_eq!(step_concurrency(100, true), 110);
        assert_eq!(step_concurrency(100, false), 90);
        assert_eq!(step_concurrency(12, false), 10);
    }

    #[test]
    fn concurrency_stays_within_limits() {
        let mut app = closed(1);
        assert_eq!(app.update(Action::Decrease), None);
        assert_eq!(app.load, LoadSetting::Closed { concurrency: 1 });
        assert!(app.message.as_deref().unwrap().contains("limit"));
        let mut app = closed(9_990);
        assert_eq!(
            app.update(Action::Increase),
            Some(Command::SetConcurrency(MAX_CONCURRENCY))
        );
        assert_eq!(app.update(Action::Increase), None);
    }

    #[test]
    fn rate_steps_by_ten_percent_and_at_least_one_per_second() {
        let mut app = running(LoadSetting::Open { rate: 100.0 });
        assert_eq!(app.update(Action::Increase), Some(Command::SetRate(110.0)));
        assert_eq!(app.update(Action::Decrease), Some(Command::SetRate(99.0)));
        assert_eq!(step_rate(2.0, true), 3.0);
        assert_eq!(step_rate(1.5, false), MIN_RATE);
        let mut app = running(LoadSetting::Open { rate: MIN_RATE });
        assert_eq!(app.update(Action::Decrease), None);
    }

    #[test]
    fn quit_sends_stop() {
        let mut app = closed(4);
        assert_eq!(app.update(Action::Quit), Some(Command::Stop));
        assert!(app.quit);
    }

    #[test]
    fn quit_works_in_every_stage() {
        let mut app = App::new(&Snapshot {
            stage: Stage::Draining,
            ..Snapshot::default()
        });
        assert_eq!(app.update(Action::Quit), Some(Command::Stop));
    }

    #[test]
    fn help_toggles_and_escape_closes_it() {
        let mut app = closed(4);
        assert_eq!(app.update(Action::ToggleHelp), None);
        assert!(app.help);
        app.update(Action::ToggleHelp);
        assert!(!app.help);
        app.update(Action::ToggleHelp);
        app.update(Action::CloseHelp);
        assert!(!app.help);
    }

    #[test]
    fn load_keys_do_nothing_once_the_load_ends() {
        let mut app = closed(4);
        app.observe(&Snapshot {
            stage: Stage::Draining,
            load: LoadSetting::Closed { concurrency: 4 },
            ..Snapshot::default()
        });
        assert_eq!(app.update(Action::TogglePause), None);
        assert_eq!(app.update(Action::Increase), None);
        assert!(app.message.as_deref().unwrap().contains("draining"));
    }

    #[test]
    fn report_snapshot_is_no_engine_command() {
        let mut app = closed(4);
        let before = app.clone();
        assert_eq!(app.update(Action::ReportSnapshot), None);
        assert_eq!(app, before, "the event loop handles it");
    }
}
