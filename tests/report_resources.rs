//! Per-node resource use in the report: the exact shape of `nodes[i].resources` and
//! `chain.resources` in report.json (against the published schema), the CPU, memory
//! and data-dir charts with the run's events marked, the HTML table and summary.md.

mod common;

use common::svg::{assert_xml, count, hex};

use lnbench_tui::metrics::process::ProcessStats;
use lnbench_tui::metrics::{
    EventKind, Percentiles, ResourceLog, ResourceReading, RunEvent, SeriesPoint, Summary,
};
use lnbench_tui::report::{self, Report, charts, resources_charts, results_charts};

const MIB: u64 = 1024 * 1024;

/// A summary with nothing measured.
fn summary() -> Summary {
    Summary {
        started_unix_ms: 1_795_000_000_000,
        ended_unix_ms: 1_795_000_020_000,
        elapsed_s: 20.0,
        active_s: 17.0,
        paused_s: 3.0,
        ok: 0,
        failed: 0,
        warm_up_excluded: 0,
        indeterminate: 0,
        routes: Vec::new(),
        stream: None,
        parts: None,
        drain: None,
        attack: None,
        rebalance: None,
        mismatches: None,
        dropped: 0,
        tps_avg: 0.0,
        latency: Percentiles::default(),
        failures_by_reason: Default::default(),
        series_resolution_s: 1,
        series: Vec::new(),
        events: Vec::new(),
        events_dropped: 0,
        tool_cpu_s: None,
        tool_process: ProcessStats::default(),
        machine: None,
        latency_spectrum: Vec::new(),
        phases: Vec::new(),
        interval_log: None,
        payment_log: None,
    }
}

/// 20 s of load: alice (sender) and bob (receiver) read every second, the chain
/// too; bob's data dir only from 5 s on. A pause from 8 s to 11 s, concurrency to 8
/// at 14 s.
fn report_with_resources() -> Report {
    let results = Summary {
        ok: 1_000,
        series: (1..=20u64)
            .map(|i| SeriesPoint {
                at_s: i as f64,
                active_s: 1.0,
                tps: 50.0,
                ok: 50,
                ..SeriesPoint::default()
            })
            .collect(),
        events: vec![
            RunEvent {
                at_s: 8.0,
                kind: EventKind::Paused,
            },
            RunEvent {
                at_s: 11.0,
                kind: EventKind::Resumed,
            },
            RunEvent {
                at_s: 14.0,
                kind: EventKind::ConcurrencyChanged { from: 4, to: 8 },
            },
        ],
        ..summary()
    };
    let mut log = ResourceLog::new();
    for i in 0..=20u64 {
        let cpu = (i > 0).then_some(if (8..11).contains(&i) { 2.0 } else { 60.0 });
        let reading = |name: &str, mem: u64, dir: Option<u64>| ResourceReading {
            name: name.into(),
            // The chain works a tenth as hard as the nodes.
            cpu_pct: cpu.map(|c| if name == "chain" { c / 10.0 } else { c }),
            mem_bytes: Some(mem),
            disk_read_bytes: Some(4096),
            disk_write_bytes: Some(i * 8192),
            net_rx_bytes: None,
            net_tx_bytes: None,
            data_dir_bytes: dir,
        };
        log.record_at(
            i as f64,
            vec![
                reading("alice", (100 + i) * MIB, Some(10 * MIB + i * 51_200)),
                reading("bob", 80 * MIB, (i >= 5).then_some(20 * MIB + i * 1024)),
                reading("chain", 30 * MIB, Some(5 * MIB)),
            ],
        );
    }
    let mut report = common::sample_report("name: resources\n", results);
    report.host = report::Host {
        cpu_model: "Test CPU".into(),
        cores: 2,
        memory_bytes: 8 * 1024 * MIB,
        os: "Linux".into(),
        kernel: "6.12.0".into(),
    };
    let mut bob = report.nodes[0].clone();
    bob.name = "bob".into();
    bob.role = "receiver".into();
    report.nodes.push(bob);
    for node in &mut report.nodes {
        node.resources = log.report(&node.name, report.results.ok);
    }
    report.chain.resources = log.report("chain", report.results.ok);
    report
}

#[test]
fn report_json_has_the_resource_shape_the_schema_publishes() {
    let report = report_with_resources();
    let json = serde_json::to_value(&report).unwrap();
    common::assert_matches_schema(&json);

    let keys = |v: &serde_json::Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    for resources in [&json["nodes"][0]["resources"], &json["chain"]["resources"]] {
        assert_eq!(
            keys(resources),
            [
                "bytes_per_payment",
                "cpu_pct_avg",
                "data_dir_bytes_end",
                "data_dir_bytes_start",
                "mem_bytes_peak",
                "samples"
            ]
        );
        let samples = resources["samples"].as_array().unwrap();
        assert_eq!(samples.len(), 21);
        assert_eq!(
            keys(&samples[3]),
            [
                "cpu_pct",
                "data_dir_bytes",
                "disk_read_bytes",
                "disk_write_bytes",
                "mem_bytes",
                "net_rx_bytes",
                "net_tx_bytes",
                "t_s"
            ]
        );
        assert_eq!(samples[0]["cpu_pct"], serde_json::Value::Null);
        assert_eq!(samples[3]["net_rx_bytes"], serde_json::Value::Null);
    }
    let alice = &json["nodes"][0]["resources"];
    assert_eq!(alice["samples"][3]["t_s"], 3.0);
    assert_eq!(alice["samples"][3]["cpu_pct"], 60.0);
    assert_eq!(alice["samples"][3]["disk_write_bytes"], 3 * 8192);
    assert_eq!(alice["mem_bytes_peak"], 120 * MIB);
    // 17 readings at 60 % and 3 paused ones at 2 %.
    let avg = alice["cpu_pct_avg"].as_f64().unwrap();
    assert!(
        (avg - (17.0 * 60.0 + 3.0 * 2.0) / 20.0).abs() < 1e-9,
        "{avg}"
    );
    assert_eq!(alice["data_dir_bytes_start"], 10 * MIB);
    assert_eq!(alice["data_dir_bytes_end"], 10 * MIB + 20 * 51_200);
    // 20 * 51,200 bytes over 1,000 payments.
    assert_eq!(alice["bytes_per_payment"], 1024.0);
    let bob = &json["nodes"][1]["resources"];
    assert_eq!(bob["data_dir_bytes_start"], 20 * MIB + 5 * 1024);
    assert_eq!(bob["bytes_per_payment"], 15.36);
    assert_eq!(json["chain"]["resources"]["bytes_per_payment"], 0.0);
}

#[test]
fn schema_rejects_a_sample_without_its_fields_or_with_others() {
    let json = serde_json::to_value(report_with_resources()).unwrap();
    let mut missing = json.clone();
    missing["nodes"][0]["resources"]["samples"][2]
        .as_object_mut()
        .unwrap()
        .remove("mem_bytes");
    let mut extra = json.clone();
    extra["chain"]["resources"]["samples"][2]["gpu_pct"] = 1.into();
    let mut negative = json;
    negative["nodes"][1]["resources"]["mem_bytes_peak"] = (-1).into();
    for bad in [missing, extra, negative] {
        let outcome = std::panic::catch_unwind(|| common::assert_matches_schema(&bad));
        assert!(outcome.is_err(), "must not validate");
    }
}

#[test]
fn a_report_without_readings_has_empty_resources_that_still_validate() {
    let report = common::sample_report("name: none\n", summary());
    let json = serde_json::to_value(&report).unwrap();
    common::assert_matches_schema(&json);
    assert_eq!(
        json["nodes"][0]["resources"]["samples"],
        serde_json::json!([])
    );
    assert_eq!(
        json["chain"]["resources"]["bytes_per_payment"],
        serde_json::Value::Null
    );
    assert!(resources_charts::render_all(&report).unwrap().is_empty());
    assert!(report::resources::rows(&report).is_empty());
    let html = report::html::render(&report, &[]).unwrap();
    assert!(!html.contains("id=\"resources\""));
    assert!(!report::markdown::render(&report).contains("CPU avg"));
}

#[test]
fn resource_charts_draw_a_line_per_node_with_the_events_marked() {
    let report = report_with_resources();
    let charts = resources_charts::render_all(&report).unwrap();
    let names: Vec<&str> = charts.iter().map(|c| c.file_name).collect();
    assert_eq!(
        names,
        [
            "cpu-over-time.svg",
            "memory-over-time.svg",
            "data-dir-over-time.svg"
        ]
    );
    let [alice, bob, chain] = [0, 1, 2].map(|i| resources_charts::PALETTE[i]);
    for chart in &charts {
        assert_xml(&chart.svg);
        // A line and a legend entry per node and the chain.
        for color in [alice, bob, chain] {
            assert_eq!(
                count(&chart.svg, "polyline", "stroke", color),
                2,
                "{}: {}",
                chart.file_name,
                hex(color)
            );
        }
        assert_eq!(
            count(&chart.svg, "rect", "fill", charts::PAUSE_SHADE),
            1,
            "{}: one pause band",
            chart.file_name
        );
        assert_eq!(
            count(&chart.svg, "polyline", "stroke", charts::LOAD_CHANGE_COLOR),
            1,
            "{}: one load change",
            chart.file_name
        );
        assert!(chart.svg.contains("→8"), "{}", chart.file_name);
        assert!(chart.caption.contains("Amber bands: paused"));
    }
    // Alice's CPU line has a vertex per reading with a CPU figure (not the first).
    let alice_line = charts[0]
        .svg
        .split("<polyline ")
        .find(|p| p.contains(&format!("stroke=\"{}\"", hex(alice))) && p.contains("points"))
        .unwrap();
    let points = alice_line.split("points=\"").nth(1).unwrap();
    let vertices = points[..points.find('"').unwrap()]
        .split_whitespace()
        .count();
    assert_eq!(vertices, 20);
    assert!(charts[1].svg.contains("memory, MiB"));
    for legend in [
        "alice (1.0 KiB/payment)",
        "bob (15 B/payment)",
        "chain (0 B/payment)",
    ] {
        assert!(charts[2].svg.contains(legend), "no legend {legend:?}");
    }
}

#[test]
fn html_shows_the_resource_table_and_charts() {
    let report = report_with_resources();
    let dir = tempfile::tempdir().unwrap();
    let paths = report::write_all(&report, dir.path()).unwrap();
    let names: Vec<String> = paths
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for svg in [
        "cpu-over-time.svg",
        "memory-over-time.svg",
        "data-dir-over-time.svg",
    ] {
        assert!(names.iter().any(|n| n == svg), "{svg} not in {names:?}");
        let id = svg.trim_end_matches(".svg");
        let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
        assert!(html.contains(&format!("<figure id=\"{id}\">")), "no #{id}");
    }
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    let table = &html[html.find("id=\"resources\"").expect("a resources section")..];
    let table = &table[..table.find("</section>").unwrap()];
    for text in [
        "<td>alice</td>",
        "<td>bob</td>",
        "<td>chain</td>",
        "51.3%",     // alice's average CPU
        "60.0%",     // peak
        "120.0 MiB", // alice's peak memory
        "+1000.0 KiB",
        "1.0 KiB", // alice per payment
        "15 B",    // bob per payment
    ] {
        assert!(table.contains(text), "missing {text:?} in\n{table}");
    }
    let charts_total = results_charts::render_all(&report.results).unwrap().len() + 3;
    assert_eq!(html.matches("<svg").count(), charts_total);
}

#[test]
fn summary_markdown_with_resources_is_stable() {
    insta::assert_snapshot!(report::markdown::render(&report_with_resources()));
}

/// Text of node-supplied origin in the faults, resources and profiles sections of
/// summary.md is printed as text: a link, an image, an HTML tag or a code span of
/// theirs does not become markdown in a summary pasted into an issue.
#[test]
fn summary_md_shows_node_text_in_faults_resources_and_profiles_as_text() {
    use lnbench_tui::metrics::{EnvelopeReading, KernelCounters};
    use lnbench_tui::profile::{ProfileReport, ProfilingReport};
    const EVIL: &str = "see [x](http://evil) ![](http://evil/p.png) <img src=x> `rm -rf` *b*";
    let mut report = common::sample_report("name: t\n", summary());
    report.faults = vec![lnbench_tui::faults::FaultRecord {
        label: "kill alice".into(),
        kind: "kill".into(),
        target: "alice".into(),
        began_s: Some(1.0),
        ended_s: Some(2.0),
        links: None,
        node_back: None,
        chain_back: None,
        chain_height: None,
        error: Some(EVIL.into()),
        windows: Default::default(),
    }];
    report.channel_health = vec![lnbench_tui::faults::NodeHealth {
        node: "alice".into(),
        health: None,
        error: Some(EVIL.into()),
    }];
    report.nodes[0].resources.envelope = Some(EnvelopeReading {
        name: "alice".into(),
        cpus: Some(1.0),
        memory_bytes: None,
        cpuset: None,
        applied_by: "cgroup v2".into(),
        kernel: KernelCounters::default(),
        not_available: EVIL.into(),
    });
    let profile = |kind: &str, not_profiled: Option<&str>, note: Option<&str>| ProfileReport {
        node: "alice".into(),
        implementation: "lnd".into(),
        kind: kind.into(),
        profiler: "pprof".into(),
        not_profiled: not_profiled.map(str::to_string),
        note: note.map(str::to_string),
        start_s: Some(1.0),
        seconds: Some(5.0),
        total: 10,
        unit: "samples".into(),
        files: vec!["alice.cpu.svg".into()],
        top_functions: Vec::new(),
        svg: None,
    };
    report.profiling = Some(ProfilingReport {
        start_s: 1.0,
        seconds: 5.0,
        tps_in_window: None,
        tps_after_window: None,
        profiles: vec![
            profile("cpu", None, Some(EVIL)),
            profile("heap", Some(EVIL), None),
        ],
    });
    let md = report::markdown::render(&report);
    // Each section shows the text (escaped) ...
    assert!(md.contains("Fault kill alice went wrong"), "{md}");
    assert!(md.contains("Channels at the end"), "{md}");
    assert!(md.contains("not available"), "{md}");
    assert!(md.contains("not profiled"), "{md}");
    assert!(md.contains("Note: "), "{md}");
    assert_eq!(md.matches(r"\[x\](http://evil)").count(), 5, "{md}");
    // ... and none of it as markdown.
    for raw in ["[x](", "![](", " <img", "`rm -rf`", "*b*"] {
        assert!(!md.contains(raw), "summary.md holds {raw}:\n{md}");
    }
}
