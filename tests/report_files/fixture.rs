//! The one fixed run the report-file tests write: every figure in it is known.

use lnbench_tui::metrics::process::ProcessStats;
use lnbench_tui::metrics::{Percentiles, SeriesPoint, SpectrumPoint, Summary};
use lnbench_tui::report::{self, Report};
use lnbench_tui::scenario::{LatencyStat, Threshold};
use lnbench_tui::setup::StepTiming;
use std::collections::BTreeMap;
use std::time::Duration;

pub const SCENARIO_TEXT: &str =
    "name: fixed\n# a <script>alert(1)</script> & more\nworkload:\n  kind: keysend\n";

/// 5 warm-up seconds, then 40 seconds whose TPS slowly falls and latency rises.
pub fn series() -> Vec<SeriesPoint> {
    (1..=45u64)
        .map(|i| {
            let warm_up = i <= 5;
            let ok = if warm_up { 0 } else { 100 - (i - 5) };
            SeriesPoint {
                at_s: i as f64,
                active_s: 1.0,
                tps: ok as f64,
                ok,
                failed: u64::from(i % 10 == 0),
                p50_us: 20_000 + i * 100,
                p90_us: 40_000 + i * 200,
                p99_us: 80_000 + i * 500,
                max_us: 120_000 + i * 1000,
                warm_up,
            }
        })
        .collect()
}

/// A spectrum shaped like HdrHistogram's: ticks halving towards 100%, the max last.
pub fn spectrum() -> Vec<SpectrumPoint> {
    let total = 3180u64;
    let mut points: Vec<SpectrumPoint> = [0.0, 50.0, 75.0, 87.5, 93.75, 96.875, 99.0, 99.9]
        .iter()
        .enumerate()
        .map(|(i, p)| SpectrumPoint {
            percentile: *p,
            latency_us: 10_000 + i as u64 * 15_000,
            total_count: (total as f64 * p / 100.0).max(1.0) as u64,
        })
        .collect();
    points.push(SpectrumPoint {
        percentile: 100.0,
        latency_us: 165_000,
        total_count: total,
    });
    points
}

pub fn fixed_report() -> Report {
    let series = series();
    let ok: u64 = series.iter().filter(|p| !p.warm_up).map(|p| p.ok).sum();
    let failed: u64 = series.iter().filter(|p| !p.warm_up).map(|p| p.failed).sum();
    let results = Summary {
        started_unix_ms: 1_795_000_000_000,
        ended_unix_ms: 1_795_000_045_000,
        elapsed_s: 45.0,
        active_s: 40.0,
        paused_s: 0.0,
        ok,
        failed,
        warm_up_excluded: 250,
        indeterminate: 0,
        routes: Vec::new(),
        stream: None,
        parts: None,
        drain: None,
        attack: None,
        rebalance: None,
        mismatches: None,
        dropped: 0,
        tps_avg: ok as f64 / 40.0,
        latency: Percentiles {
            count: ok,
            p50_us: 22_400,
            p90_us: 47_000,
            p99_us: 101_500,
            p999_us: 160_000,
            max_us: 165_000,
            mean_us: 25_000.0,
        },
        latency_spectrum: spectrum(),
        phases: Vec::new(),
        failures_by_reason: BTreeMap::from([("no_route", 3), ("timeout", 1)]),
        series_resolution_s: 1,
        series,
        events: Vec::new(),
        events_dropped: 0,
        interval_log: None,
        payment_log: None,
        tool_cpu_s: Some(1.25),
        tool_process: ProcessStats {
            cpu_s: Some(1.5),
            rss_bytes: Some(20 * 1024 * 1024),
            peak_rss_bytes: Some(24 * 1024 * 1024),
        },
        machine: None,
    };
    let thresholds = report::thresholds::evaluate(
        &[
            Threshold::Latency {
                stat: LatencyStat::P99,
                max: Duration::from_secs(2),
            },
            Threshold::MinTps(100.0),
        ],
        &results,
    );
    Report {
        tool: report::Tool {
            name: "lnbench-tui".into(),
            version: "0.1.0".into(),
            build: "release".into(),
        },
        scenario: report::ScenarioText {
            name: "fixed".into(),
            description: "a fixed run for golden tests".into(),
            path: "scenarios/fixed.yaml".into(),
            text: SCENARIO_TEXT.into(),
        },
        host: report::Host {
            cpu_model: "Test CPU @ 3.0GHz".into(),
            cores: 8,
            memory_bytes: 16 * 1024 * 1024 * 1024,
            os: "Debian GNU/Linux 13 (trixie)".into(),
            kernel: "6.12.0".into(),
        },
        chain: report::ChainInfo {
            implementation: "btcd".into(),
            version: "0.24.2-beta".into(),
            resources: Default::default(),
        },
        nodes: vec![
            node("alice", "sender", &"ab".repeat(32)),
            node("bob", "receiver", &"cd".repeat(32)),
        ],
        workload: report::WorkloadReport {
            kind: "keysend".into(),
            amount_msat: 1000,
            load_model: "closed".into(),
            concurrency: Some(10),
            senders: vec!["alice".into()],
            receivers: vec!["bob".into()],
            stop_after_payments: Some(2000),
            stop_after_seconds: Some(300.0),
            payment_timeout_seconds: 60.0,
        },
        setup: vec![
            StepTiming {
                step: "chain up".into(),
                seconds: 1.5,
            },
            StepTiming {
                step: "channels active".into(),
                seconds: 12.3,
            },
        ],
        thresholds,
        // The rest as in every sample report: complete, local, no extras.
        ..crate::common::sample_report(SCENARIO_TEXT, results)
    }
}

pub fn node(name: &str, role: &str, key: &str) -> report::NodeReport {
    report::NodeReport {
        name: name.into(),
        group: name.into(),
        implementation: "lnd".into(),
        version: "0.21.1-beta".into(),
        pubkey: format!("02{key}"),
        role: role.into(),
        binary: "lnd".into(),
        database: "bbolt".into(),
        completion: (role == "sender").then(|| {
            lnbench_tui::node::Completion::exact(
                lnbench_tui::node::completion::Method::Stream,
                "SendPaymentV2",
            )
        }),
        ready_s: None,
        resources: Default::default(),
        restart: None,
    }
}
