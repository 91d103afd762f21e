//! The basic run's report, checked alike on each container runtime (`docker::` in
//! containers, `kube::` in pods): two LND nodes paying, the load complete with every
//! payment ok, the runtime named with the image it ran, no credential in the report,
//! and CPU and memory read for each node.

use crate::common::*;
use std::path::Path;

/// The report in `report_dir` of a run on `runtime` ("docker", "kubernetes") that
/// made `payments` payments; returned for the checks of the runtime's own.
pub fn check_report(report_dir: &Path, runtime: &str, payments: u64) -> serde_json::Value {
    let text = std::fs::read_to_string(report_dir.join("report.json")).unwrap();
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_matches_schema(&report);
    assert_eq!(report["complete"], true);
    assert_eq!(report["results"]["ok"], payments, "{:#}", report["results"]);
    assert_eq!(report["results"]["failed"], 0, "{:#}", report["results"]);
    let named = report["runtime"].as_str().unwrap();
    assert!(
        named.starts_with(&format!("{runtime} (")) && named.contains("lnbench/lnd:v0.21.1-beta"),
        "{named}"
    );
    // Credentials never reach the report.
    assert!(
        !text.contains("macaroon\":"),
        "a macaroon field in report.json"
    );
    assert_cpu_and_memory_of_every_node(&report, 2);
    report
}
