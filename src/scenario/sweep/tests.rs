//! Sweep expansion on small inline scenarios.

use super::super::{Load, PaymentKind};
use super::{SweepParam, SweepValue};
use crate::scenario::parse_error as error_of;
use crate::scenario::tests::parse;
use std::path::Path;

const BASE: &str = "\
name: t
nodes:
  alice:
    implementation: lnd
  carol:
    implementation: lnd
  bob:
    implementation: lnd
channels:
  - from: alice
    to: bob
    through: carol
    capacity_sat: 1000000
workload:
  kind: keysend
  senders: [alice]
  receiver: bob
  concurrency: 2
  stop:
    payments: 10
";

fn sweep_of(sweep: &str) -> super::Sweep {
    let text = format!("{BASE}sweep:\n{sweep}");
    let s = parse(Path::new("t.yaml"), &text).unwrap_or_else(|e| panic!("{e}"));
    s.sweep.expect("a sweep")
}

fn labels(sweep: &super::Sweep) -> Vec<&str> {
    sweep.points.iter().map(|p| p.label.as_str()).collect()
}

#[test]
fn a_concurrency_sweep_makes_one_point_per_value_on_one_network() {
    let sweep = sweep_of("  concurrency: [1, 4, 7, 10]\n  p99_bound: 500ms\n");
    assert_eq!(
        labels(&sweep),
        [
            "concurrency=1",
            "concurrency=4",
            "concurrency=7",
            "concurrency=10"
        ]
    );
    let loads: Vec<Load> = sweep
        .points
        .iter()
        .map(|p| p.scenario.workload.load.clone())
        .collect();
    assert_eq!(loads[2], Load::Closed { concurrency: 7 });
    assert!(sweep.points.iter().all(|p| p.network == 0));
    assert!(sweep.points.iter().all(|p| p.scenario.sweep.is_none()));
    assert_eq!(sweep.p99_bound.unwrap().as_millis(), 500);
}

#[test]
fn the_cartesian_product_puts_network_parameters_first_and_numbers_networks() {
    let sweep = sweep_of("  concurrency: [1, 2]\n  replicas: { carol: [1, 3] }\n");
    assert_eq!(
        sweep.params,
        [
            SweepParam::Replicas("carol".into()),
            SweepParam::Concurrency
        ]
    );
    assert_eq!(
        labels(&sweep),
        [
            "carol.replicas=1,concurrency=1",
            "carol.replicas=1,concurrency=2",
            "carol.replicas=3,concurrency=1",
            "carol.replicas=3,concurrency=2",
        ]
    );
    let networks: Vec<usize> = sweep.points.iter().map(|p| p.network).collect();
    assert_eq!(networks, [0, 0, 1, 1]);
    assert_eq!(sweep.line_groups, ["carol"]);
}

#[test]
fn replicas_of_a_line_group_make_a_line_of_channels() {
    let sweep = sweep_of("  replicas: { carol: [1, 3] }\n");
    let one = &sweep.points[0].scenario;
    let pairs = |s: &crate::scenario::Scenario| -> Vec<(String, String)> {
        s.channels
            .iter()
            .map(|c| (c.from.clone(), c.to.clone()))
            .collect()
    };
    let p = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(pairs(one), [p("alice", "carol"), p("carol", "bob")]);
    let three = &sweep.points[1].scenario;
    assert_eq!(
        pairs(three),
        [
            p("alice", "carol-1"),
            p("carol-1", "carol-2"),
            p("carol-2", "carol-3"),
            p("carol-3", "bob")
        ]
    );
    assert_eq!(three.nodes.len(), 5);
}

#[test]
fn kind_rate_and_db_backend_values_reach_the_point_scenarios() {
    let sweep = sweep_of("  kind: [keysend, invoice-pregenerated]\n");
    assert_eq!(
        sweep.points[1].scenario.workload.kind,
        PaymentKind::InvoicePregenerated
    );
    assert_eq!(
        sweep.points[1].values[0].1,
        SweepValue::Kind(PaymentKind::InvoicePregenerated)
    );
    assert!(sweep.points.iter().all(|p| p.network == 0));

    let db = sweep_of("  db_backend: [bbolt, sqlite, postgres]\n");
    assert_eq!(
        labels(&db),
        [
            "db_backend=bbolt",
            "db_backend=sqlite",
            "db_backend=postgres"
        ]
    );
    assert!(
        db.points[1]
            .scenario
            .nodes
            .iter()
            .all(|n| n.args.iter().any(|a| a == "--db.backend=sqlite"))
    );
    assert_eq!(db.points[1].network, 1);

    let etcd = sweep_of("  db_backend: [etcd, etcd-cluster]\n");
    assert_eq!(
        labels(&etcd),
        ["db_backend=etcd", "db_backend=etcd-cluster"]
    );
    let members: Vec<u32> = etcd
        .points
        .iter()
        .map(|p| p.scenario.etcd_members)
        .collect();
    assert_eq!(members, [1, 3]);
    assert!(etcd.points.iter().all(|p| {
        p.scenario
            .nodes
            .iter()
            .all(|n| n.args.iter().any(|a| a == "--db.backend=etcd"))
    }));
    assert_eq!(etcd.points[1].network, 1);

    let open = BASE.replace(
        "  concurrency: 2\n",
        "  rate:\n    warm_up: { rate: 5, duration: 5s }\n    ramp: { from: 5, to: 10, duration: 5s }\n    hold: { rate: 10, duration: 10s }\n",
    );
    let s = parse(
        Path::new("t.yaml"),
        &format!("{open}sweep:\n  rate: [20, 40.5]\n"),
    )
    .unwrap();
    let sweep = s.sweep.unwrap();
    let Load::Open { phases } = &sweep.points[1].scenario.workload.load else {
        panic!("open loop expected")
    };
    assert_eq!(phases[0].to_rate, 5.0, "warm-up kept");
    assert_eq!(phases[1].to_rate, 40.5, "ramp leads into the hold");
    assert_eq!(phases[2].from_rate, 40.5);
    assert_eq!(labels(&sweep), ["rate=20", "rate=40.5"]);
}

#[test]
fn a_chain_sweep_runs_each_backend_on_a_network_of_its_own() {
    use crate::chain::ChainKind;
    let sweep = sweep_of("  chain: [btcd, bitcoind]\n  concurrency: [1, 4]\n");
    assert_eq!(
        labels(&sweep),
        [
            "chain=btcd,concurrency=1",
            "chain=btcd,concurrency=4",
            "chain=bitcoind,concurrency=1",
            "chain=bitcoind,concurrency=4"
        ]
    );
    let kinds: Vec<ChainKind> = sweep.points.iter().map(|p| p.scenario.chain.kind).collect();
    assert_eq!(
        kinds,
        [
            ChainKind::Btcd,
            ChainKind::Btcd,
            ChainKind::Bitcoind,
            ChainKind::Bitcoind
        ]
    );
    let networks: Vec<usize> = sweep.points.iter().map(|p| p.network).collect();
    assert_eq!(networks, [0, 0, 1, 1]);

    let pinned = BASE.replace(
        "name: t\n",
        "name: t\nchain:\n  implementation: btcd\n  image: my/btcd:dev\n",
    );
    let err = error_of(&format!("{pinned}sweep:\n  chain: [btcd, bitcoind]\n"));
    assert!(
        err.contains("t.yaml:4:10: the chain sets binary:, image: or args:"),
        "{err}"
    );
}

#[test]
fn the_scenario_returned_is_the_first_point_with_the_sweep_attached() {
    let text = format!("{BASE}sweep:\n  concurrency: [3, 5]\n");
    let s = parse(Path::new("t.yaml"), &text).unwrap();
    assert_eq!(s.workload.load, Load::Closed { concurrency: 3 });
    assert_eq!(s.sweep.as_ref().unwrap().points.len(), 2);
}

#[test]
fn sweep_mistakes_are_located_with_a_hint() {
    let cases = [
        (
            "  concurrency: []\n",
            "t.yaml:22:16: sweep concurrency: is an empty list",
        ),
        (
            "  concurrency: [1, 0]\n",
            "t.yaml:22:20: sweep concurrency has 0",
        ),
        (
            "  concurrency: [4, 4]\n",
            "t.yaml:22:20: sweep concurrency lists 4 twice",
        ),
        (
            "  rate: [10]\n",
            "t.yaml:22:9: sweep rate: needs an open-loop workload",
        ),
        (
            "  replicas: { dave: [1] }\n",
            "t.yaml:22:15: sweep replicas: names node \"dave\", which is not defined",
        ),
        (
            "  replicas: { carol: [0] }\n",
            "t.yaml:22:23: sweep replicas of carol has 0",
        ),
        (
            "  p99_bound: 500ms\n",
            "t.yaml:22:3: sweep: sets no parameter to sweep",
        ),
        (
            "  concurrency: [1]\n  p99_bound: 5\n",
            "t.yaml:23:14: sweep p99_bound \"5\" is not a duration",
        ),
        ("  threads: [1]\n", "t.yaml:22:3: unknown field `threads`"),
        (
            "  db_backend: [sqlite, sqlite]\n",
            "t.yaml:22:24: sweep db_backend lists sqlite twice",
        ),
    ];
    for (sweep, want) in cases {
        let text = error_of(&format!("{BASE}sweep:\n{sweep}"));
        assert!(text.starts_with(want), "for {sweep:?}:\n{text}");
        assert!(text.contains("hint:"), "no hint for {sweep:?}:\n{text}");
    }
}

#[test]
fn a_point_that_breaks_a_rule_names_the_point() {
    // carol with 2 replicas makes carol-1, which collides with a node of that name.
    let text = BASE.replace("  bob:\n", "  carol-1:\n    implementation: lnd\n  bob:\n");
    let err = error_of(&format!("{text}sweep:\n  replicas: {{ carol: [1, 2] }}\n"));
    assert!(
        err.contains("sweep point carol.replicas=2: node carol-1 makes an instance named carol-1, which node carol already makes"),
        "{err}"
    );
}

#[test]
fn too_many_points_is_an_error() {
    let values: Vec<String> = (1..=9).map(|n| n.to_string()).collect();
    let list = values.join(", ");
    let err = error_of(&format!(
        "{BASE}sweep:\n  concurrency: [{list}]\n  replicas: {{ carol: [{list}] }}\n"
    ));
    assert!(err.contains("makes 81 points, more than 64"), "{err}");
}

#[test]
fn core_lightning_nodes_stop_sweeps_they_cannot_take_part_in() {
    let cln = BASE.replacen(
        "  bob:\n    implementation: lnd",
        "  bob:\n    implementation: cln",
        1,
    );
    let on_bitcoind = cln.replace("name: t\n", "name: t\nchain:\n  implementation: bitcoind\n");
    let err = error_of(&format!(
        "{on_bitcoind}sweep:\n  db_backend: [bbolt, sqlite]\n"
    ));
    assert!(
        err.contains(
            "t.yaml:10:21: the sweep sets db_backend: (LND's --db.backend), and node bob is cln"
        ),
        "{err}"
    );
    // A chain sweep's btcd point cannot carry bob.
    let err = error_of(&format!("{cln}sweep:\n  chain: [btcd, bitcoind]\n"));
    assert!(
        err.contains("node bob is cln, which cannot run on chain btcd"),
        "{err}"
    );
    assert!(err.contains("chain: { implementation: bitcoind }"), "{err}");
}

/// BASE with every node on Core Lightning, on Bitcoin Core, paying by `kind`.
fn all_cln(kind: &str) -> String {
    BASE.replace("implementation: lnd", "implementation: cln")
        .replace("name: t\n", "name: t\nchain:\n  implementation: bitcoind\n")
        .replace("  kind: keysend\n", &format!("  kind: {kind}\n"))
}

#[test]
fn payment_engines_are_set_on_every_core_lightning_node_of_a_point() {
    use crate::node::PaymentEngine;
    let text = format!(
        "{}sweep:\n  payment_engine: [xpay, pay, renepay]\n",
        all_cln("invoice").replace("name: t\n", "name: t\nruntime: local\n")
    );
    let sweep = parse(Path::new("t.yaml"), &text)
        .unwrap_or_else(|e| panic!("{e}"))
        .sweep
        .unwrap();
    assert_eq!(
        labels(&sweep),
        [
            "payment_engine=xpay",
            "payment_engine=pay",
            "payment_engine=renepay"
        ]
    );
    let engines: Vec<Vec<PaymentEngine>> = (sweep.points.iter())
        .map(|p| p.scenario.nodes.iter().map(|n| n.payment_engine).collect())
        .collect();
    assert_eq!(engines[0], [PaymentEngine::Xpay; 3]);
    assert_eq!(engines[1], [PaymentEngine::Pay; 3]);
    assert_eq!(engines[2], [PaymentEngine::Renepay; 3]);
    // The clients are made with the network: each engine gets its own.
    let networks: Vec<usize> = sweep.points.iter().map(|p| p.network).collect();
    assert_eq!(networks, [0, 1, 2]);
}

#[test]
fn a_payment_engine_where_it_does_not_apply_is_refused_where_it_is_written() {
    // An LND node with an engine of its own.
    let lnd = BASE.replacen(
        "  alice:\n    implementation: lnd\n",
        "  alice:\n    implementation: lnd\n    payment_engine: pay\n",
        1,
    );
    let err = error_of(&lnd);
    assert!(
        err.starts_with("t.yaml:5:21: node alice is lnd, and payment_engine: chooses Core Lightning's pay command"),
        "{err}"
    );
    assert!(err.contains("implementation: cln only"), "{err}");
    // A sweep over a file without Core Lightning.
    let err = error_of(&format!("{BASE}sweep:\n  payment_engine: [xpay, pay]\n"));
    assert!(
        err.starts_with("t.yaml:22:19: the sweep sets payment_engine: (Core Lightning's pay command), and no node is cln"),
        "{err}"
    );
    // pay pays invoices; a keysend workload has none (at the point's value).
    let err = error_of(&format!(
        "{}sweep:\n  payment_engine: [xpay, pay]\n",
        all_cln("keysend")
    ));
    assert!(
        err.contains("t.yaml:24:26: sweep point payment_engine=pay: payment_engine: pay pays invoices, and the workload pays by keysend"),
        "{err}"
    );
    assert!(err.contains("kind: invoice"), "{err}");
    // renepay: through the node's JSON-RPC socket, which only the local runtime reaches.
    let err = error_of(&format!(
        "{}sweep:\n  payment_engine: [xpay, renepay]\n",
        all_cln("invoice")
    ));
    assert!(
        err.contains("t.yaml:24:26: sweep point payment_engine=renepay: payment_engine: renepay goes through the node's JSON-RPC socket"),
        "{err}"
    );
    assert!(err.contains("write runtime: local"), "{err}");
}

#[test]
fn lnd_native_sql_is_a_db_backend_value_on_sqlite_and_postgres() {
    let db = sweep_of("  db_backend: [sqlite, sqlite-native, postgres-native]\n");
    assert_eq!(
        labels(&db),
        [
            "db_backend=sqlite",
            "db_backend=sqlite-native",
            "db_backend=postgres-native"
        ]
    );
    let args = |i: usize| db.points[i].scenario.nodes[0].args.clone();
    assert_eq!(args(0), ["--db.backend=sqlite"]);
    assert_eq!(args(1), ["--db.backend=sqlite", "--db.use-native-sql"]);
    assert_eq!(args(2), ["--db.backend=postgres", "--db.use-native-sql"]);
    let lnd = crate::node::driver(crate::node::Implementation::Lnd);
    let node = &db.points[1].scenario.nodes[0];
    assert_eq!(lnd.database(node.database, &node.args), "sqlite-native");
    assert_eq!(db.points[1].network, 1, "another database: a fresh network");
    // Not an LND backend on a Core Lightning node: refused at the node.
    let err = error_of(&format!(
        "{}sweep:\n  db_backend: [sqlite-native]\n",
        all_cln("invoice")
    ));
    assert!(
        err.contains("the sweep sets db_backend: (LND's --db.backend), and node alice is cln"),
        "{err}"
    );
}
