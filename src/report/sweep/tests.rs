//! The sweep report's computations and renderings on hand-made points.

use super::*;
use crate::metrics::Percentiles;
use crate::report::{Host, ScenarioText, Tool};
use serde_json::json;
use std::collections::BTreeMap;

pub(crate) fn point(
    label: &str,
    values: &[(&str, serde_json::Value)],
    tps: f64,
    p50_ms: u64,
    p99_ms: u64,
) -> PointReport {
    PointReport {
        label: label.into(),
        values: values
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
        network: 0,
        history: None,
        status: PointStatus::Done,
        reason: None,
        kind: "keysend".into(),
        timed: format::what_is_timed("keysend").into(),
        load: "closed loop".into(),
        results: Some(PointResults {
            ok: 100,
            failed: 0,
            active_s: 100.0 / tps,
            tps_avg: tps,
            latency: Percentiles {
                count: 100,
                p50_us: p50_ms * 1000,
                p90_us: p99_ms * 900,
                p99_us: p99_ms * 1000,
                p999_us: p99_ms * 1000,
                max_us: p99_ms * 1100,
                mean_us: p50_ms as f64 * 1000.0 + 5_000.0,
            },
            failures_by_reason: BTreeMap::new(),
            tool_cpu_per_payment_us: Some(700.0),
            cpu_pct_avg: vec![
                NodeCpu {
                    node: "alice".into(),
                    pct: tps * 2.0,
                },
                NodeCpu {
                    node: "chain".into(),
                    pct: 1.5,
                },
            ],
            nodes: Vec::new(),
            machine: None,
            mismatches: None,
            attack: None,
        }),
        thresholds_passed: None,
    }
}

fn concurrency(points: &[(u64, f64, u64)]) -> Vec<PointReport> {
    points
        .iter()
        .map(|(c, tps, p99)| {
            point(
                &format!("concurrency={c}"),
                &[("concurrency", json!(c))],
                *tps,
                p99 / 2,
                *p99,
            )
        })
        .collect()
}

#[test]
fn max_tps_under_bound_picks_the_fastest_point_that_keeps_p99_under_it() {
    // TPS keeps rising to concurrency 10, but p99 crosses 500 ms at 7.
    let points = concurrency(&[
        (1, 3.0, 120),
        (4, 20.0, 300),
        (7, 24.0, 520),
        (10, 25.0, 900),
    ]);
    assert_eq!(max_tps_under_bound(&points, 500_000), Some(1));
    assert_eq!(
        max_tps_under_bound(&points, 520_000),
        Some(2),
        "the bound is inclusive"
    );
    assert_eq!(max_tps_under_bound(&points, 1_000_000), Some(3));
    assert_eq!(max_tps_under_bound(&points, 100_000), None);
}

#[test]
fn max_tps_under_bound_ignores_unfinished_and_empty_points() {
    let mut points = concurrency(&[(1, 3.0, 120), (4, 20.0, 300), (7, 24.0, 320)]);
    points[2].status = PointStatus::Partial;
    assert_eq!(max_tps_under_bound(&points, 500_000), Some(1));
    points[1].results.as_mut().unwrap().ok = 0;
    assert_eq!(max_tps_under_bound(&points, 500_000), Some(0));
    points[0].status = PointStatus::NotRun;
    points[0].results = None;
    assert_eq!(max_tps_under_bound(&points, 500_000), None);
}

#[test]
fn latency_per_hop_divides_the_latency_added_by_the_hops_added() {
    let points = vec![
        point(
            "carol.replicas=1",
            &[("carol.replicas", json!(1))],
            3.0,
            100,
            150,
        ),
        point(
            "carol.replicas=4",
            &[("carol.replicas", json!(4))],
            1.0,
            400,
            600,
        ),
    ];
    let steps = latency_per_hop(&points, "carol.replicas");
    assert_eq!(steps.len(), 1);
    let s = &steps[0];
    assert_eq!(
        (s.from.as_str(), s.to.as_str(), s.hops_added),
        ("carol.replicas=1", "carol.replicas=4", 3)
    );
    assert!((s.p50_added_per_hop_us - 100_000.0).abs() < 1e-6, "{s:?}");
    assert!((s.mean_added_per_hop_us - 100_000.0).abs() < 1e-6, "{s:?}");
}

#[test]
fn latency_per_hop_compares_only_points_equal_in_the_other_parameters() {
    let p = |n: u64, c: u64, p50: u64| {
        point(
            &format!("carol.replicas={n},concurrency={c}"),
            &[("carol.replicas", json!(n)), ("concurrency", json!(c))],
            1.0,
            p50,
            p50 * 2,
        )
    };
    let points = vec![
        p(1, 1, 100),
        p(1, 4, 300),
        p(2, 1, 150),
        p(2, 4, 500),
        p(3, 1, 250),
    ];
    let steps = latency_per_hop(&points, "carol.replicas");
    let pairs: Vec<(&str, &str, f64)> = steps
        .iter()
        .map(|s| {
            (
                s.from.as_str(),
                s.to.as_str(),
                s.p50_added_per_hop_us / 1000.0,
            )
        })
        .collect();
    assert_eq!(
        pairs,
        [
            (
                "carol.replicas=1,concurrency=1",
                "carol.replicas=2,concurrency=1",
                50.0
            ),
            (
                "carol.replicas=1,concurrency=4",
                "carol.replicas=2,concurrency=4",
                200.0
            ),
            (
                "carol.replicas=2,concurrency=1",
                "carol.replicas=3,concurrency=1",
                100.0
            ),
        ]
    );
}

pub(crate) fn report(points: Vec<PointReport>, bound_ms: Option<f64>) -> SweepReport {
    let best = bound_ms
        .and_then(|b| max_tps_under_bound(&points, (b * 1000.0) as u64))
        .map(|i| BestPoint {
            label: points[i].label.clone(),
            tps_avg: points[i].results.as_ref().unwrap().tps_avg,
            p99_us: points[i].results.as_ref().unwrap().latency.p99_us,
        });
    SweepReport {
        schema_version: SWEEP_SCHEMA_VERSION,
        tool: Tool::this(),
        complete: true,
        interrupted_by: None,
        started_at: "2026-01-01T00:00:00Z".into(),
        finished_at: "2026-01-01T00:10:00Z".into(),
        scenario: ScenarioText {
            name: "alice-pays-bob".into(),
            description: "What TPS at what concurrency?".into(),
            path: "scenarios/alice-pays-bob.yaml".into(),
            text: "name: alice-pays-bob\n".into(),
        },
        runtime: "local".into(),
        host: Host::detect(),
        parameters: vec!["concurrency".into()],
        p99_bound_ms: bound_ms,
        points,
        best_under_bound: best,
        best_by_group: Vec::new(),
        repeat: None,
        spread: Vec::new(),
        per_hop: Vec::new(),
    }
}

#[test]
fn markdown_has_a_row_per_point_and_the_bound_verdict() {
    let mut points = concurrency(&[(1, 3.0, 120), (4, 20.0, 300), (7, 24.0, 520)]);
    points[2].status = PointStatus::NotRun;
    points[2].results = None;
    let md = markdown(&report(points, Some(500.0)));
    assert!(
        md.contains("| concurrency=4 | done (not sampled) | keysend | 100 | 0 | 20.0 | 150.0 ms |"),
        "{md}"
    );
    assert!(
        md.contains("| concurrency=7 | not run | keysend | - |"),
        "{md}"
    );
    assert!(
        md.contains("highest TPS with p99 under 500.0 ms: 20.0 at concurrency=4 (p99 300.0 ms)"),
        "{md}"
    );
    assert!(md.contains("keysend: a spontaneous payment"), "{md}");
    assert!(md.contains("| 700 µs | alice 40% · chain 2% |"), "{md}");
}

/// The errors of `json` against docs/sweep.schema.json (none: it matches).
pub(crate) fn schema_errors(json: &serde_json::Value) -> Vec<String> {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../../docs/sweep.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    validator.iter_errors(json).map(|e| e.to_string()).collect()
}

#[test]
fn sweep_json_matches_its_schema_with_and_without_node_cpu() {
    let mut points = concurrency(&[(1, 3.0, 120), (4, 20.0, 300)]);
    points[1].results.as_mut().unwrap().cpu_pct_avg.clear();
    let json = serde_json::to_value(report(points, Some(500.0))).unwrap();
    let errors = schema_errors(&json);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        json["points"][0]["results"]["cpu_pct_avg"][0]["node"],
        "alice"
    );
    assert!(
        (json["points"][0]["results"]["cpu_pct_avg"][0]["pct"]
            .as_f64()
            .unwrap()
            - 6.0)
            .abs()
            < 1e-9
    );
}

#[test]
fn html_and_charts_render_every_point_and_the_bound() {
    let r = report(
        concurrency(&[(1, 3.0, 120), (4, 20.0, 300), (10, 24.0, 700)]),
        Some(500.0),
    );
    let charts = sweep_charts::render_all(&r).unwrap();
    assert_eq!(charts.len(), 2);
    assert!(
        charts[1].svg.contains("p99 bound 500"),
        "bound line labelled"
    );
    for label in ["concurrency=1", "concurrency=4", "concurrency=10"] {
        assert!(
            charts[1].svg.contains(label),
            "{label} not on the latency chart"
        );
    }
    let page = html(&r, &charts).unwrap();
    assert!(
        page.contains("<a href=\"concurrency=4/report.html\">concurrency=4</a>"),
        "{page}"
    );
    assert!(
        page.contains("highest TPS with p99 under 500.0 ms: 20.0 at concurrency=4 (p99 300.0 ms)<")
    );

    // Nothing crossed the bound: the best is the last point, and the page says so.
    let short = report(concurrency(&[(1, 3.0, 120), (4, 20.0, 200)]), Some(500.0));
    let verdict = bound_verdict(&short);
    assert!(
        verdict.ends_with("no point reached the bound, so the sweep stopped short of the knee: sweep higher to find it"),
        "{verdict}"
    );
    assert_eq!(page.matches("<svg").count(), 2);
}

#[test]
fn a_complete_sweep_with_skipped_points_does_not_say_every_point_ran() {
    let mut points = concurrency(&[(1, 3.0, 120), (4, 20.0, 300), (10, 24.0, 700)]);
    points[2].status = PointStatus::Skipped;
    points[2].results = None;
    points[2].reason = Some("no lnd binary built here".into());
    let r = report(points, None);
    let charts = sweep_charts::render_all(&r).unwrap();
    let page = html(&r, &charts).unwrap();
    // Outside a matrix no table gives a skipped point's reason: the headline does.
    let line = "Sweep ended: 2 of 3 points ran to their stop condition; 1 was skipped \
                (no lnd binary built here: 1 point).";
    assert!(
        page.contains(&format!(
            "<div class=\"banner partial\" id=\"status\">{line}</div>"
        )),
        "{page}"
    );
    assert!(!page.contains("every point ran"), "{page}");
    assert!(!page.contains("all 3 points"), "{page}");
    assert!(
        markdown(&r).contains(&format!("\n**{line}**\n")),
        "{}",
        markdown(&r)
    );

    let all = report(concurrency(&[(1, 3.0, 120), (4, 20.0, 300)]), None);
    let page = html(&all, &sweep_charts::render_all(&all).unwrap()).unwrap();
    let line = "Complete sweep: all 2 points ran to their stop condition.";
    assert!(
        page.contains(&format!(
            "<div class=\"banner complete\" id=\"status\">{line}</div>"
        )),
        "{page}"
    );
    assert!(markdown(&all).contains(&format!("\n{line}\n")));
}

/// The sweep: 32 points of a matrix, 8 skipped for two reasons, which the
/// matrix numbers below its table; the headline counts them and points there.
#[test]
fn a_matrix_headline_counts_its_skipped_points_and_points_to_the_reasons() {
    let mut points = Vec::new();
    for implementation in ["lnd", "cln", "eclair", "ldk"] {
        for database in ["default", "postgres"] {
            for c in [1, 2, 5, 10] {
                let label =
                    format!("implementation={implementation},database={database},concurrency={c}");
                let values = [
                    ("implementation", json!(implementation)),
                    ("database", json!(database)),
                    ("concurrency", json!(c)),
                ];
                let mut p = point(&label, &values, 10.0, 100, 200);
                if database == "postgres" && matches!(implementation, "eclair" | "ldk") {
                    p.status = PointStatus::Skipped;
                    p.reason = Some(format!("{implementation} has no PostgreSQL backend"));
                    p.results = None;
                }
                points.push(p);
            }
        }
    }
    let mut r = report(points, None);
    r.parameters = ["implementation", "database", "concurrency"]
        .map(String::from)
        .to_vec();
    let line = "Sweep ended: 24 of 32 points ran to their stop condition; 8 were skipped \
                (the reasons are numbered below the implementation matrix).";
    let page = html(&r, &[]).unwrap();
    assert!(page.contains(line), "{page}");
    assert!(
        page.contains("<li>eclair has no PostgreSQL backend</li>"),
        "{page}"
    );
    assert!(
        page.contains("<li>ldk has no PostgreSQL backend</li>"),
        "{page}"
    );
    let md = markdown(&r);
    assert!(md.contains(line), "{md}");
    assert!(md.contains("[2] ldk has no PostgreSQL backend"), "{md}");
}

#[test]
fn a_stopped_sweep_counts_what_ran_what_was_cut_short_and_what_did_not_run() {
    let mut points = concurrency(&[
        (1, 3.0, 120),
        (4, 20.0, 300),
        (7, 24.0, 520),
        (10, 25.0, 900),
    ]);
    points[1].status = PointStatus::Failed;
    points[1].reason = Some("network did not come up".into());
    points[1].results = None;
    points[2].status = PointStatus::Partial;
    points[3].status = PointStatus::NotRun;
    points[3].results = None;
    let mut r = report(points, None);
    r.complete = false;
    r.interrupted_by = Some("SIGTERM".into());
    let line = "Partial sweep, stopped by SIGTERM: 1 of 4 points ran to their stop \
                condition; 1 failed (network did not come up: 1 point), 1 stopped early \
                (partial), 1 did not run. A partial point covers only the payments made \
                before it stopped.";
    let page = html(&r, &[]).unwrap();
    assert!(
        page.contains(&format!("id=\"status\">{line}</div>")),
        "{page}"
    );
    assert!(markdown(&r).contains(line), "{}", markdown(&r));
    r.interrupted_by = None;
    let page = html(&r, &[]).unwrap();
    assert!(
        page.contains("Partial sweep, stopped by an unknown cause: 1 of 4"),
        "{page}"
    );
}

#[test]
fn a_kind_sweep_is_charted_by_point() {
    let mut points = Vec::new();
    for (i, kind) in ["keysend", "invoice", "invoice-pregenerated"]
        .iter()
        .enumerate()
    {
        let mut p = point(
            &format!("kind={kind}"),
            &[("kind", json!(kind))],
            10.0 + i as f64,
            100,
            200,
        );
        p.kind = kind.to_string();
        points.push(p);
    }
    let mut r = report(points, None);
    r.parameters = vec!["kind".into()];
    let svg = sweep_charts::tps_vs_parameter(&r).unwrap();
    assert!(
        svg.contains("kind=invoice-pregenerated"),
        "categorical x labels"
    );
    let md = markdown(&r);
    assert!(md.contains("no latency bound set"), "{md}");
    assert!(
        md.contains("pre-generated invoices: created before the load"),
        "{md}"
    );
}

#[test]
fn a_point_measured_on_a_busy_machine_is_marked_disturbed() {
    let mut log = crate::metrics::MachineLog::new();
    log.sample(0.0, None);
    std::thread::sleep(std::time::Duration::from_millis(20));
    log.sample(0.0, None);
    let mut machine = log.finish().expect("one interval");
    let mut p = point(
        "concurrency=4",
        &[("concurrency", json!(4))],
        20.0,
        100,
        200,
    );
    // A load too short to sample the machine has no verdict, and says so.
    assert_eq!(figures(&p)[1], "done (not sampled)");
    machine.disturbed = false;
    p.results.as_mut().unwrap().machine = Some(machine.clone());
    assert_eq!(figures(&p)[1], "done");
    machine.disturbed = true;
    p.results.as_mut().unwrap().machine = Some(machine);
    assert_eq!(figures(&p)[1], "done (disturbed)");
    p.status = PointStatus::Skipped;
    p.results = None;
    assert_eq!(figures(&p)[1], "skipped");
}
