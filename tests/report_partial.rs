//! A run stopped before its load started still writes a report: with no payments,
//! every file is written, the JSON matches the schema and the HTML says it is partial.

mod common;

use common::{assert_matches_schema, sample_report};
use lnbench_tui::metrics::Recorder;
use lnbench_tui::report;

#[test]
fn a_report_without_payments_is_written_and_marked_partial() {
    let mut r = sample_report("name: sample\n", Recorder::new().0.finish());
    r.complete = false;
    r.interrupted_by = Some("SIGTERM".into());
    let dir = tempfile::tempdir().unwrap();
    let written = report::write_all(&r, dir.path()).expect("report written");
    assert!(written.iter().any(|p| p.ends_with("report.html")));

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    assert_matches_schema(&json);
    assert_eq!(json["complete"], false);
    assert_eq!(json["results"]["ok"], 0);

    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains("SIGTERM"), "the reason is shown");
    assert!(
        html.to_lowercase().contains("partial"),
        "the HTML says the report is partial"
    );
}

/// A symlink planted in a shared report directory (at the name a fixed temporary
/// file of report.json would have) does not redirect the write of report.json.
#[test]
fn a_planted_symlink_does_not_redirect_report_json() {
    let r = sample_report("name: sample\n", Recorder::new().0.finish());
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "untouched").unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join(".report.json.tmp")).unwrap();
    report::json::write(&r, dir.path()).expect("report.json written");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
    let json = std::fs::read_to_string(dir.path().join("report.json")).unwrap();
    assert!(json.ends_with("}\n"), "{json}");
}
