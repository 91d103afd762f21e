//! The sample Grafana dashboard (assets/grafana-dashboard.json) reads only metrics
//! that `--metrics-listen` serves: every `lnbench_*` name in its queries is a series
//! (or a histogram's bucket series) of the exporter.

mod common;

use lnbench_tui::metrics::export::Exporter;

#[test]
fn the_dashboard_queries_only_served_metrics() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/grafana-dashboard.json");
    let text = std::fs::read_to_string(path).expect("dashboard");
    let dash: serde_json::Value = serde_json::from_str(&text).expect("the dashboard is JSON");
    // Families without a series yet are not rendered: give each one.
    let x = Exporter::new("demo");
    x.set_runtime("local", true);
    x.record_batch(&[1000], &[1, 0, 0, 0, 0, 0, 0, 0], 0);
    x.readings(&[lnbench_tui::metrics::ResourceReading {
        name: "alice".into(),
        cpu_pct: Some(1.0),
        mem_bytes: Some(1),
        disk_read_bytes: None,
        disk_write_bytes: None,
        net_rx_bytes: None,
        net_tx_bytes: None,
        data_dir_bytes: Some(1),
    }]);
    let served = x.render();
    served_names_follow_the_conventions(&served);
    let mut exprs = Vec::new();
    for panel in dash["panels"].as_array().expect("panels") {
        for target in panel["targets"].as_array().expect("targets") {
            exprs.push(target["expr"].as_str().expect("expr").to_string());
        }
    }
    assert!(exprs.len() >= 10, "{exprs:?}");
    let mut names = 0;
    for expr in &exprs {
        let mut rest = expr.as_str();
        while let Some(at) = rest.find("lnbench_") {
            let name: String = rest[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let family = name.trim_end_matches("_bucket");
            let declared = served.lines().any(|l| {
                l.strip_prefix("# TYPE ")
                    .and_then(|t| t.split(' ').next())
                    .is_some_and(|f| {
                        name == f || family == f || name.strip_suffix("_total") == Some(f)
                    })
            });
            assert!(declared, "{name} (in {expr}) is not served:\n{served}");
            names += 1;
            rest = &rest[at + name.len()..];
        }
    }
    assert!(names >= exprs.len());
}

/// A strict OpenMetrics parse; each `# UNIT` is the name's suffix (OpenMetrics asks it),
/// no name says `percent` or a bare `tps`, and the build is said.
fn served_names_follow_the_conventions(served: &str) {
    let scrape = common::openmetrics::parse(served);
    let mut units = 0;
    for line in served.lines() {
        if let Some(unit) = line.strip_prefix("# UNIT ") {
            let (name, unit) = unit.split_once(' ').expect("# UNIT name unit");
            assert!(name.ends_with(&format!("_{unit}")), "{line}");
            units += 1;
        }
    }
    assert!(units >= 4, "latency, cpu, memory, data dir:\n{served}");
    for name in scrape.types.keys() {
        assert!(
            !name.contains("percent") && !name.ends_with("_tps"),
            "{name}"
        );
    }
    assert_eq!(scrape.value("lnbench_build_info", &[]), Some(1.0));
}
