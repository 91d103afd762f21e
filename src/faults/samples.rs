//! The run's samples for the fault windows, bounded in number over a run of any
//! length.
//!
//! When [`MAX_SAMPLES`] are kept, every other sample of the older half goes: the
//! recent past stays at one a second, older stretches get coarser the longer the run.
//! The samples a window needs exactly are pinned and stay: each fault's beginning and
//! end, the [`BEFORE`] seconds before each edge (its baseline) and [`PINNED_AFTER`]
//! seconds after it (its recovery).

use super::windows::{BEFORE, MAX_SAMPLES, Sample};

/// Seconds after a fault's edge whose samples stay at one a second.
pub const PINNED_AFTER: f64 = 600.0;

/// The samples kept, oldest first.
#[derive(Debug, Default)]
pub struct Samples {
    kept: Vec<Sample>,
    /// Per kept sample: 2 a fault's edge, 1 near one, 0 neither.
    pins: Vec<u8>,
    /// Samples up to this time are pinned (after the last edge).
    pin_until: f64,
}

impl Samples {
    /// Keeps `sample`; `edge` when it was taken at a fault's beginning or end.
    pub fn push(&mut self, sample: Sample, edge: bool) {
        if edge {
            let from = sample.at_s - BEFORE;
            let start = self.kept.partition_point(|s| s.at_s < from);
            for pin in &mut self.pins[start..] {
                *pin = (*pin).max(1);
            }
            self.pin_until = sample.at_s + PINNED_AFTER;
        }
        if self.kept.len() >= MAX_SAMPLES && !self.thin(1) && !self.thin(2) {
            // Nothing but fault edges in the older half: keep what is there.
            return;
        }
        let pin = if edge {
            2
        } else {
            u8::from(sample.at_s <= self.pin_until)
        };
        self.kept.push(sample);
        self.pins.push(pin);
    }

    /// Drops every other sample of the older half pinned below `keep`; false when none
    /// could go.
    fn thin(&mut self, keep: u8) -> bool {
        let half = self.kept.len() / 2;
        let mut drop = vec![false; self.kept.len()];
        let mut second = false;
        for (i, pin) in self.pins[..half].iter().enumerate() {
            if *pin < keep {
                drop[i] = second;
                second = !second;
            }
        }
        if !drop.contains(&true) {
            return false;
        }
        let mut i = 0;
        self.kept.retain(|_| {
            i += 1;
            !drop[i - 1]
        });
        let mut i = 0;
        self.pins.retain(|_| {
            i += 1;
            !drop[i - 1]
        });
        true
    }

    pub fn as_slice(&self) -> &[Sample] {
        &self.kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::windows;
    use std::collections::BTreeMap;

    /// Counts at second `t` of a load of 10 payments a second.
    fn sample(t: u64) -> Sample {
        Sample {
            at_s: t as f64,
            ok: 10 * t,
            failed: 0,
            failures: BTreeMap::new(),
            scheduled: None,
        }
    }

    fn record(began: u64, ended: u64) -> crate::faults::FaultRecord {
        crate::faults::FaultRecord {
            label: "kill bob".into(),
            kind: "kill".into(),
            target: "bob".into(),
            began_s: Some(began as f64),
            ended_s: Some(ended as f64),
            links: None,
            node_back: None,
            chain_back: None,
            chain_height: None,
            error: None,
            windows: windows::FaultWindows::default(),
        }
    }

    /// A fault an hour in, then a load of 30 days: thinning leaves the samples its
    /// windows need, so its baseline and recovery are still at one-second grain.
    #[test]
    fn an_early_fault_keeps_its_windows_through_a_long_run() {
        let (began, ended, end) = (3600, 3660, 30 * 24 * 3600);
        let mut samples = Samples::default();
        for t in 0..=end {
            samples.push(sample(t), t == began || t == ended);
        }
        assert!(samples.as_slice().len() <= MAX_SAMPLES);
        let mut records = [record(began, ended)];
        windows::fill(&mut records, samples.as_slice(), end as f64);
        let w = &records[0].windows;
        let before = w.before.as_ref().expect("a before window");
        assert_eq!(
            (before.from_s, before.to_s, before.ok),
            (began as f64 - windows::BEFORE, began as f64, 100)
        );
        assert_eq!(w.recovered_after_s, Some(0.0));
    }

    /// A fault 30 days into the load, lifted a minute later, after one sample a second
    /// all along: it gets its before, during and after windows at one-second grain.
    #[test]
    fn a_fault_thirty_days_in_still_gets_its_windows() {
        let began = 30 * 24 * 3600;
        let ended = began + 60;
        let end = ended + 120;
        let mut samples = Samples::default();
        for t in 0..=end {
            samples.push(sample(t), t == began || t == ended);
        }
        assert!(samples.as_slice().len() <= MAX_SAMPLES);
        let mut records = [record(began, ended)];
        // The start of the load is still there, coarser.
        assert_eq!(samples.as_slice()[0].at_s, 0.0);
        windows::fill(&mut records, samples.as_slice(), end as f64);
        let w = &records[0].windows;
        let before = w.before.as_ref().expect("a before window");
        assert_eq!(
            (before.from_s, before.to_s, before.ok),
            (began as f64 - windows::BEFORE, began as f64, 100)
        );
        let during = w.during.as_ref().expect("a during window");
        assert_eq!((during.from_s, during.to_s), (began as f64, ended as f64));
        let after = w.after.as_ref().expect("an after window");
        assert_eq!((after.from_s, after.to_s), (ended as f64, end as f64));
        assert_eq!(w.recovered_after_s, Some(0.0));
    }
}
