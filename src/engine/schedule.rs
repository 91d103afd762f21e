//! Open-loop arrival times: pure math, no clock.
//!
//! Within a phase the rate goes linearly from `a` to `b` over `T` seconds, so the
//! number of arrivals due by time `t` is `N(t) = a*t + (b-a)*t^2/(2T)`. Arrival `k`
//! (counting from 0 over the whole schedule) is due when the cumulative `N` reaches
//! `k`; the first arrival is at offset zero. Fractions carry across phases, so phase
//! boundaries neither add nor lose arrivals.

use crate::scenario::{Phase, PhaseKind};
use std::time::Duration;

/// One arrival: its offset from the start of the schedule (active time, pauses
/// excluded) and the phase it belongs to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arrival {
    pub offset: Duration,
    pub phase: PhaseKind,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Segment {
    kind: PhaseKind,
    from_rate: f64,
    to_rate: f64,
    /// Seconds; `f64::INFINITY` for an open-ended hold (after `SetRate`).
    length: f64,
}

impl Segment {
    /// Arrivals due within the first `t` seconds of the segment.
    fn due_by(&self, t: f64) -> f64 {
        if self.length.is_infinite() {
            return self.from_rate * t;
        }
        self.from_rate * t + (self.to_rate - self.from_rate) * t * t / (2.0 * self.length)
    }

    fn total(&self) -> f64 {
        if self.length.is_infinite() {
            f64::INFINITY
        } else {
            self.due_by(self.length)
        }
    }

    /// The time within the segment at which `n` arrivals are due (`0 <= n < total`).
    fn time_of(&self, n: f64) -> f64 {
        if n <= 0.0 {
            return 0.0;
        }
        let a = self.from_rate;
        let c = if self.length.is_infinite() {
            0.0
        } else {
            (self.to_rate - a) / (2.0 * self.length)
        };
        // Root of c*t^2 + a*t - n = 0, written so that c -> 0 (a hold) and a = 0
        // (a ramp from zero) stay exact.
        let disc = (a * a + 4.0 * c * n).max(0.0);
        let t = 2.0 * n / (a + disc.sqrt());
        t.clamp(0.0, self.length)
    }
}

/// Iterator over the intended start times of a schedule.
#[derive(Debug, Clone)]
pub struct Arrivals {
    segments: Vec<Segment>,
    index: usize,
    /// Offset (seconds) where the current segment starts.
    segment_start: f64,
    /// Cumulative arrivals due before the current segment (fractional).
    due_before: f64,
    /// The next arrival number.
    next: u64,
}

impl Arrivals {
    pub fn new(phases: &[Phase]) -> Self {
        let segments = phases
            .iter()
            .map(|p| Segment {
                kind: p.kind,
                from_rate: p.from_rate.max(0.0),
                to_rate: p.to_rate.max(0.0),
                length: p.duration.as_secs_f64(),
            })
            .filter(|s| s.length > 0.0)
            .collect();
        Arrivals::from_segments(segments, 0.0)
    }

    /// A constant rate forever, starting at `start` (used when the rate is set by hand).
    pub fn constant(rate: f64, start: Duration) -> Self {
        let segment = Segment {
            kind: PhaseKind::Hold,
            from_rate: rate.max(0.0),
            to_rate: rate.max(0.0),
            length: f64::INFINITY,
        };
        Arrivals::from_segments(vec![segment], start.as_secs_f64())
    }

    fn from_segments(segments: Vec<Segment>, start: f64) -> Self {
        Arrivals {
            segments,
            index: 0,
            segment_start: start,
            due_before: 0.0,
            next: 0,
        }
    }

    /// The rate (payments/s) at offset `at`, or 0 past the end.
    pub fn rate_at(&self, at: Duration) -> f64 {
        let mut start = self.segment_start;
        let t = at.as_secs_f64();
        for s in &self.segments[self.index.min(self.segments.len())..] {
            if t < start + s.length {
                let local = (t - start).max(0.0);
                if s.length.is_infinite() {
                    return s.from_rate;
                }
                return s.from_rate + (s.to_rate - s.from_rate) * local / s.length;
            }
            start += s.length;
        }
        0.0
    }
}

impl Iterator for Arrivals {
    type Item = Arrival;

    fn next(&mut self) -> Option<Arrival> {
        while let Some(segment) = self.segments.get(self.index) {
            let local = self.next as f64 - self.due_before;
            if local < segment.total() {
                self.next += 1;
                let t = self.segment_start + segment.time_of(local);
                return Some(Arrival {
                    offset: Duration::from_secs_f64(t),
                    phase: segment.kind,
                });
            }
            self.due_before += segment.total();
            self.segment_start += segment.length;
            self.index += 1;
        }
        None
    }
}

/// Total length of the phases that are not warm-up, and of the warm-up before them.
pub fn warm_up_length(phases: &[Phase]) -> Duration {
    phases
        .iter()
        .take_while(|p| p.kind == PhaseKind::WarmUp)
        .map(|p| p.duration)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(kind: PhaseKind, from_rate: f64, to_rate: f64, secs: f64) -> Phase {
        Phase {
            kind,
            from_rate,
            to_rate,
            duration: Duration::from_secs_f64(secs),
        }
    }

    fn count(arrivals: &[Arrival], kind: PhaseKind) -> usize {
        arrivals.iter().filter(|a| a.phase == kind).count()
    }

    #[test]
    fn hold_gives_rate_times_duration_evenly_spaced() {
        let all: Vec<_> = Arrivals::new(&[phase(PhaseKind::Hold, 10.0, 10.0, 2.0)]).collect();
        assert_eq!(all.len(), 20);
        assert_eq!(all[0].offset, Duration::ZERO);
        assert!((all[1].offset.as_secs_f64() - 0.1).abs() < 1e-9);
        assert!((all[19].offset.as_secs_f64() - 1.9).abs() < 1e-9);
    }

    #[test]
    fn ramp_count_is_the_integral_of_the_rate() {
        // 0 -> 100/s over 10 s: integral 500.
        let all: Vec<_> = Arrivals::new(&[phase(PhaseKind::Ramp, 0.0, 100.0, 10.0)]).collect();
        assert_eq!(all.len(), 500);
        // Half the arrivals come in the last ~29% of the time (t = sqrt(0.5) * 10).
        let t_half = all[250].offset.as_secs_f64();
        assert!((t_half - 50f64.sqrt()).abs() < 0.01, "{t_half}");
        // 20 -> 40 over 5 s: integral 150.
        let up: Vec<_> = Arrivals::new(&[phase(PhaseKind::Ramp, 20.0, 40.0, 5.0)]).collect();
        assert_eq!(up.len(), 150);
        let down: Vec<_> = Arrivals::new(&[phase(PhaseKind::Ramp, 40.0, 20.0, 5.0)]).collect();
        assert_eq!(down.len(), 150);
    }

    #[test]
    fn phases_chain_with_counts_per_phase_and_monotonic_offsets() {
        let phases = [
            phase(PhaseKind::WarmUp, 50.0, 50.0, 1.0),
            phase(PhaseKind::Ramp, 50.0, 150.0, 2.0),
            phase(PhaseKind::Hold, 150.0, 150.0, 3.0),
        ];
        let all: Vec<_> = Arrivals::new(&phases).collect();
        assert_eq!(count(&all, PhaseKind::WarmUp), 50);
        assert_eq!(count(&all, PhaseKind::Ramp), 200);
        assert_eq!(count(&all, PhaseKind::Hold), 450);
        assert!(all.windows(2).all(|w| w[0].offset <= w[1].offset));
        assert!(all.iter().all(|a| a.offset < Duration::from_secs(6)));
        let first_ramp = all.iter().find(|a| a.phase == PhaseKind::Ramp).unwrap();
        assert_eq!(first_ramp.offset, Duration::from_secs(1));
        assert_eq!(warm_up_length(&phases), Duration::from_secs(1));
    }

    #[test]
    fn fractions_carry_across_phase_boundaries() {
        // 2.5 + 2.5 arrivals: 5 in total, not 6 (ceil of each) nor 4.
        let phases = [
            phase(PhaseKind::Hold, 5.0, 5.0, 0.5),
            phase(PhaseKind::Hold, 5.0, 5.0, 0.5),
        ];
        assert_eq!(Arrivals::new(&phases).count(), 5);
    }

    #[test]
    fn zero_rate_phase_has_no_arrivals_but_takes_time() {
        let phases = [
            phase(PhaseKind::Hold, 0.0, 0.0, 2.0),
            phase(PhaseKind::Hold, 1.0, 1.0, 2.0),
        ];
        let all: Vec<_> = Arrivals::new(&phases).collect();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].offset, Duration::from_secs(2));
    }

    #[test]
    fn constant_rate_starts_at_offset_and_never_ends() {
        let mut it = Arrivals::constant(4.0, Duration::from_secs(10));
        let first: Vec<_> = it.by_ref().take(8).collect();
        assert_eq!(first[0].offset, Duration::from_secs(10));
        assert!((first[7].offset.as_secs_f64() - 11.75).abs() < 1e-9);
        assert!(it.next().is_some());
        assert_eq!(it.rate_at(Duration::from_secs(99)), 4.0);
    }

    #[test]
    fn rate_at_interpolates_ramps() {
        let it = Arrivals::new(&[
            phase(PhaseKind::Ramp, 0.0, 100.0, 10.0),
            phase(PhaseKind::Hold, 7.0, 7.0, 1.0),
        ]);
        assert!((it.rate_at(Duration::from_secs(5)) - 50.0).abs() < 1e-9);
        assert_eq!(it.rate_at(Duration::from_millis(10_500)), 7.0);
        assert_eq!(it.rate_at(Duration::from_secs(12)), 0.0);
    }
}
