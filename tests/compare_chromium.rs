//! compare.html as a person opens it: `lnbench-tui compare` on two recorded real runs
//! (tests/fixtures/reports/real-lnd-a and -b), the page rendered by headless Chromium
//! offline, with a screenshot, no console message, and every chart in the DOM.

mod common;

use common::{chromium_console, chromium_render, lnbench, repo_file};
use std::process::Command;

/// The chart figures of compare.html, by id; each overlays both runs.
const CHARTS: [&str; 2] = ["tps-over-time", "latency-p99-over-time"];

/// The text of the `<figure id="...">` element in `dom`.
fn figure<'a>(dom: &'a str, id: &str) -> &'a str {
    let start = dom
        .find(&format!("<figure id=\"{id}\""))
        .unwrap_or_else(|| panic!("no figure #{id} in the DOM"));
    let end = dom[start..].find("</figure>").expect("figure closes") + start;
    &dom[start..end]
}

#[test]
fn compare_html_renders_with_every_chart() {
    let work = tempfile::tempdir().unwrap();
    let out_dir = work.path().join("compare");
    let run = Command::new(lnbench())
        .arg("compare")
        .arg(repo_file("tests/fixtures/reports/real-lnd-a"))
        .arg(repo_file("tests/fixtures/reports/real-lnd-b"))
        .arg("--out")
        .arg(&out_dir)
        .output()
        .expect("run lnbench-tui compare");
    assert!(
        run.status.success(),
        "compare failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let html = out_dir.join("compare.html");
    let png = work.path().join("compare.png");
    let dom = chromium_render(&html, &png);

    assert_eq!(
        dom.matches("<svg").count(),
        CHARTS.len(),
        "one svg per chart"
    );
    for id in CHARTS {
        let fig = figure(&dom, id);
        assert!(fig.contains("<svg"), "#{id} holds its chart");
        // Each run is one line plus its legend entry: at least 4 polylines.
        let lines = fig.matches("<polyline").count();
        assert!(lines >= 4, "#{id} has {lines} polylines");
    }
    // The comparison table, as Chromium laid it out.
    assert!(dom.contains("<table"), "the metrics table is in the page");
    assert!(dom.contains("TPS (avg)"));

    let console = chromium_console(&html);
    assert!(console.is_empty(), "console messages: {console:#?}");
    let shot = std::fs::metadata(&png).expect("screenshot written").len();
    assert!(shot > 20_000, "screenshot of {shot} bytes is too small");
}

#[test]
fn the_console_check_sees_messages() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("noisy.html");
    std::fs::write(
        &page,
        "<html><body><script>console.error('broken chart')</script></body></html>",
    )
    .unwrap();
    let console = chromium_console(&page);
    assert!(
        console.iter().any(|l| l.contains("broken chart")),
        "{console:#?}"
    );
}
