//! The latency percentile spectrum: the points HdrHistogram's own percentile
//! distribution prints (its `.hgrm` output), for the report's spectrum chart.

use hdrhistogram::Histogram;
use serde::Serialize;

/// Ticks per half distance to 100%, as HdrHistogram's percentile output uses: 5
/// points from 0% to 50%, 5 more to 75%, 5 more to 87.5%, and so on up to the max.
pub const TICKS_PER_HALF_DISTANCE: u32 = 5;

/// Most points kept. The iteration gives about `2 × 5 × log2(count)` points (some
/// 300 for a billion payments), so this cap only guards against surprises; past it,
/// points are thinned evenly and the last (the max) is always kept.
pub const MAX_SPECTRUM_POINTS: usize = 512;

/// One point of the spectrum: `percentile` of the successful payments took at most
/// `latency_us`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SpectrumPoint {
    /// 0 to 100.
    pub percentile: f64,
    /// The highest latency equivalent to the recorded values at this percentile, µs.
    pub latency_us: u64,
    /// Payments at or below `latency_us`.
    pub total_count: u64,
}

/// The spectrum of `h`: percentiles rising, latencies never falling, the last point
/// at 100% and the max. Empty for an empty histogram.
pub fn spectrum(h: &Histogram<u64>) -> Vec<SpectrumPoint> {
    if h.is_empty() {
        return Vec::new();
    }
    let mut total = 0u64;
    let mut points: Vec<SpectrumPoint> = h
        .iter_quantiles(TICKS_PER_HALF_DISTANCE)
        .map(|v| {
            total += v.count_since_last_iteration();
            SpectrumPoint {
                percentile: v.quantile_iterated_to() * 100.0,
                latency_us: v.value_iterated_to(),
                total_count: total,
            }
        })
        .collect();
    if points.len() > MAX_SPECTRUM_POINTS {
        let last = *points.last().expect("not empty");
        let step = points.len().div_ceil(MAX_SPECTRUM_POINTS - 1);
        points = points.into_iter().step_by(step).collect();
        if points.last() != Some(&last) {
            points.push(last);
        }
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram() -> Histogram<u64> {
        Histogram::new_with_bounds(1, 600_000_000, 3).unwrap()
    }

    #[test]
    fn points_rise_and_end_at_the_max() {
        let mut h = histogram();
        for i in 1..=10_000u64 {
            h.record(i * 37 % 9_973 + 100).unwrap();
        }
        h.record(2_500_000).unwrap();
        let s = spectrum(&h);
        assert!(s.len() > 20, "{}", s.len());
        assert!(s.len() <= MAX_SPECTRUM_POINTS);
        assert!(
            s.windows(2)
                .all(|w| w[0].percentile < w[1].percentile && w[0].latency_us <= w[1].latency_us),
            "{s:?}"
        );
        let last = s.last().unwrap();
        assert_eq!(last.percentile, 100.0);
        assert_eq!(last.latency_us, h.max());
        assert_eq!(last.total_count, h.len());
        assert_eq!(s[0].percentile, 0.0);
        // The tick spacing halves every half distance: points beyond 99% exist.
        assert!(
            s.iter()
                .any(|p| p.percentile > 99.0 && p.percentile < 100.0)
        );
        let p50 = s.iter().find(|p| p.percentile >= 50.0).unwrap();
        assert_eq!(p50.latency_us, h.value_at_quantile(p50.percentile / 100.0));
    }

    #[test]
    fn empty_and_single_value_histograms() {
        assert!(spectrum(&histogram()).is_empty());
        let mut h = histogram();
        h.record(1234).unwrap();
        let s = spectrum(&h);
        let last = s.last().unwrap();
        assert_eq!((last.percentile, last.total_count), (100.0, 1));
        assert_eq!(last.latency_us, h.max());
    }

    #[test]
    fn huge_counts_stay_bounded() {
        let mut h = histogram();
        for v in (1..2_000_000u64).step_by(7) {
            h.record_n(v, 1_000_000).unwrap();
        }
        let s = spectrum(&h);
        assert!(s.len() <= MAX_SPECTRUM_POINTS, "{}", s.len());
        assert_eq!(s.last().unwrap().latency_us, h.max());
    }
}
