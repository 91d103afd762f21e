//! Small widgets, each fed the [`Snapshot`](crate::metrics::Snapshot) it shows.
//! They format and lay out; the figures come computed in the snapshot.

mod failures;
mod header;
mod help;
mod latency;
mod nodes;
mod setup;
mod tps;

pub use failures::Failures;
pub use header::{Footer, Header, machine_line};
pub use help::HelpOverlay;
pub use latency::{LatencyChart, LatencyTable};
pub use nodes::NodeTable;
pub use setup::SetupView;
pub use tps::TpsSparkline;

use std::time::Duration;

/// A latency for people (`850 µs`, `45.1 ms`, `1.24 s`), the same as in reports.
pub use crate::report::format::latency_us as latency;

/// `1,234,567`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `01:02:03`.
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(latency(850), "850 µs");
        assert_eq!(latency(45_100), "45.1 ms");
        assert_eq!(latency(1_240_000), "1.24 s");
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(clock(Duration::from_secs(3723)), "01:02:03");
    }
}
