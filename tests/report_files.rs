//! The files a report directory holds (report.html, the chart .svg files,
//! summary.md), written from one fixed run so every figure is known.

mod common;

use common::svg::hex;
use lnbench_tui::metrics::SeriesPoint;
use lnbench_tui::report::{self, charts, results_charts};
use quick_xml::events::Event;
use std::collections::BTreeMap;
use std::time::Duration;

#[path = "report_files/fixture.rs"]
mod fixture;

use fixture::*;

/// Parses `svg` as XML (failing on any error) and counts, per stroke colour, the
/// `<polyline>` elements drawn in it.
fn polylines_by_stroke(svg: &str) -> BTreeMap<String, usize> {
    let mut reader = quick_xml::Reader::from_str(svg);
    let mut counts = BTreeMap::new();
    let mut root = None;
    loop {
        match reader.read_event() {
            Ok(Event::Eof) => break,
            Ok(Event::Start(e) | Event::Empty(e)) => {
                let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                root.get_or_insert(name.clone());
                if name == "polyline" {
                    let stroke = e
                        .try_get_attribute("stroke")
                        .unwrap()
                        .map(|a| String::from_utf8(a.value.to_vec()).unwrap())
                        .unwrap_or_default();
                    *counts.entry(stroke).or_default() += 1;
                }
            }
            Ok(_) => {}
            Err(e) => panic!(
                "SVG is not well-formed XML at {}: {e}",
                reader.buffer_position()
            ),
        }
    }
    assert_eq!(root.as_deref(), Some("svg"));
    counts
}

/// The text of every `<text>` element of `svg`, trimmed.
fn texts(svg: &str) -> Vec<String> {
    let mut reader = quick_xml::Reader::from_str(svg);
    let mut out = Vec::new();
    loop {
        match reader.read_event().unwrap() {
            Event::Eof => break,
            Event::Text(t) => out.push(t.decode().unwrap().trim().to_string()),
            _ => {}
        }
    }
    out
}

#[test]
fn every_chart_is_xml_with_one_line_per_series() {
    let report = fixed_report();
    let charts = results_charts::render_all(&report.results).unwrap();
    let names: Vec<&str> = charts.iter().map(|c| c.file_name).collect();
    assert_eq!(
        names,
        [
            "tps-over-time.svg",
            "tps-vs-payments.svg",
            "latency-over-time.svg",
            "latency-spectrum.svg"
        ]
    );
    // Each series is one polyline, plus one short polyline for its legend entry.
    let expected: [&[_]; 4] = [
        &[charts::TPS_COLOR, charts::TPS_AVG_COLOR],
        &[charts::TPS_COLOR, charts::TPS_AVG_COLOR],
        &[charts::P50_COLOR, charts::P90_COLOR, charts::P99_COLOR],
        &[report::spectrum::SPECTRUM_COLOR],
    ];
    for (chart, colors) in charts.iter().zip(expected) {
        let lines = polylines_by_stroke(&chart.svg);
        for color in colors {
            assert_eq!(
                lines.get(&hex(*color)),
                Some(&2),
                "{}: series {} in {lines:?}",
                chart.file_name,
                hex(*color)
            );
        }
        // Axes and ticks are black; any other line must be one of the series.
        let series_lines: usize = lines
            .iter()
            .filter(|(stroke, _)| stroke.as_str() != "#000000")
            .map(|(_, n)| n)
            .sum();
        assert_eq!(series_lines, colors.len() * 2, "{lines:?}");
    }
    let legend = ["p50", "p90", "p99"].map(String::from);
    assert!(legend.iter().all(|l| texts(&charts[2].svg).contains(l)));
    assert!(texts(&charts[1].svg).contains(&"successful payments so far".to_string()));
    assert!(texts(&charts[0].svg).contains(&"moving average".to_string()));
    let ticks = texts(&charts[3].svg);
    for tick in ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%"] {
        assert!(ticks.contains(&tick.to_string()), "{tick} in {ticks:?}");
    }
}

#[test]
fn the_series_line_has_a_vertex_per_point() {
    let report = fixed_report();
    let svg = charts::tps_over_time(&report.results.series).unwrap();
    let raw = hex(charts::TPS_COLOR);
    let vertices: Vec<usize> = svg
        .split("<polyline")
        .skip(1)
        .filter(|p| p.contains(&format!("stroke=\"{raw}\"")))
        .map(|p| {
            let points = p.split("points=\"").nth(1).unwrap();
            points[..points.find('"').unwrap()]
                .split_whitespace()
                .count()
        })
        .collect();
    assert!(vertices.contains(&45), "{vertices:?}");
}

#[test]
fn html_has_every_section_and_chart_inline() {
    let report = fixed_report();
    let dir = tempfile::tempdir().unwrap();
    let path = report::html::write(&report, dir.path()).unwrap();
    assert_eq!(path.file_name().unwrap(), "report.html");
    let html = std::fs::read_to_string(&path).unwrap();
    for id in [
        "status",
        "summary",
        "thresholds",
        "workload",
        "charts",
        "nodes",
        "failures",
        "setup",
        "tool-cost",
        "environment",
        "scenario",
        "tps-over-time",
        "tps-vs-payments",
        "latency-over-time",
        "latency-spectrum",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "no #{id}");
    }
    assert_eq!(html.matches("<svg").count(), 4);
    for figure in html.split("<figure").skip(1) {
        let svg_start = figure.find("<svg").expect("a figure holds its chart");
        let svg_end = figure.find("</svg>").unwrap() + "</svg>".len();
        polylines_by_stroke(&figure[svg_start..svg_end]);
    }
    for text in [
        "Complete run",
        "101.5 ms",          // p99
        "165.0 ms",          // max
        "160.0 ms",          // p99.9
        "02abababab…ababab", // short pubkey
        "no_route",
        "12.3 s",   // a setup step
        "364.0 µs", // tool CPU per payment: 1.25 s / (3180 ok + 4 failed + 250 warm-up)
        "24.0 MiB",
        "Test CPU @ 3.0GHz",
        "btcd 0.24.2-beta",
        "closed loop, 10 concurrent payers; stops after 2000 payments or 5 min 00 s",
    ] {
        assert!(html.contains(text), "missing {text:?}");
    }
    // minijinja's HTML escaping also writes `/` as `&#x2f;`.
    assert!(html.contains(
        "3180 successful payments (4 failed) at 79.5 payments&#x2f;s on average; latency p50 22.4 ms, p99 101.5 ms."
    ));
    assert!(html.contains("1 of 2 thresholds FAILED."));
    assert!(html.contains("keysend: a spontaneous payment"));
    assert!(!html.contains("only paying them is timed"));
    assert!(html.contains("class=\"pass\">pass<"));
    assert!(html.contains("class=\"fail\">FAIL<"));
    // How the sender's payment ends were learned: in the summary and its node's row.
    assert_eq!(
        html.matches("stream (SendPaymentV2), exact").count(),
        2,
        "summary row and the sender's node row"
    );
}

/// Parts per payment and the drain have their sections only when the run had them.
#[test]
fn html_shows_parts_and_drain_when_the_run_had_them() {
    use lnbench_tui::metrics::parts::{DrainSummary, PartsRow, PartsSummary};
    let html = |r: &report::Report| report::html::render(r, &[]).unwrap();
    let plain = html(&fixed_report());
    assert!(!plain.contains("id=\"parts\"") && !plain.contains("id=\"drain\""));
    let mut r = fixed_report();
    r.results.parts = Some(PartsSummary {
        max_parts: 16,
        payments: 7,
        unknown: 0,
        more_than_one_attempt: 5,
        more_than_one_attempt_share: 5.0 / 7.0,
        retried: 1,
        retried_share: 1.0 / 7.0,
        multi_part: 6,
        by_parts: vec![PartsRow {
            parts: 3,
            payments: 6,
            attempts: 9,
            latency: r.results.latency,
        }],
    });
    r.results.drain = Some(DrainSummary {
        stop_after: 3,
        liquidity_failures: 3,
        first_liquidity_failure_s: Some(21.5),
    });
    let shown = html(&r);
    assert!(shown.contains("id=\"parts\""), "the parts section");
    assert!(shown.contains("Part limit 16; 6 of 7"), "its line");
    assert!(shown.contains("<td>3</td><td>6</td><td>9</td>"), "its row");
    assert!(
        shown.contains("first liquidity failure came at 21.5 s"),
        "the drain"
    );
    // summary.md has them too, and the stream's, only when the run had them.
    let md = report::markdown::render(&r);
    assert!(
        md.contains("| 3 | 6 | 9 |"),
        "the parts row in summary.md:\n{md}"
    );
    assert!(md.contains("Part limit 16; 6 of 7"), "{md}");
    assert!(
        md.contains("Drain: the first liquidity failure came at 21.5 s"),
        "{md}"
    );
    let plain = report::markdown::render(&fixed_report());
    assert!(
        !plain.contains("Drain:") && !plain.contains("| parts |") && !plain.contains("Stream:")
    );
    use lnbench_tui::metrics::stream::{RecipientSummary, StreamSummary};
    r.results.stream = Some(StreamSummary {
        ticks: 20,
        ticks_ok: 19,
        ticks_partial: 1,
        splits: 40,
        splits_ok: 39,
        recipients: vec![RecipientSummary {
            recipient: "host|1".into(),
            amount_msat: 700,
            ok: 19,
            failed: 1,
            failures_by_reason: [("no_route".to_string(), 1)].into(),
            records_received: Some(19),
            ..RecipientSummary::default()
        }],
        ..StreamSummary::default()
    });
    let md = report::markdown::render(&r);
    assert!(
        md.contains("Stream: 20 ticks: 19 ok (every split paid), 1 partial"),
        "{md}"
    );
    assert!(
        md.contains("| host\\|1 | 700 msat | 19 | 1 (no\\_route 1) | 0 | 19 |"),
        "the recipient's row, its text escaped:\n{md}"
    );
}

#[test]
fn html_is_self_contained_and_escapes_the_scenario() {
    let html = report::html::render(
        &fixed_report(),
        &results_charts::render_all(&fixed_report().results).unwrap(),
    )
    .unwrap();
    assert!(html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt; &amp; more"));
    assert!(!html.contains("<script"), "no script, escaped or ours");
    for external in ["<link", "src=", "@import", "url("] {
        assert!(
            !html.contains(external),
            "references outside the file: {external}"
        );
    }
    let namespaces = html.matches("http://www.w3.org/2000/svg").count();
    assert_eq!(
        html.matches("http").count(),
        namespaces,
        "only SVG namespaces"
    );
}

#[test]
fn a_partial_run_says_what_interrupted_it() {
    let mut report = fixed_report();
    report.complete = false;
    report.interrupted_by = Some("SIGINT".into());
    let html = report::html::render(&report, &[]).unwrap();
    assert!(html.contains("Partial run, interrupted by SIGINT"));
    assert!(!html.contains("Complete run"));
    let md = report::markdown::render(&report);
    assert!(md.starts_with("**lnbench-tui 0.1.0**: fixed (partial: interrupted by SIGINT)"));
}

#[test]
fn a_disturbed_run_says_so_in_every_format() {
    let mut r = fixed_report();
    let mut log = lnbench_tui::metrics::MachineLog::new();
    // No interval yet: nothing is claimed about the machine.
    assert!(log.finish().is_none());
    log.sample(0.0, None);
    std::thread::sleep(Duration::from_millis(30));
    log.sample(0.0, None);
    let mut machine = log.finish().expect("two samples are one interval");
    machine.disturbed = true;
    machine.verdict = "DISTURBED: outside load 35 % of a core on average".into();
    r.results.machine = Some(machine);
    let md = report::markdown::render(&r);
    assert!(
        md.contains("| machine | DISTURBED: outside load 35 %"),
        "{md}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = report::html::write(&r, dir.path()).unwrap();
    let html = std::fs::read_to_string(path).unwrap();
    assert!(html.contains("id=\"machine\""), "no machine banner");
    assert!(html.contains("The machine was not quiet: DISTURBED"));
    // A quiet run gets no banner, only its row.
    r.results.machine.as_mut().unwrap().disturbed = false;
    let path = report::html::write(&r, dir.path()).unwrap();
    assert!(
        !std::fs::read_to_string(path)
            .unwrap()
            .contains("id=\"machine\"")
    );
}

#[test]
fn summary_markdown_is_stable() {
    insta::assert_snapshot!(report::markdown::render(&fixed_report()));
}

#[test]
fn write_all_writes_every_file_of_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let paths = report::write_all(&fixed_report(), dir.path()).unwrap();
    let names: Vec<String> = paths
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "report.json",
            "series.csv",
            "report.html",
            "tps-over-time.svg",
            "tps-vs-payments.svg",
            "latency-over-time.svg",
            "latency-spectrum.svg",
            "summary.md",
        ]
    );
    for p in &paths {
        assert!(std::fs::metadata(p).unwrap().len() > 100, "{}", p.display());
    }
    let mut left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    left.sort();
    assert!(left.is_empty(), "temporary files left: {left:?}");
    let svg = std::fs::read_to_string(dir.path().join("latency-over-time.svg")).unwrap();
    polylines_by_stroke(&svg);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&paths[0]).unwrap()).unwrap();
    assert_eq!(json["thresholds"][1]["name"], "min_tps");
    assert_eq!(json["thresholds"][1]["passed"], false);
    series_csv_matches_the_report(&json, &std::fs::read_to_string(&paths[1]).unwrap());
}

/// series.csv: report.json's series, a row per point, the columns named as there.
fn series_csv_matches_the_report(json: &serde_json::Value, csv: &str) {
    let series = json["results"]["series"].as_array().unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        header,
        [
            "at_s", "active_s", "tps", "ok", "failed", "p50_us", "p90_us", "p99_us", "max_us",
            "warm_up"
        ]
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), series.len());
    assert_eq!(rows.len(), 45);
    for (row, point) in rows.iter().zip(series) {
        assert_eq!(row.len(), header.len());
        for (column, cell) in header.iter().zip(row) {
            match &point[*column] {
                serde_json::Value::Number(n) => {
                    let v: f64 = cell.parse().unwrap();
                    assert!(
                        (v - n.as_f64().unwrap()).abs() < 1e-3,
                        "{column}: {cell} vs {n}"
                    );
                }
                other => assert_eq!(other.to_string(), *cell, "{column}"),
            }
        }
    }
}

#[test]
fn a_day_long_run_gives_charts_of_bounded_size() {
    let mut report = fixed_report();
    report.results.series = (1..=86_400u64)
        .map(|i| SeriesPoint {
            at_s: i as f64,
            active_s: 1.0,
            tps: (i % 97) as f64,
            ok: i % 97,
            p50_us: 10_000 + i % 1000,
            p90_us: 20_000 + i % 1000,
            p99_us: 30_000 + i % 1000,
            max_us: 40_000,
            ..SeriesPoint::default()
        })
        .collect();
    let started = std::time::Instant::now();
    let charts = results_charts::render_all(&report.results).unwrap();
    for chart in &charts {
        assert!(
            chart.svg.len() < 400_000,
            "{}: {} bytes",
            chart.file_name,
            chart.svg.len()
        );
        let lines = polylines_by_stroke(&chart.svg);
        assert!(lines.len() > 1, "{}: {lines:?}", chart.file_name);
    }
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

/// write_all copies the payment log the run streamed in as payments.csv, whole.
#[test]
fn write_all_copies_the_payment_log() {
    use lnbench_tui::metrics::{PaymentLog, PaymentResult, PaymentRow, payments};
    let run_dir = tempfile::tempdir().unwrap();
    let mut log = PaymentLog::create(&run_dir.path().join(payments::FILE_NAME)).unwrap();
    let row = PaymentRow {
        intended_start_s: 1.0,
        start_s: 1.0,
        end_s: 1.25,
        sender: "alice".into(),
        receiver: "bob".into(),
        kind: "keysend",
        amount_msat: 1000,
        payment_hash: None,
        result: PaymentResult::Ok {
            latency_us: 250_000,
            hops: 1,
            fee_msat: 0,
        },
    };
    log.append(&[row.clone(), row]);
    let mut report = fixed_report();
    report.results.payment_log = Some(log.finish());
    let dir = tempfile::tempdir().unwrap();
    let paths = report::write_all(&report, dir.path()).unwrap();
    let copied = paths
        .iter()
        .find(|p| p.ends_with(payments::FILE_NAME))
        .unwrap();
    let text = std::fs::read_to_string(copied).unwrap();
    assert_eq!(text.lines().count(), 3, "{text}");
    assert_eq!(
        text,
        std::fs::read_to_string(run_dir.path().join(payments::FILE_NAME)).unwrap()
    );
}

/// `latency.hlog` is copied as every report file is written: a link planted at its
/// name in a shared report directory is replaced, its target left untouched.
#[test]
fn write_all_copies_the_latency_log_and_not_through_a_planted_link() {
    use lnbench_tui::metrics::hlog::{FILE_NAME, IntervalLogFile};
    let run_dir = tempfile::tempdir().unwrap();
    let log = run_dir.path().join("streamed.hlog");
    std::fs::write(&log, "#[StartTime: 0]\n").unwrap();
    let mut report = fixed_report();
    report.results.interval_log = Some(IntervalLogFile {
        path: log.clone(),
        error: None,
    });
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "untouched").unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join(FILE_NAME)).unwrap();
    let paths = report::write_all(&report, dir.path()).unwrap();
    let copied = paths.iter().find(|p| p.ends_with(FILE_NAME)).unwrap();
    assert!(!std::fs::symlink_metadata(copied).unwrap().is_symlink());
    assert_eq!(
        std::fs::read_to_string(copied).unwrap(),
        "#[StartTime: 0]\n"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
}
