//! `lnbench-tui history` through the real binary, on report directories made from a
//! real report: import, list, show, trend, check and its exit codes, and bad stores.

mod common;
#[path = "history_support/runs.rs"]
mod runs;

use assert_cmd::Command;
use common::repo_file;
use runs::*;
use serde_json::json;
use std::path::Path;

#[test]
fn tests_run_a_build_that_records_nothing_in_the_machines_history() {
    // A debug build records only with --store or LNBENCH_HISTORY (history::recording_store):
    // the end-to-end tests' runs with --report stay out of the machine's store. A release
    // test build would record them there.
    assert!(
        cfg!(debug_assertions) || std::env::var_os("LNBENCH_HISTORY").is_some(),
        "a release build of the tests records every run into the machine's results \
         store: set LNBENCH_HISTORY=off"
    );
}

#[test]
fn import_list_show_and_trend_the_fixture_runs() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("h.sqlite");
    let fixtures = ["lnd-0.18", "lnd-0.19", "real-lnd-a", "real-lnd-b"]
        .map(|f| repo_file(&format!("tests/fixtures/reports/{f}")));
    let out = stdout_of(history(&store).arg("import").args(&fixtures), 0);
    assert_eq!(out.matches("recorded as run").count(), 4, "{out}");
    let again = stdout_of(history(&store).arg("import").arg(&fixtures[0]), 0);
    assert!(again.contains("already recorded as run 1"), "{again}");

    let list = stdout_of(history(&store).args(["list", "--version", "0.21"]), 0);
    let ids: Vec<&str> = (list.lines().skip(1))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(ids, ["3", "4"], "{list}");
    let since = stdout_of(history(&store).args(["list", "--since", "2026-11-21"]), 0);
    assert_eq!(since.lines().count(), 3, "{since}");
    let show = stdout_of(history(&store).args(["show", "2"]), 0);
    assert!(show.contains("lnd 0.19.0-beta"), "{show}");
    assert!(show.contains("TPS 112.0"), "{show}");
    assert!(
        show.contains("bytes per payment -"),
        "not read in this report: {show}"
    );
    let trend = stdout_of(history(&store).args(["trend", "tps"]), 0);
    assert!(trend.contains("lnd 0.19.0-beta"), "{trend}");
    assert!(trend.contains("n=2 (runs 3, 4)"), "{trend}");
}

#[test]
fn check_exits_1_on_a_planted_regression_and_0_on_noise() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("h.sqlite");
    check_calls_a_planted_regression(&|| history(&store), dir.path());
}

#[test]
fn bad_stores_and_bad_reports_exit_2_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.sqlite");
    let text = "not a database ".repeat(300);
    std::fs::write(&junk, &text).unwrap();
    let fixture = repo_file("tests/fixtures/reports/lnd-0.18");
    let out = stdout_of(history(&junk).arg("import").arg(&fixture), 2);
    assert!(out.contains("not a results store"), "{out}");
    assert_eq!(std::fs::read_to_string(&junk).unwrap(), text);

    let out = stdout_of(history(dir.path()).arg("list"), 2);
    assert!(out.contains("a directory; give a file"), "{out}");

    let store = dir.path().join("h.sqlite");
    let out = stdout_of(history(&store).arg("list"), 2);
    assert!(out.contains("no results store there yet"), "{out}");
    // One unreadable directory among good ones: nothing is recorded.
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = stdout_of(history(&store).arg("import").arg(&fixture).arg(&empty), 2);
    assert!(out.contains("neither report.json nor sweep.json"), "{out}");
    assert!(!store.exists(), "a store was created for a refused import");
    let out = stdout_of(history(&store).args(["list", "--since", "yesterday"]), 2);
    assert!(out.contains("not a date"), "{out}");

    stdout_of(history(&store).arg("import").arg(&fixture), 0);
    let conn = rusqlite::Connection::open(&store).unwrap();
    conn.execute("INSERT INTO schema_version (version) VALUES (99)", [])
        .unwrap();
    let out = stdout_of(history(&store).arg("list"), 2);
    assert!(out.contains("schema version 99"), "{out}");
}

#[test]
fn a_locked_store_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("h.sqlite");
    let fixture = repo_file("tests/fixtures/reports/lnd-0.18");
    stdout_of(history(&store).arg("import").arg(&fixture), 0);
    let holder = rusqlite::Connection::open(&store).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let other = repo_file("tests/fixtures/reports/lnd-0.19");
    let out = stdout_of(history(&store).arg("import").arg(&other), 3);
    assert!(out.contains("locked by another process"), "{out}");
    holder.execute_batch("ROLLBACK").unwrap();
    let list = stdout_of(history(&store).arg("list"), 0);
    assert_eq!(list.lines().count(), 2, "{list}");
}

#[test]
fn a_run_refuses_a_directory_as_its_store_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::cargo_bin("lnbench-tui")
        .unwrap()
        .arg(repo_file(
            "tests/fixtures/scenarios/valid/alice-pays-bob.yaml",
        ))
        .arg("--store")
        .arg(dir.path())
        .arg("--no-tui")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("a directory; give a file"), "{err}");
    assert!(!err.contains("chain up"), "the run started: {err}");
}

/// Every element of an XHTML-like page, as (name, href) in document order; panics
/// unless it is well-formed XML.
fn elements(page: &Path) -> Vec<(String, Option<String>)> {
    use quick_xml::events::Event;
    let text = std::fs::read_to_string(page).unwrap();
    let mut reader = quick_xml::Reader::from_str(&text);
    let mut out = Vec::new();
    loop {
        match reader.read_event() {
            Ok(Event::Eof) => break,
            Ok(Event::Start(e) | Event::Empty(e)) => {
                let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                let href = (e.try_get_attribute("href").unwrap())
                    .map(|a| String::from_utf8(a.value.to_vec()).unwrap());
                out.push((name, href));
            }
            Ok(_) => {}
            Err(e) => panic!(
                "{} is not well-formed at {}: {e}",
                page.display(),
                reader.buffer_position()
            ),
        }
    }
    out
}

#[test]
fn the_site_is_script_free_with_a_linked_dot_per_load() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let store = d.join("h.sqlite");
    let a = repeated(&d.join("a"), "2026-11-20T10:00:00Z", &[60.0, 61.0, 62.0]);
    let b = repeated(&d.join("b"), "2026-11-20T11:00:00Z", &[50.0, 51.0]);
    let other = d.join("other");
    std::fs::create_dir_all(&other).unwrap();
    let mut r = report("2026-11-21T10:00:00Z", 10.0);
    r["scenario"]["name"] = json!("other <&> one");
    std::fs::write(other.join("report.json"), r.to_string()).unwrap();
    for run in [&a, &b] {
        for entry in std::fs::read_dir(run).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                std::fs::write(p.join("report.html"), "<html></html>").unwrap();
            }
        }
    }
    stdout_of(history(&store).arg("import").args([&a, &b, &other]), 0);
    let site = d.join("site");
    let out = stdout_of(history(&store).arg("site").arg(&site), 0);
    assert_eq!(out.lines().count(), 3, "{out}");

    let index = elements(&site.join("index.html"));
    let pages: Vec<&str> = (index.iter())
        .filter_map(|(n, h)| (n == "a").then_some(h.as_deref()?))
        .collect();
    assert_eq!(
        pages,
        [
            "scenario-alice-pays-bob.html",
            "scenario-other_____one.html"
        ]
    );
    let text = std::fs::read_to_string(site.join(pages[1])).unwrap();
    assert!(text.contains("other &lt;&amp;&gt; one"), "{text}");

    let page = elements(&site.join(pages[0]));
    assert!(
        page.iter().all(|(n, _)| n != "script"),
        "a script in the page"
    );
    // One chart each for TPS, p50 and p99 (the runs read no CPU), a dot per load,
    // each dot inside a link to that load's report.
    let charts: Vec<usize> = page
        .iter()
        .enumerate()
        .filter(|(_, (n, _))| n == "svg")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(charts.len(), 3, "{page:?}");
    for (k, start) in charts.iter().enumerate() {
        let end = charts.get(k + 1).copied().unwrap_or(page.len());
        let chart = &page[*start..end];
        let dots = chart.iter().filter(|(n, _)| n == "circle").count();
        let links: Vec<&str> = (chart.iter())
            .filter_map(|(n, h)| (n == "a").then_some(h.as_deref()?))
            .collect();
        assert_eq!((dots, links.len()), (5, 5), "{chart:?}");
        for href in links {
            assert!(site.join(href).is_file(), "{href} does not resolve");
            assert!(href.ends_with("/report.html"), "{href}");
        }
    }
}

#[test]
fn store_and_no_store_together_are_refused() {
    let out = Command::cargo_bin("lnbench-tui")
        .unwrap()
        .arg(repo_file(
            "tests/fixtures/scenarios/valid/alice-pays-bob.yaml",
        ))
        .args(["--store", "h.sqlite", "--no-store"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot be used with"), "{err}");
}

#[test]
fn a_run_refuses_a_postgresql_url_that_does_not_parse_before_it_starts() {
    let out = Command::cargo_bin("lnbench-tui")
        .unwrap()
        .arg(repo_file(
            "tests/fixtures/scenarios/valid/alice-pays-bob.yaml",
        ))
        .arg("--store")
        .arg("postgres://bench:pw-9c1e77aa@db:notaport/history")
        .arg("--no-tui")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not a PostgreSQL URL"), "{err}");
    assert!(err.contains("postgres://bench:[REDACTED]@db"), "{err}");
    assert!(!err.contains("pw-9c1e77aa"), "{err}");
    assert!(!err.contains("chain up"), "the run started: {err}");
}
