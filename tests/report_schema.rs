//! report.json, as the tool serializes it, matches the published schema
//! (docs/report.schema.json), with results produced by the real engine over fake nodes.

mod common;

use lnbench_tui::node::FailureReason;
use lnbench_tui::node::fake::{FakeConfig, FakeLatency, FakeNode};
use lnbench_tui::report::{self};
use lnbench_tui::scenario::{Load, StopCondition};
use std::time::Duration;

async fn fake_results() -> lnbench_tui::metrics::Summary {
    let sender = FakeNode::new(FakeConfig {
        latency: FakeLatency::Fixed(Duration::from_millis(2)),
        failures: vec![(FailureReason::NoRoute, 0.1)],
        seed: 7,
        ..FakeConfig::instant("alice")
    });
    let stop = StopCondition {
        payments: Some(200),
        duration: None,
    };
    common::run_fake(common::fake_plan(
        sender,
        Load::Closed { concurrency: 4 },
        stop,
    ))
    .await
}

#[tokio::test]
async fn serialized_report_matches_the_published_schema() {
    let results = fake_results().await;
    assert_eq!(results.ok + results.failed, 200);
    assert!(
        results.failed > 0,
        "the seeded failure model should fail some payments"
    );
    let dir = tempfile::tempdir().unwrap();
    let path =
        report::json::write(&common::sample_report("name: fake\n", results), dir.path()).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    common::assert_matches_schema(&json);
    let spectrum = json["results"]["latency_spectrum"].as_array().unwrap();
    let last = spectrum
        .last()
        .expect("a spectrum for a run with successes");
    assert_eq!(last["percentile"], 100.0);
    assert_eq!(last["total_count"], json["results"]["ok"]);
    assert_eq!(last["latency_us"], json["results"]["latency"]["max_us"]);
    assert_eq!(
        json["results"]["failures_by_reason"]["no_route"],
        json["results"]["failed"]
    );
}

#[tokio::test]
async fn schema_rejects_a_report_missing_its_results() {
    let mut json =
        serde_json::to_value(common::sample_report("name: fake\n", fake_results().await)).unwrap();
    json["results"].as_object_mut().unwrap().remove("ok");
    let outcome = std::panic::catch_unwind(|| common::assert_matches_schema(&json));
    assert!(
        outcome.is_err(),
        "a report without results.ok must not validate"
    );
}

#[tokio::test]
async fn thresholds_in_the_report_match_the_schema() {
    use lnbench_tui::scenario::{LatencyStat, Threshold};
    let results = fake_results().await;
    let mut report = common::sample_report("name: fake\n", results);
    report.thresholds = report::thresholds::evaluate(
        &[
            Threshold::Latency {
                stat: LatencyStat::P99,
                max: Duration::from_secs(1),
            },
            Threshold::MinTps(1e9),
            Threshold::MaxFailureRate(0.5),
        ],
        &report.results,
    );
    let json = serde_json::to_value(&report).unwrap();
    common::assert_matches_schema(&json);
    assert_eq!(json["thresholds"][1]["passed"], false);

    let mut bad = json.clone();
    bad["thresholds"][0]["name"] = "p95_latency".into();
    let outcome = std::panic::catch_unwind(|| common::assert_matches_schema(&bad));
    assert!(
        outcome.is_err(),
        "an unknown threshold name must not validate"
    );
}
