//! report.json, as the tool serializes it, matches the published schema
//! (docs/report.schema.json), with results produced by the real engine over fake nodes.

mod common;

use lnbench_tui::engine::{self, Plan, Route};
use lnbench_tui::metrics::Recorder;
use lnbench_tui::node::FailureReason;
use lnbench_tui::node::fake::{FakeConfig, FakeLatency, FakeNode};
use lnbench_tui::report::{self, Report};
use lnbench_tui::scenario::{Load, PaymentKind, StopCondition};
use lnbench_tui::setup::StepTiming;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

async fn fake_results() -> lnbench_tui::metrics::Summary {
    let sender = FakeNode::new(FakeConfig {
        latency: FakeLatency::Fixed(Duration::from_millis(2)),
        failures: vec![(FailureReason::NoRoute, 0.1)],
        seed: 7,
        ..FakeConfig::instant("alice")
    });
    let receiver = FakeNode::new(FakeConfig::instant("bob"));
    let plan = Plan {
        routes: vec![Route {
            receiver_pubkey: receiver.pubkey().to_string(),
            sender: Arc::new(sender),
            receiver: Arc::new(receiver),
        }],
        kind: PaymentKind::Keysend,
        amount_msat: 1000,
        load: Load::Closed { concurrency: 4 },
        stop: StopCondition {
            payments: Some(200),
            duration: None,
        },
        payment_timeout: Duration::from_secs(5),
    };
    let (recorder, _snapshots) = Recorder::new();
    let (_tx, rx) = tokio::sync::mpsc::unbounded_channel();
    engine::run(plan, recorder, rx, CancellationToken::new())
        .await
        .expect("engine runs")
        .summary
}

fn report_with(results: lnbench_tui::metrics::Summary) -> Report {
    Report {
        schema_version: report::SCHEMA_VERSION,
        tool: report::Tool::this(),
        complete: true,
        interrupted_by: None,
        started_at: "2026-11-22T10:00:00Z".into(),
        finished_at: "2026-11-22T10:01:00Z".into(),
        scenario: report::ScenarioText {
            name: "fake".into(),
            description: "fake nodes".into(),
            path: "scenarios/fake.yaml".into(),
            text: "name: fake\n".into(),
        },
        runtime: "local".into(),
        host: report::Host::detect(),
        chain: report::ChainInfo {
            implementation: "btcd".into(),
            version: "btcd version 0.24.2-beta".into(),
        },
        nodes: vec![report::NodeReport {
            name: "alice".into(),
            group: "alice".into(),
            implementation: "lnd".into(),
            version: "0.21.1-beta".into(),
            pubkey: format!("02{}", "ab".repeat(32)),
            role: "sender".into(),
            binary: "lnd".into(),
        }],
        workload: report::WorkloadReport {
            kind: "keysend".into(),
            amount_msat: 1000,
            load_model: "closed".into(),
            concurrency: Some(4),
            senders: vec!["alice".into()],
            receivers: vec!["bob".into()],
            stop_after_payments: Some(200),
            stop_after_seconds: None,
            payment_timeout_seconds: 5.0,
        },
        setup: vec![StepTiming {
            step: "chain up".into(),
            seconds: 1.5,
        }],
        results,
        thresholds: Vec::new(),
    }
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
    let path = report::json::write(&report_with(results), dir.path()).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    common::assert_matches_schema(&json);
    assert_eq!(
        json["results"]["failures_by_reason"]["no_route"],
        json["results"]["failed"]
    );
}

#[tokio::test]
async fn schema_rejects_a_report_missing_its_results() {
    let mut json = serde_json::to_value(report_with(fake_results().await)).unwrap();
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
    let mut report = report_with(results);
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
