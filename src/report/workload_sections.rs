//! The workload kinds' sections of a run's report, in page order: the one place that
//! names the kinds. report.html and summary.md each show the list in one loop.

use super::section::Section;
use crate::metrics::Summary;

/// Each kind's section of a run's results; None when the run did not have it.
type SectionOf = fn(&Summary) -> Option<Box<dyn Section>>;

const KINDS: [SectionOf; 5] = [
    super::stream_view::section,
    super::parts::section,
    super::drain::section,
    super::rebalance::section,
    super::attack::section,
];

/// The sections the run's results have, in page order.
pub(super) fn of(results: &Summary) -> Vec<Box<dyn Section>> {
    KINDS
        .iter()
        .filter_map(|section| section(results))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::of;
    use crate::metrics::Summary;
    use crate::metrics::attack::AttackStats;
    use crate::metrics::parts::{DrainSummary, PartsSummary};
    use crate::metrics::rebalance::RebalanceStats;
    use crate::metrics::stream::{RecipientSummary, StreamSummary};
    use std::time::Duration;

    /// A run's results with no workload kind's figures.
    fn plain() -> Summary {
        crate::metrics::Recorder::new().0.summary_now()
    }

    fn parts() -> PartsSummary {
        PartsSummary {
            max_parts: 4,
            payments: 2,
            unknown: 0,
            more_than_one_attempt: 1,
            more_than_one_attempt_share: 0.5,
            retried: 0,
            retried_share: 0.0,
            multi_part: 1,
            by_parts: Vec::new(),
        }
    }

    fn rebalance() -> crate::metrics::rebalance::RebalanceSummary {
        let s = Duration::from_secs;
        RebalanceStats::new(("alice", "carol", "bob"), 1_000, s(10), None, 10).summary()
    }

    fn ids(results: &Summary) -> Vec<&'static str> {
        of(results).iter().map(|s| s.id()).collect()
    }

    #[test]
    fn a_run_has_the_sections_of_its_workload_kinds_in_page_order() {
        let mut results = plain();
        assert!(ids(&results).is_empty(), "a plain run has none");
        results.rebalance = Some(rebalance());
        results.parts = Some(parts());
        assert_eq!(ids(&results), ["parts", "rebalance"]);
        for section in of(&results) {
            let html = section.html().unwrap();
            let md = section.markdown();
            assert!(!html.is_empty() && md.starts_with('\n'), "{}", section.id());
        }
        results.attack = Some(
            AttackStats::new(Duration::from_secs(1), Duration::from_secs(2)).summary(
                ("mallory", "eve"),
                2,
                1_000,
                Duration::from_secs(5),
                3.0,
            ),
        );
        results.drain = Some(DrainSummary {
            stop_after: 3,
            liquidity_failures: 0,
            first_liquidity_failure_s: None,
        });
        results.stream = Some(StreamSummary::default());
        assert_eq!(
            ids(&results),
            ["stream", "parts", "drain", "rebalance", "attack"]
        );
        let titles: Vec<&str> = of(&results).iter().map(|s| s.title()).collect();
        assert_eq!(
            titles,
            [
                "Stream",
                "Parts per payment",
                "Draining",
                "Rebalancing",
                "Jamming"
            ]
        );
    }

    #[test]
    fn a_section_escapes_what_it_shows() {
        let mut results = plain();
        results.stream = Some(StreamSummary {
            recipients: vec![RecipientSummary {
                recipient: "<b>bob</b> & co".into(),
                ..RecipientSummary::default()
            }],
            ..StreamSummary::default()
        });
        let html = of(&results)[0].html().unwrap();
        assert!(
            html.contains("<td>&lt;b&gt;bob&lt;&#x2f;b&gt; &amp; co</td>"),
            "{html}"
        );
        assert!(!html.contains("<b>"), "{html}");
    }
}
