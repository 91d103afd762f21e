//! Thresholds on one open-loop phase, checked against a real engine run over fake
//! nodes: the ramp and the hold get their own figures, and a threshold on one phase
//! uses only that phase's payments.

mod common;

use lnbench_tui::metrics::Stage;
use lnbench_tui::node::fake::{FakeConfig, FakeLatency, FakeNode};
use lnbench_tui::report::{self, thresholds};
use lnbench_tui::scenario::{Load, Phase, PhaseKind, PhaseThreshold, StopCondition, Threshold};
use std::time::Duration;

fn phase(kind: PhaseKind, from_rate: f64, to_rate: f64, ms: u64) -> Phase {
    Phase {
        kind,
        from_rate,
        to_rate,
        duration: Duration::from_millis(ms),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ramp_and_the_hold_are_checked_on_their_own_figures() {
    let sender = FakeNode::new(FakeConfig {
        latency: FakeLatency::Fixed(Duration::from_millis(2)),
        ..FakeConfig::instant("alice")
    });
    // Warm-up 0.5 s at 40/s, ramp 40 -> 80/s over 1.5 s (~90 payments), hold 300/s
    // for 1.5 s (~450 payments).
    let load = Load::Open {
        phases: vec![
            phase(PhaseKind::WarmUp, 40.0, 40.0, 500),
            phase(PhaseKind::Ramp, 40.0, 80.0, 1500),
            phase(PhaseKind::Hold, 300.0, 300.0, 1500),
        ],
    };
    let stop = StopCondition {
        payments: None,
        duration: Some(Duration::from_secs(10)),
        liquidity_failures: None,
    };
    let summary = common::run_fake(common::fake_plan(sender, load, stop)).await;

    let stages: Vec<Stage> = summary.phases.iter().map(|p| p.phase).collect();
    assert_eq!(stages, [Stage::Ramp, Stage::Hold]);
    let (ramp, hold) = (&summary.phases[0], &summary.phases[1]);
    assert_eq!(
        ramp.ok + hold.ok,
        summary.ok,
        "every counted payment is in a phase"
    );
    assert_eq!(
        ramp.latency.count + hold.latency.count,
        summary.latency.count
    );
    assert!((80..=100).contains(&ramp.ok), "ramp made {}", ramp.ok);
    assert!((420..=460).contains(&hold.ok), "hold made {}", hold.ok);
    assert!(
        (ramp.active_s - 1.5).abs() < 0.3,
        "ramp active {}",
        ramp.active_s
    );
    assert!(
        hold.tps_avg > 2.0 * ramp.tps_avg,
        "{} vs {}",
        hold.tps_avg,
        ramp.tps_avg
    );
    let whole_active: f64 = summary.phases.iter().map(|p| p.active_s).sum();
    assert!(
        (whole_active - summary.active_s).abs() < 0.1,
        "{whole_active} vs {}",
        summary.active_s
    );

    // 150/s: the hold reaches it, the ramp does not; the whole run is in between.
    let on = |phase, threshold| PhaseThreshold { phase, threshold };
    let mut results = thresholds::evaluate(&[Threshold::MinTps(150.0)], &summary);
    results.extend(thresholds::evaluate_phases(
        &[
            on(PhaseKind::Hold, Threshold::MinTps(150.0)),
            on(PhaseKind::Ramp, Threshold::MinTps(150.0)),
            on(PhaseKind::Ramp, Threshold::MaxFailureRate(0.0)),
        ],
        &summary,
    ));
    let verdicts: Vec<(String, bool)> = results.iter().map(|t| (t.label(), t.passed)).collect();
    assert_eq!(
        verdicts[1..],
        [
            ("min_tps (hold)".to_string(), true),
            ("min_tps (ramp)".to_string(), false),
            ("max_failure_rate (ramp)".to_string(), true),
        ]
    );
    assert_eq!(results[1].actual, Some(hold.tps_avg));
    assert_eq!(results[2].actual, Some(ramp.tps_avg));

    // The report shows them: JSON (schema-valid), HTML and summary.md.
    let mut rep = common::sample_report("name: phases\n", summary);
    rep.thresholds = results;
    let dir = tempfile::tempdir().unwrap();
    report::write_all(&rep, dir.path()).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    common::assert_matches_schema(&json);
    assert_eq!(json["results"]["phases"][1]["phase"], "hold");
    assert_eq!(json["thresholds"][2]["phase"], "ramp");
    assert!(json["thresholds"][0].get("phase").is_none());
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains("id=\"phases\""));
    assert!(html.contains("min_tps (ramp)"));
    let md = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(md.contains("| phase | ok / failed |"), "{md}");
    assert!(
        md.contains(&format!("| hold | {} / 0 |", hold_ok(&json))),
        "{md}"
    );
    assert!(md.contains("| min_tps (ramp) |"), "{md}");
}

fn hold_ok(json: &serde_json::Value) -> u64 {
    json["results"]["phases"][1]["ok"].as_u64().unwrap()
}
