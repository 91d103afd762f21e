//! The matrix page as headless Chromium lays it out (Debian's `chromium`, installed by
//! `scripts/setup.sh --dev`), on hand-made points of a matrix as wide as the shipped
//! one: two node groups, releases, databases, measured and skipped groups. A script
//! added to a copy of the page writes what the layout measured into the DOM, which
//! `--dump-dom` returns. Without Chromium the test says it did not run (and fails
//! under `CI=true`).

use super::tests::{point, report};
use super::{NodeFigures, PointStatus};
use serde_json::json;

fn node(name: &str, implementation: &str, version: &str) -> NodeFigures {
    NodeFigures {
        node: name.into(),
        implementation: implementation.into(),
        version: version.into(),
        database: "postgres".into(),
        cpu_pct_avg: Some(87.5),
        cpu_ms_per_payment: Some(12.5),
        data_dir_bytes: None,
        bytes_per_payment: Some(2048.0),
        restart_s: Some(3.2),
        completion: (name == "alice").then(|| "websocket event, exact (+2 by polling)".into()),
    }
}

/// lnd@v0.20.1-beta and eclair measured at two loads; ldk skipped at both.
fn wide_matrix() -> super::SweepReport {
    let mut points = Vec::new();
    for (implementation, version) in [
        ("lnd@v0.20.1-beta", "0.20.1-beta commit=v0.20.1-beta"),
        ("eclair", "0.13.0-"),
        ("ldk", ""),
    ] {
        for c in [1, 10] {
            let label = format!(
                "alice.implementation={implementation},bob.implementation={implementation},database=postgres,concurrency={c},repeat=3"
            );
            let values = [
                ("alice.implementation", json!(implementation)),
                ("bob.implementation", json!(implementation)),
                ("database", json!("postgres")),
                ("concurrency", json!(c)),
            ];
            let mut p = point(&label, &values, 25.0 * f64::from(c), 150, 400);
            let kind = implementation.split('@').next().unwrap_or_default();
            if kind == "ldk" {
                p.status = PointStatus::Skipped;
                p.reason = Some(
                    "ldk has no PostgreSQL backend (nodes alice, bob); kind: keysend, and \
                     node alice is ldk: ldk-server at the pinned commit has no keysend"
                        .into(),
                );
                p.results = None;
            } else if let Some(r) = p.results.as_mut() {
                r.nodes = vec![node("alice", kind, version), node("bob", kind, version)];
            }
            points.push(p);
        }
    }
    let mut r = report(points, Some(1000.0));
    r.parameters = vec![
        "alice.implementation".into(),
        "bob.implementation".into(),
        "database".into(),
        "concurrency".into(),
    ];
    r.best_by_group = crate::report::matrix::best_by_group(&r.points, 1_000_000);
    r
}

/// What the layout measured: `name=value` per line.
const MEASURE: &str = r#"<script>
const px = (e) => e ? Math.ceil(e.getBoundingClientRect().width) : -1;
const q = (s) => document.querySelector(s);
const out = document.createElement('pre');
out.id = 'measured';
out.textContent = [
  'page_scroll=' + document.documentElement.scrollWidth,
  'page_client=' + document.documentElement.clientWidth,
  'points_table=' + px(q('#points table')),
  'points_section=' + px(q('#points')),
  'matrix_scroll=' + q('#matrix .scroll').scrollWidth,
  'matrix_client=' + q('#matrix .scroll').clientWidth,
].join('\n');
document.body.appendChild(out);
</script>"#;

fn chromium_dom(html: &std::path::Path) -> Option<String> {
    let profile = tempfile::tempdir().unwrap();
    let out = std::process::Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--hide-scrollbars",
            "--window-size=1100,2000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", html.display()))
        .output();
    match out {
        Ok(out) if out.status.success() => Some(String::from_utf8_lossy(&out.stdout).into()),
        Ok(out) => panic!("chromium failed: {}", String::from_utf8_lossy(&out.stderr)),
        Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("CI=true but chromium does not run: {e}")
        }
        Err(e) => {
            eprintln!("NOT RUN: no chromium ({e}); scripts/setup.sh --dev installs it");
            None
        }
    }
}

fn measured(dom: &str, name: &str) -> i64 {
    let key = format!("{name}=");
    let out = dom
        .split("<pre id=\"measured\">")
        .nth(1)
        .unwrap_or_default();
    (out.split(['\n', '<']))
        .find_map(|l| l.strip_prefix(&key)?.parse().ok())
        .unwrap_or_else(|| panic!("{name} not measured: {dom}"))
}

#[test]
fn the_matrix_page_fits_its_width_and_says_skipped_briefly() {
    let r = wide_matrix();
    let dir = tempfile::tempdir().unwrap();
    super::write_all(&r, dir.path()).unwrap();
    let html = std::fs::read_to_string(dir.path().join("sweep.html")).unwrap();
    let page = dir.path().join("measured.html");
    std::fs::write(&page, html.replace("</body>", &format!("{MEASURE}</body>"))).unwrap();
    let Some(dom) = chromium_dom(&page) else {
        return;
    };
    let (page_scroll, page_client) = (measured(&dom, "page_scroll"), measured(&dom, "page_client"));
    assert!(
        page_scroll <= page_client,
        "the page scrolls sideways: {page_scroll} > {page_client}"
    );
    let (table, section) = (
        measured(&dom, "points_table"),
        measured(&dom, "points_section"),
    );
    assert!(
        table <= section,
        "the points table overflows: {table} > {section}"
    );
    let (inner, outer) = (
        measured(&dom, "matrix_scroll"),
        measured(&dom, "matrix_client"),
    );
    assert!(
        inner <= outer,
        "the matrix table scrolls sideways: {inner} > {outer}"
    );
    // The skipped cells say so briefly; the reason is given once, below the table.
    let reason = "ldk has no PostgreSQL backend (nodes alice, bob)";
    assert_eq!(dom.matches(reason).count(), 1, "{dom}");
    assert!(dom.contains("<td>skipped [1]</td>"), "{dom}");
    assert!(
        dom.contains("bob.implementation=ldk,database=postgres: skipped</li>"),
        "{dom}"
    );
    assert!(!dom.contains("0.13.0-<"), "{dom}");
}
