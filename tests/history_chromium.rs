//! `history site` as a person opens it: the four recorded runs of
//! tests/fixtures/reports imported into a temporary store, the scenario's page
//! rendered by headless Chromium offline, with a screenshot, no console message, and
//! every chart with a dot per run in the DOM.

mod common;

use common::{chromium_console, chromium_render, lnbench, repo_file};
use std::process::Command;

#[test]
fn the_history_site_renders_with_a_dot_per_run() {
    let work = tempfile::tempdir().unwrap();
    let store = work.path().join("h.sqlite");
    let site = work.path().join("site");
    let fixtures = ["lnd-0.18", "lnd-0.19", "real-lnd-a", "real-lnd-b"]
        .map(|f| repo_file(&format!("tests/fixtures/reports/{f}")));
    for args in [
        vec!["import".into()]
            .into_iter()
            .chain(fixtures.iter().map(|f| f.display().to_string()))
            .collect::<Vec<String>>(),
        vec!["site".into(), site.display().to_string()],
    ] {
        let out = Command::new(lnbench())
            .args(["history", "--store"])
            .arg(&store)
            .args(&args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let page = site.join("scenario-alice-pays-bob.html");
    let png = work.path().join("site.png");
    let dom = chromium_render(&page, &png);
    // TPS, p50 and p99 (the fixtures read no CPU), each with a dot per run.
    assert_eq!(dom.matches("<svg").count(), 3, "{dom}");
    assert_eq!(dom.matches("<circle").count(), 3 * fixtures.len(), "{dom}");
    assert!(dom.contains("lnd 0.19.0-beta"), "{dom}");
    assert!(!dom.contains("<script"), "{dom}");
    let console = chromium_console(&page);
    assert!(console.is_empty(), "console messages: {console:#?}");
    let shot = std::fs::metadata(&png).expect("screenshot written").len();
    assert!(shot > 10_000, "screenshot of {shot} bytes is too small");
    if let Some(keep) = std::env::var_os("LNBENCH_KEEP_SCREENSHOT") {
        std::fs::copy(&png, keep).unwrap();
    }
}
