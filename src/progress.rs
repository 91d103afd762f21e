//! Steps of a long task (setting a network up, tearing it down) as data, so the live
//! view can draw them. [`crate::setup::StepLog`] publishes them on a watch channel
//! when a live view follows the run, and prints them as lines otherwise.

use std::time::{Duration, Instant};

/// The steps of one long task so far.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Progress {
    /// `setting up` or `tearing down`.
    pub title: String,
    pub steps: Vec<Step>,
    /// Why the task failed, with the last lines of a log where there are some.
    pub failure: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub name: String,
    pub state: StepState,
    /// The last progress line of the step (`alice ready (0.21.1-beta)`).
    pub detail: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepState {
    Running { since: Instant },
    Done { took: Duration },
    Failed { took: Duration },
}

impl Progress {
    pub fn new(title: &str) -> Self {
        Progress {
            title: title.to_string(),
            ..Progress::default()
        }
    }

    /// Starts `name`, ending the running step (as done) if there is one.
    pub fn begin(&mut self, name: &str, now: Instant) {
        self.end(now);
        self.steps.push(Step {
            name: name.to_string(),
            state: StepState::Running { since: now },
            detail: None,
        });
    }

    pub fn detail(&mut self, detail: &str) {
        if let Some(step) = self.running_mut() {
            step.detail = Some(detail.to_string());
        }
    }

    /// Marks the running step done.
    pub fn end(&mut self, now: Instant) {
        if let Some(step) = self.running_mut() {
            let StepState::Running { since } = step.state else {
                unreachable!("running_mut returns a running step")
            };
            step.state = StepState::Done {
                took: now.duration_since(since),
            };
        }
    }

    /// Marks the running step failed (or the task, if no step runs) with `why`.
    pub fn fail(&mut self, why: &str, now: Instant) {
        if let Some(step) = self.running_mut() {
            let StepState::Running { since } = step.state else {
                unreachable!("running_mut returns a running step")
            };
            step.state = StepState::Failed {
                took: now.duration_since(since),
            };
        }
        self.failure = Some(why.to_string());
    }

    fn running_mut(&mut self) -> Option<&mut Step> {
        self.steps
            .last_mut()
            .filter(|s| matches!(s.state, StepState::Running { .. }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_run_one_at_a_time_and_keep_their_times() {
        let t0 = Instant::now();
        let mut p = Progress::new("setting up");
        p.begin("chain up", t0);
        p.detail("mining");
        p.begin("nodes up", t0 + Duration::from_secs(3));
        assert_eq!(
            p.steps[0].state,
            StepState::Done {
                took: Duration::from_secs(3)
            }
        );
        assert_eq!(p.steps[0].detail.as_deref(), Some("mining"));
        p.fail("alice did not start", t0 + Duration::from_secs(5));
        assert_eq!(
            p.steps[1].state,
            StepState::Failed {
                took: Duration::from_secs(2)
            }
        );
        assert_eq!(p.failure.as_deref(), Some("alice did not start"));
        // Nothing runs now: a further end changes nothing.
        let before = p.clone();
        p.end(t0 + Duration::from_secs(9));
        assert_eq!(p, before);
    }
}
