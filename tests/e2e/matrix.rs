//! The implementation matrix end to end: a sweep over implementations through the real
//! binary, with real LND and Core Lightning nodes on a real Bitcoin Core chain. LDK is
//! in the matrix too, and skipped with its reason (no keysend at the pinned commit)
//! without anything started for it. The combined report is checked against
//! docs/sweep.schema.json and opened in headless Chromium (a screenshot is kept).

use crate::common::scenario_run::{Finished, lnd_pair_on};
use crate::common::{CLN_BUILD, built_on_bitcoind, chromium_render};
use std::path::Path;

const PAYMENTS: u64 = 60;

fn scenario() -> String {
    lnd_pair_on(
        "bitcoind",
        "e2e-matrix",
        "description: LND and Core Lightning each paying itself; LDK skipped (no keysend).\nruntime: local\n",
        2000000,
        2,
    ) + "  amount_msat: 1000
  concurrency: 4
  stop:
    payments: 60
    duration: 3m
  payment_timeout: 60s
after_load:
  restart: [bob]
sweep:
  implementation: [lnd, cln, ldk]
  p99_bound: 5s
"
}

#[test]
fn a_matrix_of_two_implementations_reports_each_and_skips_what_cannot_run() {
    if !built_on_bitcoind("e2e_matrix", "lightningd", CLN_BUILD) {
        return;
    }
    let run = Finished::run(&scenario());
    let (log, report_dir) = (&run.log, run.report_dir());
    assert_eq!(run.status.code(), Some(0), "{log}");
    assert!(
        log.contains("skipped implementation=ldk: kind: keysend, and node alice is ldk"),
        "{log}"
    );
    // Two networks were brought up (lnd, cln); none for ldk.
    assert_eq!(log.matches("==> network").count(), 2, "{log}");

    let sweep = run.sweep_json();
    assert_eq!(sweep["complete"], true);
    assert_eq!(sweep["parameters"], serde_json::json!(["implementation"]));
    let points = sweep["points"].as_array().unwrap();
    assert_eq!(points.len(), 3);
    for (point, implementation) in points[..2].iter().zip(["lnd", "cln"]) {
        assert_eq!(point["status"], "done", "{point:#}");
        let r = &point["results"];
        assert_eq!(r["ok"], PAYMENTS, "{point:#}");
        assert_eq!(r["failed"], 0, "{point:#}");
        let nodes = r["nodes"].as_array().unwrap();
        assert_eq!(nodes.len(), 2);
        for n in nodes {
            assert_eq!(n["implementation"], implementation, "{n:#}");
            assert!(!n["version"].as_str().unwrap().is_empty(), "{n:#}");
            assert!(n["cpu_ms_per_payment"].as_f64().unwrap() > 0.0, "{n:#}");
        }
        let bob = nodes.iter().find(|n| n["node"] == "bob").unwrap();
        assert!(bob["restart_s"].as_f64().unwrap() > 0.0, "{bob:#}");
        // Each point's own report is beside the combined one.
        let label = point["label"].as_str().unwrap();
        assert!(report_dir.join(label).join("report.json").is_file());
        eprintln!(
            "{label}: {} TPS, p99 {} us, alice CPU {:.2} ms/payment, bob restart {:.1} s",
            r["tps_avg"],
            r["latency"]["p99_us"],
            nodes[0]["cpu_ms_per_payment"].as_f64().unwrap(),
            bob["restart_s"].as_f64().unwrap()
        );
    }
    assert_eq!(points[1]["results"]["nodes"][0]["database"], "sqlite");
    assert_eq!(points[2]["status"], "skipped");
    assert_eq!(points[2]["kind"], "keysend", "the kind it would have run");
    assert!(
        (points[2]["reason"].as_str().unwrap()).contains("no keysend"),
        "{:#}",
        points[2]
    );
    assert_eq!(points[2]["results"], serde_json::Value::Null);
    let groups: Vec<&str> = (sweep["best_by_group"].as_array().unwrap().iter())
        .map(|g| g["group"].as_str().unwrap())
        .collect();
    assert_eq!(
        groups,
        [
            "implementation=lnd",
            "implementation=cln",
            "implementation=ldk"
        ]
    );

    let md = std::fs::read_to_string(report_dir.join("sweep.md")).unwrap();
    assert!(md.contains("### Implementation matrix"), "{md}");
    assert!(md.contains("| ldk | - | - |"), "{md}");
    for chart in ["matrix-tps.svg", "matrix-p99.svg"] {
        assert!(report_dir.join(chart).is_file(), "{chart}");
    }
    screenshot(&report_dir.join("sweep.html"));
}

/// The page as a person sees it: rendered offline by headless Chromium, the matrix
/// table and both grouped charts in the DOM, a screenshot kept for the test's output.
fn screenshot(html: &Path) {
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("e2e-matrix");
    std::fs::create_dir_all(&shots).unwrap();
    let png = shots.join("sweep.png");
    let dom = chromium_render(html, &png);
    assert!(dom.contains("<section id=\"matrix\">"), "matrix section");
    for id in ["matrix-tps.svg", "matrix-p99.svg"] {
        let start = dom
            .find(&format!("<figure id=\"{id}\""))
            .unwrap_or_else(|| panic!("figure {id}"));
        assert!(dom[start..].contains("<svg"), "{id} holds its chart");
    }
    assert!(
        dom.contains("class=\"skipped\""),
        "the skipped row is marked"
    );
    let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
    assert!(
        size > 10_000,
        "screenshot {} is {size} bytes",
        png.display()
    );
    eprintln!("screenshot of sweep.html: {}", png.display());
}
