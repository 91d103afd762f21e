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
        liquidity_failures: None,
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

/// A multi-part drain through the engine (invoices with `max_parts`, stopping on
/// liquidity failures), with one row of parts as an LND sender gives them.
#[tokio::test]
async fn parts_and_drain_results_match_the_schema() {
    use lnbench_tui::metrics::parts::PartsStats;
    let sender = FakeNode::new(FakeConfig {
        failures: vec![(FailureReason::InsufficientBalance, 0.2)],
        seed: 3,
        ..FakeConfig::instant("alice")
    });
    let stop = StopCondition {
        payments: Some(200),
        duration: None,
        liquidity_failures: Some(5),
    };
    let mut plan = common::fake_plan(sender, Load::Closed { concurrency: 2 }, stop);
    plan.kind = lnbench_tui::scenario::PaymentKind::Invoice;
    plan.max_parts = Some(4);
    let mut results = common::run_fake(plan).await;
    assert!(results.drain.is_some() && results.parts.is_some());
    let stats = PartsStats::new(4);
    stats.record(Some((3, 4)), Duration::from_millis(40));
    results.parts = Some(stats.summary());
    let json = serde_json::to_value(common::sample_report("name: fake\n", results)).unwrap();
    common::assert_matches_schema(&json);
    assert_eq!(json["results"]["parts"]["by_parts"][0]["parts"], 3);
    assert!(json["results"]["drain"]["first_liquidity_failure_s"].is_number());

    let mut wrong = json.clone();
    wrong["results"]["parts"]["by_parts"][0]["parts"] = serde_json::json!(0);
    let outcome = std::panic::catch_unwind(|| common::assert_matches_schema(&wrong));
    assert!(outcome.is_err(), "a payment in 0 parts must not validate");
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

#[tokio::test]
async fn restarts_and_the_tool_memory_match_the_schema_and_show_in_every_format() {
    use lnbench_tui::metrics::{ResourceLog, ResourceReading, TOOL_READING};
    use lnbench_tui::restart::RestartReport;
    let results = fake_results().await;
    let mut report = common::sample_report("name: fake\n", results);
    report.nodes[0].restart = Some(RestartReport {
        stop_s: 0.4,
        rpc_s: 3.2,
        channels_s: 6.5,
        active_channels: 10,
        data_dir_bytes: Some(150 * 1024 * 1024),
    });
    let mut log = ResourceLog::new();
    for (t, mem) in [(0.0, 30u64 << 20), (1.0, 40 << 20), (2.0, 35 << 20)] {
        let tool = ResourceReading {
            name: TOOL_READING.into(),
            mem_bytes: Some(mem),
            ..ResourceReading::default()
        };
        log.record_at(t, vec![tool]);
    }
    report.tool_resources = Some(log.report(TOOL_READING, report.results.ok));
    let json = serde_json::to_value(&report).unwrap();
    common::assert_matches_schema(&json);
    assert_eq!(json["nodes"][0]["restart"]["active_channels"], 10);

    let md = report::markdown::render(&report);
    assert!(
        md.contains("| alice | 150.0 MiB | 0.4 s | 3.2 s | 6.5 s (10) |"),
        "{md}"
    );
    assert!(
        md.contains("Tool RSS first / last / peak: 30.0 MiB / 35.0 MiB / 40.0 MiB."),
        "{md}"
    );
    let html = report::html::render(&report, &[]).unwrap();
    assert!(html.contains("<h2>Restart</h2>"), "no restart table");
    assert!(
        html.contains("<td class=\"num\">6.5 s</td>"),
        "no channels time"
    );

    let mut bad = json.clone();
    bad["nodes"][0]["restart"]["rpc_s"] = (-1.0).into();
    let outcome = std::panic::catch_unwind(|| common::assert_matches_schema(&bad));
    assert!(
        outcome.is_err(),
        "a negative restart time must not validate"
    );
}

/// The schema names every implementation the tool can report, and no other.
#[test]
fn the_schema_lists_every_implementation() {
    let text = std::fs::read_to_string(common::repo_file("docs/report.schema.json")).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    let listed = |pointer: &str| -> Vec<String> {
        schema
            .pointer(pointer)
            .and_then(|v| v.as_array())
            .unwrap_or_else(|| panic!("{pointer} in the schema"))
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    let nodes: Vec<String> = lnbench_tui::node::Implementation::ALL
        .iter()
        .map(|i| i.as_str().to_string())
        .collect();
    // `external`: a runtime: external run, which started no chain.
    let chains: Vec<String> = (lnbench_tui::chain::ChainKind::ALL.iter())
        .map(|k| k.as_str().to_string())
        .chain(["external".to_string()])
        .collect();
    assert_eq!(
        listed("/properties/nodes/items/properties/implementation/enum"),
        nodes
    );
    assert_eq!(
        listed("/properties/chain/properties/implementation/enum"),
        chains
    );
}

/// A stream's figures (`kind: stream`): ticks, splits and each recipient's splits,
/// from the real engine over fake nodes where one split in five fails.
#[tokio::test]
async fn a_stream_report_matches_the_schema() {
    use lnbench_tui::engine::{Plan, Route, stream::StreamPlan};
    use lnbench_tui::scenario::PaymentKind;
    use std::sync::Arc;
    let listener = FakeNode::new(FakeConfig {
        failures: vec![(FailureReason::NoRoute, 0.2)],
        seed: 3,
        ..FakeConfig::instant("listener")
    });
    let recipients = ["host", "guest"].map(|n| FakeNode::new(FakeConfig::instant(n)));
    let plan = Plan {
        routes: (recipients.iter())
            .map(|r| Route {
                sender: Arc::new(listener.clone()),
                receiver_pubkey: r.pubkey().to_string(),
                receiver: Arc::new(r.clone()),
            })
            .collect(),
        kind: PaymentKind::Stream,
        amount_msat: 1_000,
        load: Load::Closed { concurrency: 2 },
        stop: StopCondition {
            payments: Some(100),
            duration: None,
            liquidity_failures: None,
        },
        payment_timeout: Duration::from_secs(5),
        ledger: None,
        max_parts: None,
        attack: None,
        rebalance: None,
        stream: Some(StreamPlan {
            amounts: vec![600, 400],
        }),
    };
    let results = common::run_fake(plan).await;
    let dir = tempfile::tempdir().unwrap();
    let sample = common::sample_report("name: fake\n", results);
    let html = report::html::render(&sample, &[]).unwrap();
    assert!(html.contains("<h2>Stream</h2>"), "no stream section");
    assert!(
        html.contains("<td>host</td><td>600 msat</td>"),
        "no host row"
    );
    assert!(html.contains("no_route "), "no failures by reason");
    let path = report::json::write(&sample, dir.path()).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    common::assert_matches_schema(&json);
    let stream = &json["results"]["stream"];
    assert_eq!(stream["ticks"], 100, "{stream:#}");
    assert!(stream["ticks_partial"].as_u64() > Some(0), "{stream:#}");
    assert_eq!(stream["recipients"][0]["recipient"], "host");
    assert_eq!(stream["recipients"][1]["amount_msat"], 400);
    // Fake nodes cannot read records back.
    assert!(stream["recipients"][0]["records_received"].is_null());
}

/// `workload: attack:`: results.attack as the engine fills it (slots held a second,
/// the honest windows, the cost).
#[tokio::test]
async fn attack_results_match_the_schema() {
    use lnbench_tui::metrics::FailureKind;
    use lnbench_tui::metrics::attack::AttackStats;
    let mut results = fake_results().await;
    let stats = AttackStats::new(Duration::from_secs(2), Duration::from_secs(4));
    stats.record(Duration::from_secs(1), Ok(Duration::from_millis(5)));
    let no_route = Err(FailureKind::Node(FailureReason::NoRoute));
    stats.record(Duration::from_secs(3), no_route);
    stats.hold();
    stats.sample(2);
    stats.release(10_000, Duration::from_secs(2));
    let who = ("mallory", "eve");
    results.attack = Some(stats.summary(who, 4, 10_000, Duration::from_secs(2), 6.0));
    let json = serde_json::to_value(common::sample_report("name: fake\n", results)).unwrap();
    common::assert_matches_schema(&json);
    let attack = &json["results"]["attack"];
    assert_eq!(attack["slots_held"], serde_json::json!([0, 0, 1]));
    assert_eq!(attack["during"]["failures_by_reason"]["no_route"], 1);
    assert_eq!(attack["cost"]["locked_msat_s"], 20_000.0);

    let mut wrong = json.clone();
    wrong["results"]["attack"]["slots_target"] = serde_json::json!(0);
    let outcome = std::panic::catch_unwind(|| common::assert_matches_schema(&wrong));
    assert!(outcome.is_err(), "an attack of 0 slots must not validate");
}
