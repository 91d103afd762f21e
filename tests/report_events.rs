//! The run's events (pauses, resumes, load changes, stop requests, phase starts)
//! reach report.json in the published schema and are marked on the time charts.

mod common;

use common::svg::{assert_xml, count};

use lnbench_tui::engine::{self, Command};
use lnbench_tui::metrics::{EventKind, Recorder, Summary};
use lnbench_tui::node::fake::{FakeConfig, FakeLatency, FakeNode};
use lnbench_tui::report::{self, charts, results_charts};
use lnbench_tui::scenario::{Load, Phase, PhaseKind, StopCondition};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Runs `load` against a fake node (10 ms a payment) for `secs` of load, sending
/// each command after its delay from the previous one.
async fn run(load: Load, secs: u64, commands: &[(u64, Command)]) -> Summary {
    let sender = FakeNode::new(FakeConfig {
        latency: FakeLatency::Fixed(ms(10)),
        ..FakeConfig::instant("alice")
    });
    let stop = StopCondition {
        payments: None,
        duration: Some(Duration::from_secs(secs)),
        liquidity_failures: None,
    };
    let plan = common::fake_plan(sender, load, stop);
    let (recorder, _snapshots) = Recorder::new();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let handle = tokio::spawn(engine::run(plan, recorder, rx, CancellationToken::new()));
    for (after_ms, command) in commands {
        tokio::time::sleep(ms(*after_ms)).await;
        tx.send(*command).unwrap();
    }
    handle.await.unwrap().expect("engine runs").summary
}

/// Closed loop at 2: pause at 1 s for 2 s, resume, ramp to 4 at 4 s.
async fn paused_and_ramped() -> Summary {
    run(
        Load::Closed { concurrency: 2 },
        4,
        &[
            (1_000, Command::Pause),
            (2_000, Command::Resume),
            (1_000, Command::SetConcurrency(4)),
        ],
    )
    .await
}

#[tokio::test(start_paused = true)]
async fn report_json_records_the_pause_and_the_ramp() {
    let results = paused_and_ramped().await;
    let json = serde_json::to_value(common::sample_report("name: events\n", results)).unwrap();
    common::assert_matches_schema(&json);
    let events = json["results"]["events"].as_array().unwrap();
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["paused", "resumed", "concurrency_changed"]);
    assert_eq!(
        (events[2]["from"].as_u64(), events[2]["to"].as_u64()),
        (Some(2), Some(4))
    );
    let at: Vec<f64> = events.iter().map(|e| e["at_s"].as_f64().unwrap()).collect();
    for (got, want) in at.iter().zip([1.0, 3.0, 4.0]) {
        assert!((got - want).abs() < 0.05, "{at:?}");
    }
    assert_eq!(json["results"]["events_dropped"], 0);
    let mut bad = json.clone();
    bad["results"]["events"][2]["kind"] = "ramped".into();
    let outcome = std::panic::catch_unwind(|| common::assert_matches_schema(&bad));
    assert!(outcome.is_err(), "an unknown event kind must not validate");
}

#[tokio::test(start_paused = true)]
async fn open_loop_events_match_the_schema() {
    let load = Load::Open {
        phases: vec![
            Phase {
                kind: PhaseKind::WarmUp,
                from_rate: 10.0,
                to_rate: 10.0,
                duration: Duration::from_secs(1),
            },
            Phase {
                kind: PhaseKind::Ramp,
                from_rate: 10.0,
                to_rate: 50.0,
                duration: Duration::from_secs(10),
            },
        ],
    };
    let results = run(
        load,
        3,
        &[(2_000, Command::SetRate(25.0)), (200, Command::Stop)],
    )
    .await;
    let kinds: Vec<EventKind> = results.events.iter().map(|e| e.kind.clone()).collect();
    assert!(kinds.contains(&EventKind::StopRequested), "{kinds:?}");
    assert!(
        kinds
            .iter()
            .any(|k| matches!(k, EventKind::RateChanged { to, .. } if *to == 25.0)),
        "{kinds:?}"
    );
    let json = serde_json::to_value(common::sample_report("name: events\n", results)).unwrap();
    common::assert_matches_schema(&json);
    let phases: Vec<&str> = json["results"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["phase"].as_str())
        .collect();
    assert_eq!(phases[..2], ["warm-up", "ramp"]);
}

#[tokio::test(start_paused = true)]
async fn time_charts_mark_pauses_and_load_changes() {
    let results = paused_and_ramped().await;
    let all = results_charts::render_all(&results).unwrap();
    for chart in all
        .iter()
        .filter(|c| c.file_name.ends_with("over-time.svg"))
    {
        assert_xml(&chart.svg);
        assert_eq!(
            count(&chart.svg, "rect", "fill", charts::PAUSE_SHADE),
            1,
            "{}: one pause band",
            chart.file_name
        );
        assert_eq!(
            count(&chart.svg, "polyline", "stroke", charts::LOAD_CHANGE_COLOR),
            1,
            "{}: one load change line",
            chart.file_name
        );
        assert!(chart.svg.contains("→4"), "{}: label", chart.file_name);
    }
    // Payments processed is not a time axis: nothing to mark.
    let by_payments = all.iter().find(|c| c.file_name == "tps-vs-payments.svg");
    let svg = &by_payments.unwrap().svg;
    assert_eq!(count(svg, "rect", "fill", charts::PAUSE_SHADE), 0);
    assert_eq!(
        count(svg, "polyline", "stroke", charts::LOAD_CHANGE_COLOR),
        0
    );
}

#[tokio::test(start_paused = true)]
async fn a_run_without_events_has_no_marks() {
    let results = run(Load::Closed { concurrency: 2 }, 2, &[]).await;
    assert!(results.events.is_empty());
    for chart in results_charts::render_all(&results).unwrap() {
        assert_eq!(count(&chart.svg, "rect", "fill", charts::PAUSE_SHADE), 0);
        assert_eq!(
            count(&chart.svg, "polyline", "stroke", charts::LOAD_CHANGE_COLOR),
            0
        );
        assert!(!chart.svg.contains('→'));
    }
}

#[tokio::test(start_paused = true)]
async fn a_pause_still_open_at_the_end_shades_to_the_end() {
    let results = run(
        Load::Closed { concurrency: 1 },
        2,
        &[(1_000, Command::Pause), (1_500, Command::Stop)],
    )
    .await;
    let kinds: Vec<EventKind> = results.events.iter().map(|e| e.kind.clone()).collect();
    assert_eq!(kinds, [EventKind::Paused, EventKind::StopRequested]);
    let svg = charts::tps_over_time_marked(&results.series, &results.events).unwrap();
    assert_xml(&svg);
    assert_eq!(count(&svg, "rect", "fill", charts::PAUSE_SHADE), 1);
}

#[tokio::test(start_paused = true)]
async fn report_html_lists_the_events_only_when_there_are_some() {
    let report = common::sample_report("name: events\n", paused_and_ramped().await);
    let charts = results_charts::render_all(&report.results).unwrap();
    let html = report::html::render(&report, &charts).unwrap();
    assert!(html.contains("<section id=\"events\">"));
    for what in ["paused", "resumed", "concurrency 2 → 4"] {
        assert!(html.contains(&format!("<td>{what}</td>")), "{what}");
    }
    let quiet = common::sample_report(
        "name: events\n",
        run(Load::Closed { concurrency: 1 }, 1, &[]).await,
    );
    let charts = results_charts::render_all(&quiet.results).unwrap();
    let html = report::html::render(&quiet, &charts).unwrap();
    assert!(!html.contains("id=\"events\""));
}
