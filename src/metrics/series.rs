//! Per-interval points: a short ring of recent points for live views, and the
//! whole-run series for the report, kept bounded by halving its resolution.

use serde::Serialize;
use std::collections::VecDeque;

/// Points kept for live views (five minutes at one point a second).
pub const RECENT_POINTS: usize = 300;

/// Most points kept for the whole run. One point a second fits 24 hours; past that,
/// neighbouring points are merged in pairs and the resolution doubles.
pub const MAX_SERIES_POINTS: usize = 86_400;

/// One interval of the run.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct SeriesPoint {
    /// Seconds since the run started, at the end of the interval.
    pub at_s: f64,
    /// Seconds of the interval that were not paused.
    pub active_s: f64,
    /// Successful payments per active second.
    pub tps: f64,
    pub ok: u64,
    pub failed: u64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
    /// The interval belongs to the warm-up (its payments are not counted).
    pub warm_up: bool,
}

/// A point of a bounded series: knows how to take in the point that follows it when
/// the series halves its resolution.
pub trait Mergeable: Copy {
    fn absorb(&mut self, later: &Self);
}

impl Mergeable for SeriesPoint {
    /// Merges a later point into this one. Percentiles of the merged point are the
    /// larger of the two (exact merging would need the histograms): conservative.
    fn absorb(&mut self, later: &SeriesPoint) {
        self.at_s = later.at_s;
        self.active_s += later.active_s;
        self.ok += later.ok;
        self.failed += later.failed;
        self.tps = if self.active_s > 0.0 {
            self.ok as f64 / self.active_s
        } else {
            0.0
        };
        self.p50_us = self.p50_us.max(later.p50_us);
        self.p90_us = self.p90_us.max(later.p90_us);
        self.p99_us = self.p99_us.max(later.p99_us);
        self.max_us = self.max_us.max(later.max_us);
        self.warm_up = self.warm_up && later.warm_up;
    }
}

/// The recent ring and the bounded whole-run series (of [`SeriesPoint`]s unless
/// another [`Mergeable`] point is given, e.g. resource samples).
#[derive(Debug, Clone)]
pub struct Series<P = SeriesPoint> {
    recent: VecDeque<P>,
    all: Vec<P>,
    /// Intervals merged into each point of `all`.
    resolution: u32,
    /// Intervals waiting to fill the next point of `all` (when resolution > 1).
    pending: Option<(P, u32)>,
    cap: usize,
}

impl<P: Mergeable> Series<P> {
    pub fn new(cap: usize) -> Self {
        Series {
            recent: VecDeque::with_capacity(RECENT_POINTS),
            all: Vec::new(),
            resolution: 1,
            pending: None,
            cap: cap.max(2),
        }
    }

    pub fn push(&mut self, point: P) {
        if self.recent.len() == RECENT_POINTS {
            self.recent.pop_front();
        }
        self.recent.push_back(point);

        let (merged, count) = match self.pending.take() {
            Some((mut acc, n)) => {
                acc.absorb(&point);
                (acc, n + 1)
            }
            None => (point, 1),
        };
        if count < self.resolution {
            self.pending = Some((merged, count));
            return;
        }
        if self.all.len() == self.cap {
            self.halve();
            // The point just completed covers half the new resolution: keep it pending.
            self.pending = Some((merged, count));
            return;
        }
        self.all.push(merged);
    }

    fn halve(&mut self) {
        let old = std::mem::take(&mut self.all);
        for pair in old.chunks(2) {
            let mut p = pair[0];
            if let Some(second) = pair.get(1) {
                p.absorb(second);
            }
            self.all.push(p);
        }
        self.resolution *= 2;
    }

    pub fn recent(&self) -> impl Iterator<Item = &P> {
        self.recent.iter()
    }

    pub fn last(&self) -> Option<&P> {
        self.recent.back()
    }

    pub fn resolution(&self) -> u32 {
        self.resolution
    }

    /// The whole-run series, including a partly filled last point.
    pub fn complete(&self) -> Vec<P> {
        let mut all = self.all.clone();
        all.extend(self.pending.map(|(p, _)| p));
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(i: u64) -> SeriesPoint {
        SeriesPoint {
            at_s: i as f64,
            active_s: 1.0,
            tps: 10.0,
            ok: 10,
            max_us: i,
            ..SeriesPoint::default()
        }
    }

    #[test]
    fn recent_ring_keeps_the_last_points() {
        let mut s = Series::new(MAX_SERIES_POINTS);
        for i in 1..=(RECENT_POINTS as u64 + 5) {
            s.push(point(i));
        }
        assert_eq!(s.recent().count(), RECENT_POINTS);
        assert_eq!(s.recent().next().unwrap().at_s, 6.0);
        assert_eq!(s.last().unwrap().at_s, RECENT_POINTS as f64 + 5.0);
        assert_eq!(s.complete().len(), RECENT_POINTS + 5);
    }

    #[test]
    fn whole_series_halves_resolution_and_keeps_totals() {
        let mut s = Series::new(8);
        for i in 1..=20 {
            s.push(point(i));
        }
        let all = s.complete();
        assert!(all.len() <= 9, "{}", all.len());
        assert_eq!(s.resolution(), 4);
        assert_eq!(all.iter().map(|p| p.ok).sum::<u64>(), 200);
        assert_eq!(all.last().unwrap().at_s, 20.0);
        assert_eq!(all.iter().map(|p| p.max_us).max(), Some(20));
        assert!(all.iter().all(|p| (p.tps - 10.0).abs() < 1e-9));
    }
}
