//! `lnbench-tui history` on a real PostgreSQL server (`--store postgres://...`): the
//! same import, list, show and check as on SQLite, the password given as PGPASSWORD
//! and never printed, and the bad stores: a wrong password, no password, a server not
//! listening, a store of a newer schema, a database that is not a results store.

mod common;
#[path = "history_support/pg.rs"]
mod pg;
#[path = "history_support/runs.rs"]
mod runs;

use assert_cmd::Command;
use common::repo_file;
use runs::*;

/// `history --store URL`, with PGPASSWORD set to `password` (or unset).
fn on(url: &str, password: Option<&str>) -> Command {
    let mut c = history(url);
    c.env_remove("PGPASSWORD");
    if let Some(p) = password {
        c.env("PGPASSWORD", p);
    }
    c
}

#[test]
fn the_store_on_postgresql_records_lists_and_checks() {
    let Some(server) = pg::start("history_pg::the_store_on_postgresql_records_lists_and_checks")
    else {
        return;
    };
    let (url, pw) = (server.url(), server.password.clone());
    let fixtures =
        ["lnd-0.18", "lnd-0.19"].map(|f| repo_file(&format!("tests/fixtures/reports/{f}")));
    let out = stdout_of(on(&url, Some(&pw)).arg("import").args(&fixtures), 0);
    assert_eq!(out.matches("recorded as run").count(), 2, "{out}");
    let again = stdout_of(on(&url, Some(&pw)).arg("import").arg(&fixtures[0]), 0);
    assert!(again.contains("already recorded as run 1"), "{again}");
    let show = stdout_of(on(&url, Some(&pw)).args(["show", "2"]), 0);
    assert!(show.contains("lnd 0.19.0-beta"), "{show}");
    let list = stdout_of(on(&url, Some(&pw)).arg("list"), 0);
    assert_eq!(list.lines().count(), 3, "{list}");
    // The schema the server holds: both migrations, once each.
    let mut client = server.client();
    let versions: Vec<i64> = (client.query("SELECT version FROM schema_version ORDER BY 1", &[]))
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(versions, [1, 2, 3]);
    let bad = stdout_of(on(&url, Some(&pw)).args(["show", "9"]), 2);
    assert!(
        bad.contains("no run 9 in postgres://history@127.0.0.1"),
        "{bad}"
    );
    // The password in the URL works too, and is never printed.
    let with = server.url_with(&pw);
    let list = stdout_of(on(&with, None).arg("list"), 0);
    assert!(!list.contains(&pw));
}

#[test]
fn check_on_postgresql_calls_a_planted_regression_and_not_a_repeat() {
    let Some(server) = pg::start("history_pg::check_on_postgresql_calls_a_planted_regression")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (url, pw) = (server.url(), server.password.clone());
    check_calls_a_planted_regression(&|| on(&url, Some(&pw)), dir.path());
    // The runs are on the server (not in a file named like the URL).
    let runs: i64 = (server.client().query_one("SELECT count(*) FROM runs", &[]))
        .unwrap()
        .get(0);
    assert_eq!(runs, 3);
}

#[test]
fn bad_postgresql_stores_exit_2_or_3_naming_the_store_without_its_password() {
    let Some(server) = pg::start("history_pg::bad_postgresql_stores") else {
        return;
    };
    let fixture = repo_file("tests/fixtures/reports/lnd-0.18");
    let url = server.url();
    let wrong = "wrong-password-7f3a";
    let out = stdout_of(on(&server.url_with(wrong), None).arg("list"), 2);
    assert!(out.contains("the server refused the login"), "{out}");
    assert!(
        out.contains("postgres://history:[REDACTED]@127.0.0.1"),
        "{out}"
    );
    assert!(!out.contains(wrong), "{out}");
    let out = stdout_of(on(&url, Some(wrong)).arg("import").arg(&fixture), 2);
    assert!(out.contains("PGPASSWORD"), "{out}");
    assert!(!out.contains(wrong), "{out}");
    let out = stdout_of(on(&url, None).arg("list"), 2);
    assert!(
        out.contains("asks for a password and none was given"),
        "{out}"
    );

    // A port where nothing listens, and a host that does not resolve: environment.
    let closed = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let nowhere = format!("postgres://history:{wrong}@127.0.0.1:{port}/history");
    let out = stdout_of(on(&nowhere, None).arg("list"), 3);
    assert!(out.contains("cannot reach the PostgreSQL server"), "{out}");
    assert!(out.contains(&format!("127.0.0.1:{port}/history")), "{out}");
    assert!(!out.contains(wrong), "{out}");
    let out = stdout_of(
        on(
            "postgres://history@no-such-host.invalid/history",
            Some(wrong),
        )
        .arg("list"),
        3,
    );
    assert!(out.contains("cannot reach"), "{out}");
    let out = stdout_of(
        on("postgres://history@127.0.0.1:notaport/h", None).arg("list"),
        2,
    );
    assert!(out.contains("not a PostgreSQL URL"), "{out}");

    let pw = server.password.clone();
    let mut client = server.client();
    // A database with tables of its own: not a results store, left alone.
    client.batch_execute("CREATE TABLE other (x int)").unwrap();
    let out = stdout_of(on(&url, Some(&pw)).arg("import").arg(&fixture), 2);
    assert!(out.contains("not a results store"), "{out}");
    client.batch_execute("DROP TABLE other").unwrap();
    // A store of a newer schema: refused, nothing written.
    stdout_of(on(&url, Some(&pw)).arg("import").arg(&fixture), 0);
    client
        .batch_execute("INSERT INTO schema_version (version) VALUES (99)")
        .unwrap();
    let other = repo_file("tests/fixtures/reports/lnd-0.19");
    let out = stdout_of(on(&url, Some(&pw)).arg("import").arg(&other), 2);
    assert!(
        out.contains("schema version 99, written by a newer lnbench-tui"),
        "{out}"
    );
    let runs: i64 = client
        .query_one("SELECT count(*) FROM runs", &[])
        .unwrap()
        .get(0);
    assert_eq!(runs, 1, "the refused import wrote a run");
}
