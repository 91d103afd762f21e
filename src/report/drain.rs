//! The drain's section of report.html and summary.md (`stop: liquidity_failures:`,
//! `results.drain`): when the channels first ran dry, and the stop.

use super::format::cell;
use super::section::{self, Section};
use crate::metrics::Summary;
use crate::metrics::parts::DrainSummary;

/// The section, or None for a run without a liquidity stop.
pub(super) fn section(results: &Summary) -> Option<Box<dyn Section>> {
    let drain = results.drain.as_ref()?;
    Some(Box::new(DrainLine(drain_line(drain))))
}

/// The section's one line.
struct DrainLine(String);

impl Section for DrainLine {
    fn id(&self) -> &'static str {
        "drain"
    }

    fn title(&self) -> &'static str {
        "Draining"
    }

    fn html(&self) -> anyhow::Result<String> {
        section::html(
            self.id(),
            "<p>{{ line }}</p>\n",
            minijinja::context! { line => &self.0 },
        )
    }

    fn markdown(&self) -> String {
        format!("\nDrain: {}\n", cell(&self.0))
    }
}

/// The drain's one line: when the channels first ran dry, and the stop.
fn drain_line(drain: &DrainSummary) -> String {
    let first = match drain.first_liquidity_failure_s {
        Some(s) => format!("the first liquidity failure came at {s:.1} s on the charts' clock"),
        None => "no payment failed for lack of liquidity".to_string(),
    };
    format!(
        "{first}; {} liquidity failures (no_route, insufficient_balance) of the {} that stop \
         the load. The success rate over time is in the TPS chart and the series.",
        drain.liquidity_failures, drain.stop_after
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_drain_reads_as_a_sentence() {
        let d = drain_line(&DrainSummary {
            stop_after: 3,
            liquidity_failures: 3,
            first_liquidity_failure_s: Some(12.34),
        });
        assert!(
            d.starts_with("the first liquidity failure came at 12.3 s on the charts' clock"),
            "{d}"
        );
    }
}
