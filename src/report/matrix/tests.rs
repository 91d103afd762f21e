//! The implementation matrix's table, per-group bound and charts on hand-made points.

use super::*;
use crate::report::sweep::tests::{point, report};
use serde_json::json;

fn node(name: &str, implementation: &str, version: &str, database: &str) -> NodeFigures {
    NodeFigures {
        node: name.into(),
        implementation: implementation.into(),
        version: version.into(),
        database: database.into(),
        cpu_pct_avg: Some(50.0),
        cpu_ms_per_payment: Some(12.5),
        data_dir_bytes: None,
        bytes_per_payment: Some(2048.0),
        restart_s: None,
        completion: (name == "alice").then(|| "stream, exact".to_string()),
    }
}

/// lnd and cln at two loads each, cln on PostgreSQL, ldk on PostgreSQL skipped.
fn matrix_points() -> Vec<PointReport> {
    let mut points = Vec::new();
    for (implementation, version, db, tps) in [
        ("lnd", "0.21.1-beta commit=v0.21.1-beta", "bbolt", 30.0),
        ("cln", "v26.06.6", "postgres", 20.0),
    ] {
        for (c, factor, p99) in [(1, 1.0, 200), (10, 2.0, 900)] {
            let mut p = point(
                &format!("implementation={implementation},concurrency={c}"),
                &[
                    ("implementation", json!(implementation)),
                    ("concurrency", json!(c)),
                ],
                tps * factor,
                p99 / 2,
                p99,
            );
            let r = p.results.as_mut().unwrap();
            r.nodes = vec![
                node("alice", implementation, version, db),
                node("bob", implementation, version, db),
            ];
            points.push(p);
        }
    }
    let mut skipped = point(
        "implementation=ldk,concurrency=1",
        &[("implementation", json!("ldk")), ("concurrency", json!(1))],
        1.0,
        1,
        1,
    );
    skipped.status = PointStatus::Skipped;
    skipped.reason = Some("ldk has no PostgreSQL backend (node alice)".into());
    skipped.results = None;
    points.push(skipped);
    points
}

#[test]
fn rows_name_what_ran_and_what_it_cost() {
    let points = matrix_points();
    let lnd = row(&points[1]);
    assert_eq!(lnd[0], "lnd");
    assert_eq!(lnd[1], "0.21.1-beta commit=v0.21.1-beta");
    assert_eq!(lnd[2], "bbolt");
    assert_eq!(lnd[3], "concurrency 10");
    // The fixture's points carry no machine reading: no verdict, and the cell says so.
    assert_eq!(lnd[4], "done (not sampled)");
    assert_eq!(lnd[5], "100 / 0");
    assert_eq!(lnd[6], "60.0");
    assert_eq!(lnd[9], "stream, exact", "the sender's completion only");
    assert_eq!(lnd[10], "alice 12.5 ms · bob 12.5 ms");
    assert_eq!(lnd[11], "alice 2.0 KiB · bob 2.0 KiB");
    assert_eq!(lnd[12], "-");
    assert_eq!(lnd.len(), COLUMNS.len());
    let skipped = row(&points[4]);
    assert_eq!(skipped[0], "ldk");
    // The reason is not in the cell: it is given once below the table.
    assert_eq!(skipped[4], "skipped");
    assert!(skipped[5..].iter().all(|c| c == "-"));
}

#[test]
fn reasons_are_given_once_below_the_table() {
    let mut points = matrix_points();
    let mut again = points[4].clone();
    again.label = "implementation=ldk,concurrency=10".into();
    points.push(again);
    let mut failed = points[0].clone();
    failed.status = PointStatus::Failed;
    failed.reason = Some("network did not come up".into());
    failed.results = None;
    points.push(failed);
    let (rows, notes) = rows(&points);
    assert_eq!(
        notes,
        [
            "ldk has no PostgreSQL backend (node alice)",
            "network did not come up"
        ]
    );
    assert_eq!(rows[4][4], "skipped [1]");
    assert_eq!(rows[5][4], "skipped [1]");
    assert_eq!(rows[6][4], "failed [2]");
    assert_eq!(rows[0][4], "done (not sampled)");
}

#[test]
fn a_release_without_its_commit_shows_the_release() {
    // Eclair built from a source tree without git metadata reports `0.13.0-`.
    let mut p = matrix_points().remove(0);
    let r = p.results.as_mut().unwrap();
    r.nodes = vec![
        node("alice", "eclair", "0.13.0-", "sqlite"),
        node("bob", "eclair", "0.13.0-", "sqlite"),
    ];
    assert_eq!(row(&p)[1], "0.13.0");
    p.results.as_mut().unwrap().nodes[1].version = "0.13.0-992ec8c".into();
    assert_eq!(row(&p)[1], "alice 0.13.0 · bob 0.13.0-992ec8c");
}

#[test]
fn long_commit_ids_are_cut_to_twelve() {
    assert_eq!(
        short_commits("ldk-server v0.1.0 (source ee1c96cc7c628292d9eba57201af1ea57a55f052)"),
        "ldk-server v0.1.0 (source ee1c96cc7c62)"
    );
    assert_eq!(short_commits("v26.06.6"), "v26.06.6");
}

#[test]
fn mixed_nodes_are_named_one_by_one() {
    let mut p = matrix_points().remove(0);
    let r = p.results.as_mut().unwrap();
    r.nodes[1] = node("bob", "cln", "v26.06.6", "sqlite");
    let cells = row(&p);
    assert_eq!(cells[0], "alice lnd · bob cln");
    assert_eq!(cells[2], "alice bbolt · bob sqlite");
}

#[test]
fn senders_that_learn_ends_differently_are_named_one_by_one() {
    let mut p = matrix_points().remove(0);
    let r = p.results.as_mut().unwrap();
    r.nodes[1].completion = Some("websocket event, exact (+2 by polling)".into());
    assert_eq!(
        row(&p)[9],
        "alice stream, exact · bob websocket event, exact (+2 by polling)"
    );
}

#[test]
fn the_bound_is_met_per_implementation() {
    let best = best_by_group(&matrix_points(), 500_000);
    let groups: Vec<&str> = best.iter().map(|g| g.group.as_str()).collect();
    assert_eq!(
        groups,
        [
            "implementation=lnd",
            "implementation=cln",
            "implementation=ldk"
        ]
    );
    // p99 900 ms at concurrency 10 breaks a 500 ms bound: concurrency 1 is the best.
    assert_eq!(
        best[0].best.as_ref().map(|b| b.label.as_str()),
        Some("implementation=lnd,concurrency=1")
    );
    assert_eq!(best[2].best, None);
    let loose = best_by_group(&matrix_points(), 1_000_000);
    assert_eq!(
        loose[1].best.as_ref().map(|b| b.label.as_str()),
        Some("implementation=cln,concurrency=10")
    );
}

#[test]
fn the_sweep_report_holds_the_matrix_and_its_grouped_charts() {
    let points = matrix_points();
    let mut r = report(points, Some(500.0));
    r.parameters = vec!["implementation".into(), "concurrency".into()];
    r.best_by_group = best_by_group(&r.points, 500_000);
    assert!(is_matrix(&r.parameters));
    let md = crate::report::sweep::markdown(&r);
    assert!(md.contains("### Implementation matrix"), "{md}");
    assert!(
        md.contains(
            "| cln | v26.06.6 | postgres | concurrency 1 | done (not sampled) | 100 / 0 | 20.0 |"
        ),
        "{md}"
    );
    // A group that was skipped says so: it was never measured against the bound.
    assert!(md.contains("- implementation=ldk: skipped"), "{md}");
    assert!(!md.contains("ldk: no finished point"), "{md}");
    // The skipped row says "skipped" and points at its reason, given once below.
    assert!(md.contains("| concurrency 1 | skipped [1] |"), "{md}");
    assert!(
        md.contains("[1] ldk has no PostgreSQL backend (node alice)"),
        "{md}"
    );
    let charts = charts(&r).unwrap();
    assert_eq!(charts.len(), 2);
    // Two groups measured, two loads each: four bars, each a filled rectangle.
    let bars = |svg: &str| svg.matches("<rect").count();
    let empty = charts_of_nothing();
    assert!(
        bars(&charts[0].svg) >= bars(&empty) + 4,
        "{}",
        charts[0].svg
    );
    assert!(charts[0].svg.contains("implementation=cln"));
    let dir = tempfile::tempdir().unwrap();
    crate::report::sweep::write_all(&r, dir.path()).unwrap();
    let html = std::fs::read_to_string(dir.path().join("sweep.html")).unwrap();
    assert!(html.contains("<section id=\"matrix\">"));
    assert!(html.contains("matrix-tps.svg") && html.contains("matrix-p99.svg"));
    assert!(html.contains("class=\"skipped\""));
    assert!(dir.path().join("matrix-p99.svg").is_file());
}

fn charts_of_nothing() -> String {
    let mut r = report(Vec::new(), None);
    r.parameters = vec!["implementation".into()];
    charts(&r).unwrap().remove(0).svg
}

#[test]
fn a_sweep_without_implementations_has_no_matrix() {
    assert!(!is_matrix(&["concurrency".to_string()]));
    assert!(is_matrix(&["alice.implementation".to_string()]));
    assert!(is_matrix(&["database".to_string()]));
    let r = report(Vec::new(), None);
    assert!(!crate::report::sweep::markdown(&r).contains("Implementation matrix"));
}

#[test]
fn a_matrix_sweep_json_matches_its_schema() {
    let mut r = report(matrix_points(), Some(500.0));
    r.parameters = vec!["implementation".into(), "concurrency".into()];
    r.best_by_group = best_by_group(&r.points, 500_000);
    let json = serde_json::to_value(&r).unwrap();
    let errors = crate::report::sweep::tests::schema_errors(&json);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(json["points"][4]["status"], "skipped");
    assert_eq!(
        json["points"][0]["results"]["nodes"][1]["implementation"],
        "lnd"
    );
    assert_eq!(json["best_by_group"][2]["best"], serde_json::Value::Null);
    // The schema can fail: an implementation it does not know is refused.
    let mut bad = json.clone();
    bad["points"][0]["results"]["nodes"][0]["implementation"] = json!("c-lightning");
    assert!(!crate::report::sweep::tests::schema_errors(&bad).is_empty());
}
