//! End to end with Core Lightning: real CLN nodes (and LND beside them) on a real Bitcoin
//! Core regtest chain, through the real binary: CLN pays CLN by keysend as processes and
//! in containers, and LND and CLN pay each other. CLN and bitcoind build from source
//! trees (`CLN_SRC=<tree> scripts/build-nodes.sh`, `BITCOIN_SRC=<tree> ...`); where the
//! build cache lacks them these tests say they did not run (stderr and
//! `target/tmp/not-run/`, counted by `.ci/run`), never pass silently.

use crate::common::docker::block_on;
use crate::common::impls::*;
use crate::common::scenario_run::{ScenarioRun as Run, assert_nothing_left, node};
use crate::common::*;
use serde_json::json;
use std::path::Path;
use std::time::Duration;

#[test]
fn cln_pays_cln_by_keysend_locally() {
    if !CLN.built("cln_pays_cln_by_keysend_locally") {
        return;
    }
    let mut run = Run::start(&yaml(&CLN.fixture()), 200);
    let (report, log) = CLN.paid(&mut run, 200, "keysend");
    CLN.assert_pair_ran(&report, &log);
    assert_nothing_left(&run.run_dir(), &log);
}

#[test]
fn lnd_pays_cln_and_cln_pays_lnd() {
    let runs = ["keysend", "invoice"].map(|kind| [("alice", "bob", kind), ("bob", "alice", kind)]);
    lnd_and_it_pay_each_other(&CLN, "lnd_pays_cln_and_cln_pays_lnd", runs.as_flattened());
}

#[test]
fn cln_pays_cln_by_keysend_in_docker() {
    pays_itself_in_docker(&CLN, "cln_pays_cln_by_keysend_in_docker", |_| {});
}

#[test]
fn cln_pays_cln_by_invoice() {
    if !CLN.built("cln_pays_cln_by_invoice") {
        return;
    }
    let mut scenario = CLN.fixture();
    scenario["workload"]["kind"] = "invoice".into();
    let mut run = Run::start(&yaml(&scenario), 200);
    let (report, log) = CLN.paid(&mut run, 200, "invoice");
    assert_eq!(node(&report, "bob")["implementation"], "cln");
    assert_nothing_left(&run.run_dir(), &log);
}

/// A route of three channels, alice (LND) -> carol (CLN) -> dave (CLN) -> bob (LND):
/// payments cross two Core Lightning nodes, and one CLN-to-CLN channel in the middle.
#[test]
fn a_three_hop_route_through_cln_nodes() {
    if !CLN.built("a_three_hop_route_through_cln_nodes") {
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
    if !CLN.built("cln_pays_cln_on_postgresql") {
        return;
    }
    let mut scenario = CLN.fixture();
    for name in ["alice", "bob"] {
        scenario["nodes"][name]["database"] = "postgres".into();
    }
    let mut run = Run::start(&yaml(&scenario), 100);
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
    if !CLN.built("cln_pays_invoices_with_each_payment_engine") {
        return;
    }
    let mut scenario = CLN.fixture();
    scenario["workload"]["kind"] = "invoice".into();
    scenario["workload"]["concurrency"] = 1.into();
    scenario["sweep"] = json!({ "payment_engine": ["xpay", "pay", "renepay"] });
    let mut run = Run::start(&yaml(&scenario), 20);
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
    if !CLN.built("cln_payments_beyond_capacity_are_counted_by_reason") {
        return;
    }
    // A channel's whole capacity per payment, over one channel of 1,000,000 sat: the
    // file is valid (no amount above the largest channel), but the channel reserve and
    // the commitment fee leave the sender less than that to spend.
    let mut scenario = CLN.fixture();
    scenario["channels"][0]["capacity_sat"] = 1_000_000.into();
    scenario["channels"][0]["count"] = 1.into();
    scenario["workload"]["amount_msat"] = 1_000_000_000u64.into();
    scenario["workload"]["concurrency"] = 2.into();
    let mut run = Run::start(&yaml(&scenario), 6);
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
    if !CLN.built("cln_failure_reasons_on_real_nodes") {
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
    let test = "sigint_mid_load_of_cln_nodes_leaves_nothing";
    sigint_mid_load_leaves_nothing(&CLN, test, Some(130));
}

/// A CLN node killed in the middle of the load ends the run: exit 3, the node named,
/// its log's last lines shown, a partial report, nothing left running.
#[test]
fn a_cln_node_killed_mid_load_ends_the_run_with_its_log() {
    let test = "a_cln_node_killed_mid_load_ends_the_run_with_its_log";
    a_node_killed_mid_load_ends_the_run_with_its_log(&CLN, test);
}
