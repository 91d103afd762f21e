//! The spread across repeats on hand-made points.

use super::*;
use crate::report::sweep::RepeatInfo;
use crate::report::sweep::tests::{point, report};
use serde_json::json;

/// concurrency 1 and 4, three repeats each; concurrency 4's third repeat is slow.
fn repeated() -> Vec<PointReport> {
    let mut points = Vec::new();
    for (c, runs) in [
        (1, [(10.0, 100, 200), (10.4, 98, 190), (9.8, 102, 210)]),
        (4, [(30.0, 120, 300), (31.0, 118, 290), (12.0, 400, 2000)]),
    ] {
        for (k, (tps, p50, p99)) in runs.into_iter().enumerate() {
            let k = k + 1;
            points.push(point(
                &format!("concurrency={c},repeat={k}"),
                &[("concurrency", json!(c)), ("repeat", json!(k))],
                tps,
                p50,
                p99,
            ));
        }
    }
    points
}

#[test]
fn each_point_gets_its_repeats_and_their_spread() {
    let s = spreads(&repeated());
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].group, "concurrency=1");
    assert_eq!(s[0].repeats.len(), 3);
    let tps = s[0].tps_avg.unwrap();
    assert_eq!((tps.min, tps.median, tps.max), (9.8, 10.0, 10.4));
    assert_eq!(s[0].p99_us.unwrap().median, 200_000.0);
    assert!(s[0].repeats.iter().all(|r| !r.outlier));
    // The slow third repeat of concurrency 4 stands out.
    let flagged: Vec<u32> = (s[1].repeats.iter())
        .filter(|r| r.outlier)
        .map(|r| r.repeat)
        .collect();
    assert_eq!(flagged, [3]);
    assert_eq!(row(&s[1])[7], "repeat 3");
}

#[test]
fn the_tps_coefficient_of_variation_is_sd_over_mean() {
    let s = spreads(&repeated());
    // 10.0, 10.4 and 9.8 TPS: mean 10.067, sample sd 0.306.
    let cv = s[0].tps_cv_pct.unwrap();
    assert!((cv - 3.035).abs() < 0.01, "{cv}");
    assert_eq!(row(&s[0])[3], "3.0 %");
    // One repeat has no spread to speak of.
    let one = spreads(&repeated()[..1]);
    assert_eq!(one[0].tps_cv_pct, None);
    assert_eq!(row(&one[0])[3], "-");
}

#[test]
fn the_outside_load_column_says_how_many_repeats_were_disturbed() {
    let mut s = spreads(&repeated()).remove(0);
    assert_eq!(row(&s)[6], "not sampled");
    s.outside_load_pct = Stats::of(&[2.0, 3.0, 40.0]);
    s.disturbed = 1;
    assert_eq!(row(&s)[6], "3 % (40 %) of a core; 1 of 3 disturbed");
}

#[test]
fn unrepeated_and_unfinished_points_are_left_out() {
    let mut points = repeated();
    points[1].status = PointStatus::NotRun;
    points[1].results = None;
    points.push(point(
        "concurrency=7",
        &[("concurrency", json!(7))],
        5.0,
        1,
        2,
    ));
    let s = spreads(&points);
    assert_eq!(s.len(), 2, "concurrency=7 has no repeats");
    assert_eq!(s[0].repeats.len(), 2);
    assert!(spreads(&points[6..]).is_empty());
}

#[test]
fn a_scenario_without_sweep_is_one_group() {
    let points: Vec<PointReport> = (1..=3)
        .map(|k| {
            point(
                &format!("repeat={k}"),
                &[("repeat", json!(k))],
                20.0 + k as f64,
                100,
                200,
            )
        })
        .collect();
    let s = spreads(&points);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].group, "all");
}

#[test]
fn thresholds_on_the_median_ignore_one_bad_repeat() {
    let s = spreads(&repeated());
    let thresholds = [
        crate::scenario::Threshold::MinTps(25.0),
        crate::scenario::Threshold::Latency {
            stat: crate::scenario::LatencyStat::P99,
            max: std::time::Duration::from_millis(500),
        },
    ];
    // concurrency 4: TPS 30, 31, 12 (median 30) and p99 300 ms, 290 ms, 2 s (median 300 ms).
    let results = crate::report::thresholds::evaluate_on_median(&thresholds, &s[1].repeats);
    assert!(results.iter().all(|r| r.passed), "{results:?}");
    assert_eq!(results[0].actual, Some(30.0));
    // concurrency 1 is far below 25 TPS.
    let results = crate::report::thresholds::evaluate_on_median(&thresholds, &s[0].repeats);
    assert!(!results[0].passed);
}

#[test]
fn the_report_shows_the_spread_and_matches_its_schema() {
    let points = repeated();
    let mut r = report(points, None);
    r.parameters = vec!["concurrency".into(), "repeat".into()];
    r.spread = spreads(&r.points);
    r.repeat = Some(RepeatInfo {
        count: 3,
        settle_s: 5.0,
        fresh_network: false,
        thresholds: crate::scenario::Judge::Each,
    });
    let md = crate::report::sweep::markdown(&r);
    assert!(md.contains("### Spread across repeats"), "{md}");
    assert!(
        md.contains("| concurrency=1 | 3 | 10.0 (9.8 – 10.4, sd 0.3) |"),
        "{md}"
    );
    let json = serde_json::to_value(&r).unwrap();
    let errors = crate::report::sweep::tests::schema_errors(&json);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(json["spread"][1]["repeats"][2]["outlier"], true);
    let dir = tempfile::tempdir().unwrap();
    crate::report::sweep::write_all(&r, dir.path()).unwrap();
    let html = std::fs::read_to_string(dir.path().join("sweep.html")).unwrap();
    assert!(html.contains("<section id=\"spread\">"));
    assert!(html.contains("each point ran 3 times on one network, 5 s apart"));
}
