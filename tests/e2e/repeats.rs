//! Repeats end to end, through the real binary on real LND nodes and a real btcd chain:
//! `repeat: 3` on one network with a settle pause, each repeat's figures and their
//! spread in sweep.json (checked against docs/sweep.schema.json), thresholds judged on
//! the median, and `compare` reading the repeated runs and saying what noise allows.

use crate::common::scenario_run::{Finished, lnd_pair};
use crate::common::*;
use serde_json::Value;

const PAYMENTS: u64 = 80;

/// alice pays bob by keysend, 3 times; a TPS floor no pair reaches, judged on the
/// median (so the run must fail its thresholds, by the median).
fn scenario_yaml() -> String {
    lnd_pair("e2e-repeats", "runtime: local\n", 2000000, 4)
        + "  amount_msat: 1000
  concurrency: 4
  stop:
    payments: 80
    duration: 3m
  payment_timeout: 60s
thresholds:
  min_tps: 100000
repeat: { count: 3, settle: 2s, thresholds: median }
"
}

#[test]
fn three_repeats_report_each_run_and_their_spread_and_compare_reads_them() {
    require_node_binaries();
    let run = Finished::run(&scenario_yaml());
    let (log, report) = (&run.log, run.report_dir());
    // The median TPS is far under the floor: thresholds fail (exit 1), nothing else.
    assert_eq!(run.status.code(), Some(1), "{log}");
    assert_eq!(log.matches("==> network").count(), 1, "one network: {log}");
    assert_eq!(
        log.matches("==> settling 2 s before repeat=").count(),
        2,
        "{log}"
    );

    let sweep = run.sweep_json();
    assert_eq!(sweep["parameters"], serde_json::json!(["repeat"]));
    assert_eq!(sweep["repeat"]["count"], 3);
    assert_eq!(sweep["repeat"]["thresholds"], "median");
    let points = sweep["points"].as_array().unwrap();
    assert_eq!(points.len(), 3);
    let spread = &sweep["spread"][0];
    assert_eq!(spread["group"], "all");
    assert_eq!(spread["thresholds_passed"], false);
    let repeats = spread["repeats"].as_array().unwrap();
    assert_eq!(repeats.len(), 3);
    let mut tps = Vec::new();
    for (k, (p, r)) in points.iter().zip(repeats).enumerate() {
        assert_eq!(p["label"], format!("repeat={}", k + 1));
        assert_eq!(p["status"], "done");
        assert_eq!(p["results"]["ok"], PAYMENTS, "{p:#}");
        // Each repeat's figures in the spread are its point's.
        assert_eq!(r["tps_avg"], p["results"]["tps_avg"]);
        assert_eq!(r["p99_us"], p["results"]["latency"]["p99_us"]);
        // Each repeat has its own report, against the run schema.
        let own: Value = serde_json::from_str(
            &std::fs::read_to_string(report.join(format!("repeat={}", k + 1)).join("report.json"))
                .unwrap(),
        )
        .unwrap();
        assert_matches_schema(&own);
        tps.push(r["tps_avg"].as_f64().unwrap());
    }
    tps.sort_by(f64::total_cmp);
    let stats = &spread["tps_avg"];
    assert_eq!(stats["n"], 3);
    assert_eq!(stats["min"].as_f64().unwrap(), tps[0]);
    assert_eq!(stats["median"].as_f64().unwrap(), tps[1]);
    assert_eq!(stats["max"].as_f64().unwrap(), tps[2]);
    assert!(stats["stddev"].as_f64().unwrap() >= 0.0);
    // The coefficient of variation is the repeats' sample sd over their mean.
    let mean = tps.iter().sum::<f64>() / 3.0;
    let sd = (tps.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
    let cv = spread["tps_cv_pct"].as_f64().unwrap();
    assert!((cv - 100.0 * sd / mean).abs() < 1e-6, "CV {cv} for {tps:?}");
    assert_eq!(
        spread["disturbed"].as_u64().unwrap() as usize,
        repeats.iter().filter(|r| r["disturbed"] == true).count()
    );
    eprintln!(
        "TPS per repeat {tps:?}: median {} sd {:.2}; p99 median {} us",
        stats["median"],
        stats["stddev"].as_f64().unwrap(),
        spread["p99_us"]["median"]
    );
    let md = std::fs::read_to_string(report.join("sweep.md")).unwrap();
    assert!(md.contains("### Spread across repeats"), "{md}");
    let html = std::fs::read_to_string(report.join("sweep.html")).unwrap();
    assert!(html.contains("<section id=\"spread\">"));

    // compare reads the repeated runs: against themselves nothing is significant, and
    // with 3 repeats a side it says that nothing could be.
    let out_dir = run.work.path().join("compare");
    let cmp = lnbench_command()
        .arg("compare")
        .arg(&report)
        .arg(&report)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .expect("run compare");
    let md = String::from_utf8_lossy(&cmp.stdout).into_owned();
    assert!(
        cmp.status.success(),
        "{md}\n{}",
        String::from_utf8_lossy(&cmp.stderr)
    );
    assert!(md.contains("(median, n=3)"), "{md}");
    assert!(
        md.contains(
            "within noise (Mann-Whitney U, p = 1.000, 3 vs 3 repeats; so few cannot reach p < 0.05"
        ),
        "{md}"
    );
    assert!(!md.contains(" %, significant"), "{md}");
}
