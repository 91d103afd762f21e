//! `--junit FILE`: the threshold verdicts as JUnit XML, the file CI systems (GitLab,
//! Jenkins, GitHub test reporters) render as test results. One `<testsuite>` per point
//! that was measured, one `<testcase>` per threshold, a `<failure>` for each failed one.

use super::ThresholdResult;
use std::fmt::Write;

/// The verdicts of one point (or of the medians of a point's repeats).
pub struct Suite {
    /// The scenario's name, with the point's label in a sweep:
    /// `alice-pays-bob/concurrency=4`.
    pub name: String,
    /// When the run started (RFC 3339), for the suite's `timestamp`.
    pub timestamp: String,
    /// How long the load ran, seconds.
    pub time_s: f64,
    pub results: Vec<ThresholdResult>,
}

/// The JUnit XML text of `suites`.
pub fn render(suites: &[Suite]) -> String {
    let failed = |s: &Suite| s.results.iter().filter(|r| !r.passed).count();
    let tests: usize = suites.iter().map(|s| s.results.len()).sum();
    let failures: usize = suites.iter().map(failed).sum();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"lnbench-tui thresholds\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\">"
    );
    for suite in suites {
        let name = escape(&suite.name);
        let _ = writeln!(
            xml,
            "  <testsuite name=\"{name}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\" timestamp=\"{}\" time=\"{:.3}\">",
            suite.results.len(),
            failed(suite),
            escape(&suite.timestamp),
            suite.time_s,
        );
        for r in &suite.results {
            testcase(&mut xml, &name, r);
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
}

/// One threshold: its name as the test's, the suite as its class (how CI systems
/// group the cases); a failure says what was measured against what limit.
fn testcase(xml: &mut String, classname: &str, r: &ThresholdResult) {
    let name = escape(&r.label());
    let _ = write!(
        xml,
        "    <testcase name=\"{name}\" classname=\"{classname}\""
    );
    if r.passed {
        xml.push_str("/>\n");
        return;
    }
    let message = escape(&format!(
        "{}: {}, limit {}",
        r.label(),
        r.actual_text(),
        r.limit_text()
    ));
    let _ = writeln!(
        xml,
        ">\n      <failure message=\"{message}\" type=\"threshold\">{message}</failure>\n    </testcase>"
    );
}

/// Text for an XML attribute or element. Characters XML 1.0 cannot carry at all
/// (control characters but tab and newlines) become U+FFFD, so a scenario name with
/// an escape sequence still gives a file CI can parse.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => {
                let _ = write!(out, "&#{};", c as u32);
            }
            c if c < ' ' || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(name: &str, passed: bool) -> ThresholdResult {
        ThresholdResult {
            name: name.into(),
            unit: "us".into(),
            bound: "max".into(),
            limit: 2e6,
            actual: Some(if passed { 1e6 } else { 3e6 }),
            passed,
            phase: None,
        }
    }

    #[test]
    fn counts_and_failures_are_written() {
        let xml = render(&[Suite {
            name: "s/concurrency=4".into(),
            timestamp: "2025-01-01T00:00:00Z".into(),
            time_s: 12.5,
            results: vec![verdict("p50_latency", true), verdict("p99_latency", false)],
        }]);
        assert!(
            xml.contains("<testsuites name=\"lnbench-tui thresholds\" tests=\"2\" failures=\"1\"")
        );
        assert!(xml.contains("tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0\""));
        assert!(xml.contains("<testcase name=\"p50_latency\" classname=\"s/concurrency=4\"/>"));
        assert!(
            xml.contains("<failure message=\"p99_latency: 3.00 s, limit ≤ 2.00 s\""),
            "{xml}"
        );
    }

    #[test]
    fn markup_and_control_characters_are_escaped() {
        assert_eq!(escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
        assert_eq!(escape("x\u{1b}[2Jy"), "x\u{fffd}[2Jy");
        assert_eq!(escape("a\tb"), "a&#9;b");
    }
}
