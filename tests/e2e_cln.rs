//! End to end with Core Lightning: real CLN nodes (and LND beside them) on a real Bitcoin
//! Core regtest chain, through the real binary: CLN pays CLN by keysend as processes and
//! in containers, and LND and CLN pay each other. CLN and bitcoind build from source
//! trees (`CLN_SRC=<tree> scripts/build-nodes.sh`, `BITCOIN_SRC=<tree> ...`); where the
//! build cache lacks them these tests say they did not run (stderr and
//! `target/tmp/not-run/`, counted by `.ci/run`), never pass silently.

mod common;

use common::docker::{block_on, labelled};
use common::scenario_run::{ScenarioRun as Run, assert_nothing_left, node};
use common::*;
use std::path::Path;
use std::time::Duration;

/// True when CLN and bitcoind are built; otherwise records that `test` did not run.
fn built(test: &str) -> bool {
    built_on_bitcoind(test, "lightningd", CLN_BUILD)
}

fn fixture() -> String {
    std::fs::read_to_string(repo_file(
        "tests/fixtures/scenarios/valid/cln-pays-cln.yaml",
    ))
    .unwrap()
}

#[test]
fn cln_pays_cln_by_keysend_locally() {
    if !built("cln_pays_cln_by_keysend_locally") {
        return;
    }
    let mut run = Run::start(&fixture(), 200);
    let (report, log) = run.succeeded(200);
    for step in [
        "chain up",
        "nodes up",
        "wallets funded",
        "channels active",
        "routes ready",
    ] {
        assert!(log.contains(step), "setup step {step:?} not shown:\n{log}");
    }
    for name in ["alice", "bob"] {
        let n = node(&report, name);
        assert_eq!(n["implementation"], "cln", "{n:#}");
        let version = n["version"].as_str().unwrap();
        assert!(version.starts_with("v26.06"), "{name}: {version}");
        assert!(
            n["binary"].as_str().unwrap().ends_with("lightningd"),
            "{n:#}"
        );
    }
    assert_nothing_left(&run.run_dir(), &log);
}

/// LND (alice) and CLN (bob) on one chain, channels from `payer`, paid by `kind`
/// (`keysend` or `invoice`: the payee makes the invoices); setup's probes are keysends.
fn mixed(payer: &str, payee: &str, kind: &str) -> String {
    format!(
        "name: {payer}-pays-{payee}-by-{kind}
description: Can LND and Core Lightning pay each other?
runtime: local
chain:
  implementation: bitcoind
nodes:
  alice:
    implementation: lnd
  bob:
    implementation: cln
channels:
  - from: {payer}
    to: {payee}
    capacity_sat: 5000000
    count: 5
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
fn lnd_pays_cln_and_cln_pays_lnd() {
    if !built("lnd_pays_cln_and_cln_pays_lnd") {
        return;
    }
    for kind in ["keysend", "invoice"] {
        for (payer, payee) in [("alice", "bob"), ("bob", "alice")] {
            let mut run = Run::start(&mixed(payer, payee, kind), 200);
            let (report, log) = run.succeeded(200);
            assert_eq!(node(&report, "alice")["implementation"], "lnd");
            assert_eq!(node(&report, "bob")["implementation"], "cln");
            assert_eq!(node(&report, payer)["role"], "sender");
            assert_eq!(report["workload"]["kind"], kind);
            assert_nothing_left(&run.run_dir(), &log);
        }
    }
}

#[test]
fn cln_pays_cln_by_keysend_in_docker() {
    if !built("cln_pays_cln_by_keysend_in_docker") {
        return;
    }
    let Some(docker) = common::docker::engine() else {
        return;
    };
    let chain = lnbench_tui::chain::driver(lnbench_tui::chain::ChainKind::Bitcoind).local_image();
    let cln = lnbench_tui::node::driver(lnbench_tui::node::Implementation::Cln)
        .images(None)
        .local;
    for image in [&chain, &cln] {
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
        runtime.contains(&cln) && runtime.contains(&chain),
        "{runtime}"
    );
    assert_eq!(node(&report, "bob")["implementation"], "cln");
    let run_id = run.running.run_id();
    let (containers, networks) = labelled(Some(&run_id));
    assert!(
        containers.is_empty() && networks.is_empty(),
        "left behind: {containers:?} {networks:?}\n{log}"
    );
}

#[test]
fn cln_pays_cln_by_invoice() {
    if !built("cln_pays_cln_by_invoice") {
        return;
    }
    let text = fixture().replace("kind: keysend", "kind: invoice");
    let mut run = Run::start(&text, 200);
    let (report, log) = run.succeeded(200);
    assert_eq!(report["workload"]["kind"], "invoice");
    assert_eq!(node(&report, "bob")["implementation"], "cln");
    assert_nothing_left(&run.run_dir(), &log);
}

/// A route of three channels, alice (LND) -> carol (CLN) -> dave (CLN) -> bob (LND):
/// payments cross two Core Lightning nodes, and one CLN-to-CLN channel in the middle.
#[test]
fn a_three_hop_route_through_cln_nodes() {
    if !built("a_three_hop_route_through_cln_nodes") {
        return;
    }
    let text = "name: three-hops-through-cln
runtime: local
chain:
  implementation: bitcoind
nodes:
  alice:
    implementation: lnd
  carol:
    implementation: cln
  dave:
    implementation: cln
  bob:
    implementation: lnd
channels:
  - { from: alice, to: carol, capacity_sat: 5000000, count: 2 }
  - { from: carol, to: dave, capacity_sat: 5000000, count: 2 }
  - { from: dave, to: bob, capacity_sat: 5000000, count: 2 }
workload:
  kind: keysend
  senders: [alice]
  receiver: bob
  amount_msat: 1000
  concurrency: 4
  stop:
    payments: 100
  payment_timeout: 60s
";
    let mut run = Run::start(text, 100);
    let (report, log) = run.succeeded(100);
    for (name, role) in [
        ("alice", "sender"),
        ("carol", "router"),
        ("dave", "router"),
        ("bob", "receiver"),
    ] {
        assert_eq!(node(&report, name)["role"], role, "{name}");
    }
    // The only channels run alice-carol-dave-bob: every payment crossed both CLN nodes.
    assert_eq!(node(&report, "carol")["implementation"], "cln");
    assert_eq!(node(&report, "dave")["implementation"], "cln");
    assert_nothing_left(&run.run_dir(), &log);
}

/// Core Lightning on the run's PostgreSQL server (`database: postgres`): one database
/// per node, the server listed under services, the nodes' database in the report.
#[test]
fn cln_pays_cln_on_postgresql() {
    if !built("cln_pays_cln_on_postgresql") {
        return;
    }
    let text = fixture().replace(
        "    version: v26.06.6\n",
        "    version: v26.06.6\n    database: postgres\n",
    );
    assert_eq!(text.matches("database: postgres").count(), 2, "{text}");
    let mut run = Run::start(&text, 100);
    let (report, log) = run.succeeded(100);
    for name in ["alice", "bob"] {
        assert_eq!(node(&report, name)["database"], "postgres", "{name}");
    }
    let services = report["services"].as_array().unwrap();
    assert!(
        services.iter().any(|s| s["implementation"] == "postgresql"),
        "{services:?}"
    );
    assert_nothing_left(&run.run_dir(), &log);
}

/// Core Lightning pays invoices with each payment engine (`payment_engine:` swept: xpay,
/// pay, renepay), a network for each (the clients are made with it); each point's
/// report names the command that paid. One payment in flight: at 10, renepay answered
/// most payments with "no route" here (its own answer, counted as such by the tool).
#[test]
fn cln_pays_invoices_with_each_payment_engine() {
    if !built("cln_pays_invoices_with_each_payment_engine") {
        return;
    }
    let text = format!(
        "{}sweep:\n  payment_engine: [xpay, pay, renepay]\n",
        (fixture().replace("kind: keysend", "kind: invoice"))
            .replace("concurrency: 10", "concurrency: 1")
    );
    let mut run = Run::start(&text, 20);
    let (status, log) = run.running.wait_exit(Duration::from_secs(900));
    assert_eq!(status.code(), Some(0), "exit status {status:?}\n{log}");
    assert_eq!(
        log.matches("==> chain up").count(),
        3,
        "a network each: {log}"
    );
    let report = run.run_dir().parent().unwrap().join("report");
    let sweep: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("sweep.json")).unwrap()).unwrap();
    for engine in ["xpay", "pay", "renepay"] {
        let label = format!("payment_engine={engine}");
        let point = (sweep["points"].as_array().unwrap().iter())
            .find(|p| p["label"] == label.as_str())
            .unwrap_or_else(|| panic!("no point {label}: {sweep:#}"));
        assert_eq!(point["status"], "done", "{point:#}");
        assert_eq!(point["results"]["ok"], 20, "{point:#}");
        assert_eq!(point["results"]["failed"], 0, "{point:#}");
        let path = report.join(&label).join("report.json");
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let source = node(&r, "alice")["completion"]["source"].clone();
        assert_eq!(source, format!("{engine} / xkeysend"), "{label}");
    }
    assert_nothing_left(&run.run_dir(), &log);
}

/// Payments beyond what the channel can spend fail, and the report counts them by reason.
#[test]
fn cln_payments_beyond_capacity_are_counted_by_reason() {
    if !built("cln_payments_beyond_capacity_are_counted_by_reason") {
        return;
    }
    // A channel's whole capacity per payment, over one channel of 1,000,000 sat: the
    // file is valid (no amount above the largest channel), but the channel reserve and
    // the commitment fee leave the sender less than that to spend.
    let text = fixture()
        .replace("capacity_sat: 5000000", "capacity_sat: 1000000")
        .replace("count: 10", "count: 1")
        .replace("amount_msat: 1000", "amount_msat: 1000000000")
        .replace("concurrency: 10", "concurrency: 2");
    let mut run = Run::start(&text, 6);
    let (status, log) = run.running.wait_exit(Duration::from_secs(600));
    let report = run.report();
    assert_eq!(report["results"]["ok"], 0, "{:#}\n{log}", report["results"]);
    assert_eq!(report["results"]["failed"], 6, "{:#}", report["results"]);
    let reasons = report["results"]["failures_by_reason"].as_object().unwrap();
    let counted: u64 = reasons.values().filter_map(|v| v.as_u64()).sum();
    assert_eq!(counted, 6, "{reasons:?}");
    assert!(
        reasons
            .keys()
            .all(|r| r == "no_route" || r == "insufficient_balance"),
        "a payment of the channel's whole capacity fails for want of a route or of balance: {reasons:?}"
    );
    eprintln!("exit {status:?}, failures by reason: {reasons:?}");
    assert_nothing_left(&run.run_dir(), &log);
}

/// The client's failure reasons, on real nodes: carol pays bob's invoice, then alice
/// pays the same invoice, which bob no longer accepts (a paid invoice is answered as an
/// unknown one: `incorrect_or_unknown_payment_details`); and a keysend above every
/// channel's capacity finds no route.
#[test]
fn cln_failure_reasons_on_real_nodes() {
    use lnbench_tui::node::{FailureReason, PaymentOutcome};
    use lnbench_tui::runtime::Runtime;
    if !built("cln_failure_reasons_on_real_nodes") {
        return;
    }
    let text = "name: cln-failures
runtime: local
chain:
  implementation: bitcoind
nodes:
  alice:
    implementation: cln
  carol:
    implementation: cln
  bob:
    implementation: cln
channels:
  - { from: alice, to: bob, capacity_sat: 1000000 }
  - { from: carol, to: bob, capacity_sat: 1000000 }
workload:
  kind: keysend
  senders: [alice, carol]
  receiver: bob
  concurrency: 1
  stop:
    payments: 1
";
    let scenario = lnbench_tui::scenario::parse(
        Path::new("cln-failures.yaml"),
        text,
        lnbench_tui::runtime::capabilities,
    )
    .unwrap();
    lnbench_tui::tls::install_crypto_provider();
    let work = tempfile::tempdir().unwrap();
    let mut runtime =
        lnbench_tui::runtime::local::LocalRuntime::new(work.path().join("run"), false);
    let outcome = block_on(async {
        let mut log = lnbench_tui::setup::StepLog::default();
        let mut facts = lnbench_tui::run::RunFacts::on(&runtime);
        let tested = async {
            let net =
                lnbench_tui::run::bring_up(&scenario, &mut runtime, &mut log, &mut facts).await?;
            let (alice, carol, bob) = (
                net.node("alice").unwrap(),
                net.node("carol").unwrap(),
                net.node("bob").unwrap(),
            );
            let timeout = Duration::from_secs(60);
            let invoice = bob.node.create_invoice(5_000).await?;
            let first = carol.node.pay_invoice(&invoice.bolt11, timeout).await?;
            let again = alice.node.pay_invoice(&invoice.bolt11, timeout).await?;
            let too_much = (alice.node)
                .keysend(&bob.info.pubkey, 2_000_000_000, timeout)
                .await?;
            anyhow::Ok((first, again, too_much))
        }
        .await;
        runtime.down().await.expect("teardown");
        tested
    });
    let (first, again, too_much) = outcome.expect("setup and payments");
    assert!(
        matches!(first, PaymentOutcome::Succeeded { .. }),
        "{first:?}"
    );
    assert_eq!(
        again,
        PaymentOutcome::Failed {
            reason: FailureReason::IncorrectPaymentDetails
        }
    );
    assert!(
        matches!(
            too_much,
            PaymentOutcome::Failed {
                reason: FailureReason::NoRoute | FailureReason::InsufficientBalance
            }
        ),
        "{too_much:?}"
    );
    let left = processes_mentioning(&work.path().join("run"));
    assert!(left.is_empty(), "processes still alive: {left:?}");
}

/// SIGINT in the middle of a CLN load: exit 130, a partial report, no process left;
/// while it ran, no command line on the machine showed a password.
#[test]
fn sigint_mid_load_of_cln_nodes_leaves_nothing() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    if !built("sigint_mid_load_of_cln_nodes_leaves_nothing") {
        return;
    }
    let mut run = Run::start(&fixture(), 100_000);
    run.running.wait_for_load(2);
    let with_passwords = processes_with_passwords();
    let pid = Pid::from_raw(run.running.child.id() as i32);
    kill(pid, Signal::SIGINT).expect("SIGINT");
    let (status, log) = run.running.wait_exit(Duration::from_secs(120));
    assert_eq!(status.code(), Some(130), "exit status {status:?}\n{log}");
    assert!(
        with_passwords.is_empty(),
        "passwords on command lines: {with_passwords:?}"
    );
    let report = run.report();
    assert_eq!(report["complete"], false);
    assert_eq!(report["interrupted_by"], "SIGINT");
    assert!(report["results"]["ok"].as_u64().unwrap() > 0);
    assert_nothing_left(&run.run_dir(), &log);
}

/// A CLN node killed in the middle of the load ends the run: exit 3, the node named,
/// its log's last lines shown, a partial report, nothing left running.
#[test]
fn a_cln_node_killed_mid_load_ends_the_run_with_its_log() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    if !built("a_cln_node_killed_mid_load_ends_the_run_with_its_log") {
        return;
    }
    let mut run = Run::start(&fixture(), 100_000);
    run.running.wait_for_load(2);
    let bob = processes_mentioning(&run.run_dir())
        .into_iter()
        .find(|(_, cmd)| cmd.contains("lightningd") && cmd.contains("--alias=bob"))
        .expect("bob's lightningd is running");
    kill(Pid::from_raw(bob.0 as i32), Signal::SIGKILL).expect("kill bob");
    let (status, log) = run.running.wait_exit(Duration::from_secs(120));
    assert_eq!(status.code(), Some(3), "exit status {status:?}\n{log}");
    assert!(log.contains("bob exited during the load"), "{log}");
    let tail = log
        .split_once("last lines of its log:\n")
        .map(|(_, t)| t)
        .unwrap_or_default();
    assert!(
        tail.lines()
            .next()
            .is_some_and(|l| l.contains("INFO") || l.contains("DEBUG")),
        "bob's log lines follow the notice:\n{log}"
    );
    let report = run.report();
    assert_eq!(report["complete"], false);
    assert!(
        report["interrupted_by"]
            .as_str()
            .unwrap()
            .contains("bob exited"),
        "{}",
        report["interrupted_by"]
    );
    assert_nothing_left(&run.run_dir(), &log);
}
