//! End to end with Eclair: real Eclair nodes (and LND beside them) on a real Bitcoin Core
//! regtest chain, through the real binary: Eclair pays Eclair by keysend and by invoice
//! as processes and in containers, LND and Eclair pay each other, a SIGINT in the load
//! and an Eclair node killed in the load end the run cleanly. Eclair and bitcoind build
//! from source trees (`ECLAIR_SRC=<tree> scripts/build-nodes.sh`, `BITCOIN_SRC=<tree>
//! ...`); where the build cache lacks them these tests say they did not run (stderr and
//! `target/tmp/not-run/`, counted by `.ci/run`), never pass silently.

use crate::common::docker::block_on;
use crate::common::impls::*;
use crate::common::scenario_run::{ScenarioRun as Run, assert_nothing_left, node};
use crate::common::*;

#[test]
fn eclair_pays_eclair_by_keysend_and_by_invoice_locally() {
    if !ECLAIR.built("eclair_pays_eclair_by_keysend_and_by_invoice_locally") {
        return;
    }
    let mut run = Run::start(&yaml(&ECLAIR.fixture()), 200);
    let (report, log) = ECLAIR.paid(&mut run, 200, "keysend");
    ECLAIR.assert_pair_ran(&report, &log);
    assert!(
        !serde_json::to_string(&report)
            .unwrap()
            .contains("password ="),
        "no config file content in the report"
    );
    assert_websocket_completion(&report);
    assert_nothing_left(&run.run_dir(), &log);

    let mut invoices = ECLAIR.fixture();
    invoices["workload"]["kind"] = "invoice".into();
    let mut run = Run::start(&yaml(&invoices), 200);
    let (report, log) = ECLAIR.paid(&mut run, 200, "invoice");
    assert_websocket_completion(&report);
    assert_nothing_left(&run.run_dir(), &log);
}

/// The sender learned the payments' ends from Eclair's websocket, which never
/// dropped, and Eclair's own timestamps measured the delivery. A payment may still
/// end by the once-a-second poll when its event is late (a busy machine delays
/// Eclair's events by hundreds of ms): counted, and few.
fn assert_websocket_completion(report: &serde_json::Value) {
    let completion = &node(report, "alice")["completion"];
    println!("completion: {completion:#}");
    assert_eq!(completion["method"], "websocket-event", "{completion:#}");
    assert_eq!(completion["late_up_to_ms"], 0.0, "{completion:#}");
    if let Some(fallback) = completion.get("fallback") {
        assert_eq!(fallback["socket_drops"], 0, "{completion:#}");
        let polled = fallback["payments"].as_u64().unwrap();
        let ok = report["results"]["ok"].as_u64().unwrap();
        assert!(polled * 10 <= ok, "{polled} of {ok} by polling");
    }
    assert!(
        completion["delivery_lag_max_ms"].is_number(),
        "{completion:#}"
    );
}

#[test]
fn lnd_pays_eclair_and_eclair_pays_lnd() {
    let runs = [("alice", "bob", "keysend"), ("bob", "alice", "invoice")];
    lnd_and_it_pay_each_other(&ECLAIR, "lnd_pays_eclair_and_eclair_pays_lnd", &runs);
}

/// The file named `name` somewhere under `dir`.
fn find_file(dir: &std::path::Path, name: &str) -> Option<std::path::PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = find_file(&path, name) {
                return Some(found);
            }
        } else if entry.file_name() == name {
            return Some(path);
        }
    }
    None
}

/// Eclair (bob) on the local runtime's PostgreSQL server, paid by LND (alice): the server
/// listens on loopback TCP for bob, who logs in with a password found in his 0600
/// `eclair.conf` and on no process's command line nor in the report. Eclair writes there
/// (the server's data grows).
#[test]
fn lnd_pays_eclair_on_the_local_postgresql() {
    if !ECLAIR.built("lnd_pays_eclair_on_the_local_postgresql") {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let mut scenario = ECLAIR.mixed("alice", "bob", "keysend");
    scenario["nodes"]["bob"]["database"] = "postgres".into();
    let mut run = Run::start(&yaml(&scenario), 300);
    wait_for_payments(&mut run);
    let conf = find_file(&run.run_dir(), "eclair.conf").expect("bob's eclair.conf");
    let mode = std::fs::metadata(&conf).unwrap().permissions().mode() & 0o777;
    let conf_text = std::fs::read_to_string(&conf).unwrap();
    let password = conf_text
        .lines()
        .find_map(|l| l.strip_prefix("eclair.db.postgres.password = "))
        .unwrap_or_else(|| panic!("no PostgreSQL password in eclair.conf:\n{conf_text}"))
        .trim_matches('"')
        .to_string();
    let in_argv = processes_mentioning(std::path::Path::new(&password));
    let bob = processes_mentioning(&run.run_dir())
        .into_iter()
        .find(|(_, cmd)| cmd.contains("-Declair.node-alias=bob"))
        .expect("bob's Eclair is running");
    let (report, log) = run.succeeded(300);
    assert_eq!(mode, 0o600, "{}", conf.display());
    assert_eq!(password.len(), 32, "{conf_text}");
    assert!(
        conf_text.contains("eclair.db.postgres.host = \"127.0.0.1\""),
        "{conf_text}"
    );
    assert!(
        in_argv.is_empty(),
        "the password on a command line: {in_argv:?}"
    );
    assert!(!bob.1.contains("db.postgres"), "{}", bob.1);
    assert!(
        !run.report_text().contains(&password),
        "the password in the report"
    );
    assert!(!log.contains(&password), "the password in the output");
    assert_eq!(node(&report, "bob")["database"], "postgres");
    assert_postgres_data_grew(&report);
    assert_nothing_left(&run.run_dir(), &log);
}

#[test]
fn sigint_in_an_eclair_load_leaves_nothing_running() {
    let test = "sigint_in_an_eclair_load_leaves_nothing_running";
    sigint_mid_load_leaves_nothing(&ECLAIR, test, None);
}

#[test]
fn an_eclair_node_killed_in_the_load_ends_the_run_with_its_log() {
    let test = "an_eclair_node_killed_in_the_load_ends_the_run_with_its_log";
    a_node_killed_mid_load_ends_the_run_with_its_log(&ECLAIR, test);
}

/// Eclair pays Eclair by keysend in containers, both on the run's PostgreSQL server
/// (`database: postgres`): Eclair's JDBC client reaches the server container over the
/// run's network. The server's data grows with the payments (Eclair writes there, not
/// to SQLite). One run for both: Eclair in docker on its default SQLite is the same
/// containers, and the local tests pay on SQLite.
#[test]
fn eclair_pays_eclair_on_postgresql_in_docker() {
    let test = "eclair_pays_eclair_on_postgresql_in_docker";
    // Asked once Eclair is built and the engine answers (not run here otherwise).
    let on_postgres = |scenario: &mut serde_json::Value| {
        let docker = crate::common::docker::engine().expect("the engine answered");
        let postgres_image =
            block_on(docker.list_images(None::<bollard::query_parameters::ListImagesOptions>))
                .unwrap_or_default()
                .iter()
                .flat_map(|i| i.repo_tags.clone())
                .any(|t| t.starts_with("lnbench/postgres:"));
        assert!(
            postgres_image,
            "lnbench/postgres is missing: run scripts/build-images.sh (scripts/setup.sh --dev does)"
        );
        for name in ["alice", "bob"] {
            scenario["nodes"][name]["database"] = "postgres".into();
        }
    };
    let Some(report) = pays_itself_in_docker(&ECLAIR, test, on_postgres) else {
        return;
    };
    for name in ["alice", "bob"] {
        assert_eq!(node(&report, name)["database"], "postgres", "{name}");
    }
    assert_postgres_data_grew(&report);
}

/// The report's PostgreSQL service: its data directory grew during the run.
fn assert_postgres_data_grew(report: &serde_json::Value) {
    let pg = report["services"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["implementation"] == "postgresql")
        .unwrap_or_else(|| panic!("no PostgreSQL service: {:#}", report["services"]));
    let (start, end) = (
        pg["resources"]["data_dir_bytes_start"]
            .as_u64()
            .unwrap_or(0),
        pg["resources"]["data_dir_bytes_end"].as_u64().unwrap_or(0),
    );
    assert!(
        end > start,
        "PostgreSQL's data did not grow: {start} -> {end}"
    );
}
