//! `series.csv`: the run's per-second series (the report's `results.series`) as CSV,
//! for spreadsheets, pandas or gnuplot, as oha and k6 write theirs. The columns carry
//! report.json's names, so the two read alike.

use super::Report;
use crate::files::write_file;
use crate::metrics::SeriesPoint;
use anyhow::Result;
use std::fmt::Write;
use std::path::{Path, PathBuf};

pub const SERIES_FILE: &str = "series.csv";

/// The header: `at_s` is the end of the interval in seconds since the run started;
/// latencies are of the interval's successful payments, microseconds.
pub const SERIES_HEADER: &str = "at_s,active_s,tps,ok,failed,p50_us,p90_us,p99_us,max_us,warm_up";

/// The CSV text of `series`: the header, then a row per point (per second, or per
/// `series_resolution_s` seconds after a run longer than a day).
pub fn series(series: &[SeriesPoint]) -> String {
    let mut csv = String::with_capacity(64 * (series.len() + 1));
    csv.push_str(SERIES_HEADER);
    csv.push('\n');
    for p in series {
        let _ = writeln!(
            csv,
            "{:.3},{:.3},{:.3},{},{},{},{},{},{},{}",
            p.at_s,
            p.active_s,
            p.tps,
            p.ok,
            p.failed,
            p.p50_us,
            p.p90_us,
            p.p99_us,
            p.max_us,
            p.warm_up
        );
    }
    csv
}

/// Writes `dir/series.csv`.
pub fn write(report: &Report, dir: &Path) -> Result<PathBuf> {
    write_file(dir, SERIES_FILE, &series(&report.results.series))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_per_point_under_the_header() {
        let points = [
            SeriesPoint {
                at_s: 1.0,
                active_s: 1.0,
                tps: 12.5,
                ok: 12,
                failed: 1,
                p50_us: 100,
                p90_us: 200,
                p99_us: 300,
                max_us: 400,
                warm_up: true,
            },
            SeriesPoint::default(),
        ];
        let csv = series(&points);
        let lines: Vec<_> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], SERIES_HEADER);
        assert_eq!(lines[1], "1.000,1.000,12.500,12,1,100,200,300,400,true");
        assert_eq!(lines[2], "0.000,0.000,0.000,0,0,0,0,0,0,false");
    }
}
