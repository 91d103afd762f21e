//! End to end with Eclair: real Eclair nodes (and LND beside them) on a real Bitcoin Core
//! regtest chain, through the real binary: Eclair pays Eclair by keysend and by invoice
//! as processes and in containers, LND and Eclair pay each other, a SIGINT in the load
//! and an Eclair node killed in the load end the run cleanly. Eclair and bitcoind build
//! from source trees (`ECLAIR_SRC=<tree> scripts/build-nodes.sh`, `BITCOIN_SRC=<tree>
//! ...`); where the build cache lacks them these tests say they did not run (stderr and
//! `target/tmp/not-run/`, counted by `.ci/run`), never pass silently.

mod common;

use common::docker::{block_on, labelled};
use common::scenario_run::{ScenarioRun as Run, assert_nothing_left, node};
use common::*;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::time::Duration;

/// True when Eclair and bitcoind are built; otherwise records that `test` did not run.
fn built(test: &str) -> bool {
    built_on_bitcoind(test, "eclair-node", ECLAIR_BUILD)
}

fn fixture() -> String {
    std::fs::read_to_string(repo_file(
        "tests/fixtures/scenarios/valid/eclair-pays-eclair.yaml",
    ))
    .unwrap()
}

#[test]
fn eclair_pays_eclair_by_keysend_and_by_invoice_locally() {
    if !built("eclair_pays_eclair_by_keysend_and_by_invoice_locally") {
        return;
    }
    let mut run = Run::start(&fixture(), 200);
    let (report, log) = run.succeeded(200);
    for step in ["chain up", "nodes up", "wallets funded", "channels active"] {
        assert!(log.contains(step), "setup step {step:?} not shown:\n{log}");
    }
    for name in ["alice", "bob"] {
        let n = node(&report, name);
        assert_eq!(n["implementation"], "eclair", "{n:#}");
        let version = n["version"].as_str().unwrap();
        assert!(version.contains("0.13.0"), "{name}: {version}");
        assert!(
            n["binary"].as_str().unwrap().ends_with("eclair-node"),
            "{n:#}"
        );
    }
    assert!(
        !serde_json::to_string(&report)
            .unwrap()
            .contains("password ="),
        "no config file content in the report"
    );
    assert_websocket_completion(&report);
    assert_nothing_left(&run.run_dir(), &log);

    let invoices = fixture().replace("kind: keysend", "kind: invoice");
    let mut run = Run::start(&invoices, 200);
    let (report, log) = run.succeeded(200);
    assert_eq!(report["workload"]["kind"], "invoice");
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

/// LND (alice) and Eclair (bob) on one chain, channels from `payer`, paid by `kind`.
fn mixed(payer: &str, payee: &str, kind: &str) -> String {
    format!(
        "name: {payer}-pays-{payee}
description: Can LND and Eclair pay each other?
runtime: local
chain:
  implementation: bitcoind
nodes:
  alice:
    implementation: lnd
  bob:
    implementation: eclair
channels:
  - from: {payer}
    to: {payee}
    capacity_sat: 5000000
    count: 2
workload:
  kind: {kind}
  senders: [{payer}]
  receiver: {payee}
  amount_msat: 1000
  concurrency: 5
  stop:
    payments: 2000
  payment_timeout: 60s
"
    )
}

#[test]
fn lnd_pays_eclair_and_eclair_pays_lnd() {
    if !built("lnd_pays_eclair_and_eclair_pays_lnd") {
        return;
    }
    for (payer, payee, kind) in [("alice", "bob", "keysend"), ("bob", "alice", "invoice")] {
        let mut run = Run::start(&mixed(payer, payee, kind), 200);
        let (report, log) = run.succeeded(200);
        assert_eq!(node(&report, "alice")["implementation"], "lnd");
        assert_eq!(node(&report, "bob")["implementation"], "eclair");
        assert_eq!(node(&report, payer)["role"], "sender");
        assert_eq!(report["workload"]["kind"], kind);
        assert_nothing_left(&run.run_dir(), &log);
    }
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
    if !built("lnd_pays_eclair_on_the_local_postgresql") {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let text = mixed("alice", "bob", "keysend").replace(
        "    implementation: eclair\n",
        "    implementation: eclair\n    database: postgres\n",
    );
    assert_eq!(text.matches("database: postgres").count(), 1, "{text}");
    let mut run = Run::start(&text, 300);
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

/// Waits until the load has made payments: the JVM's first ones take a while (JIT).
fn wait_for_payments(run: &mut Run) {
    run.running.wait_for("payments made", 1, |l| {
        l.contains(" ok ") && l.contains("tps") && !l.contains(" ok 0 ")
    });
}

#[test]
fn sigint_in_an_eclair_load_leaves_nothing_running() {
    if !built("sigint_in_an_eclair_load_leaves_nothing_running") {
        return;
    }
    let mut run = Run::start(&fixture(), 1_000_000);
    wait_for_payments(&mut run);
    kill(Pid::from_raw(run.running.child.id() as i32), Signal::SIGINT).expect("SIGINT");
    let (status, log) = run.running.wait_exit(Duration::from_secs(120));
    assert!(status.code().is_some(), "exit status {status:?}\n{log}");
    let report = run.report();
    assert_eq!(report["complete"], false);
    assert_eq!(report["interrupted_by"], "SIGINT");
    assert!(report["results"]["ok"].as_u64().unwrap() > 0);
    assert_nothing_left(&run.run_dir(), &log);
}

#[test]
fn an_eclair_node_killed_in_the_load_ends_the_run_with_its_log() {
    if !built("an_eclair_node_killed_in_the_load_ends_the_run_with_its_log") {
        return;
    }
    let mut run = Run::start(&fixture(), 1_000_000);
    wait_for_payments(&mut run);
    // The JVM is the process started (the script execs it), named by bob's alias.
    let bob = processes_mentioning(&run.run_dir())
        .into_iter()
        .find(|(_, cmd)| cmd.contains("-Declair.node-alias=bob"))
        .expect("bob's Eclair is running");
    assert!(bob.1.contains("java"), "the JVM itself: {}", bob.1);
    kill(Pid::from_raw(bob.0 as i32), Signal::SIGKILL).expect("kill bob");
    let (status, log) = run.running.wait_exit(Duration::from_secs(120));
    assert_eq!(status.code(), Some(3), "exit status {status:?}\n{log}");
    assert!(log.contains("bob exited during the load"), "{log}");
    // The tail of bob's log: Eclair's own lines (printed to its stdout).
    assert!(
        log.contains("fr.acinq.eclair") || log.contains("f.a.e"),
        "{log}"
    );
    assert_nothing_left(&run.run_dir(), &log);
}

#[test]
fn eclair_pays_eclair_by_keysend_in_docker() {
    if !built("eclair_pays_eclair_by_keysend_in_docker") {
        return;
    }
    let Some(docker) = common::docker::engine() else {
        return;
    };
    let chain = lnbench_tui::chain::driver(lnbench_tui::chain::ChainKind::Bitcoind).local_image();
    let eclair = lnbench_tui::node::driver(lnbench_tui::node::Implementation::Eclair)
        .images(None)
        .local;
    for image in [&chain, &eclair] {
        assert!(
            block_on(docker.inspect_image(image)).is_ok(),
            "image {image} is missing: run scripts/build-images.sh (scripts/setup.sh --dev does)"
        );
    }
    let text = fixture().replace("runtime: local", "runtime: docker");
    let mut run = Run::start(&text, 200);
    let (report, log) = run.succeeded(200);
    let runtime = report["runtime"].as_str().unwrap();
    assert!(
        runtime.contains(&eclair) && runtime.contains(&chain),
        "{runtime}"
    );
    assert_eq!(node(&report, "bob")["implementation"], "eclair");
    let run_id = run.running.run_id();
    let (containers, networks) = labelled(Some(&run_id));
    assert!(
        containers.is_empty() && networks.is_empty(),
        "left behind: {containers:?} {networks:?}\n{log}"
    );
}

/// Eclair on the run's PostgreSQL server (`database: postgres`), in docker: Eclair's JDBC
/// client reaches the server container over the run's network. The server's data grows
/// with the payments (Eclair writes there, not to SQLite).
#[test]
fn eclair_pays_eclair_on_postgresql_in_docker() {
    if !built("eclair_pays_eclair_on_postgresql_in_docker") {
        return;
    }
    let on_postgres = fixture().replace(
        "    version: v0.13.0\n",
        "    version: v0.13.0\n    database: postgres\n",
    );
    assert_eq!(on_postgres.matches("database: postgres").count(), 2);

    let Some(docker) = common::docker::engine() else {
        return;
    };
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
    let text = on_postgres.replace("runtime: local", "runtime: docker");
    let mut run = Run::start(&text, 100);
    let (report, log) = run.succeeded(100);
    for name in ["alice", "bob"] {
        assert_eq!(node(&report, name)["database"], "postgres", "{name}");
    }
    assert_postgres_data_grew(&report);
    let run_id = run.running.run_id();
    let (containers, networks) = labelled(Some(&run_id));
    assert!(
        containers.is_empty() && networks.is_empty(),
        "left behind: {containers:?} {networks:?}\n{log}"
    );
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
