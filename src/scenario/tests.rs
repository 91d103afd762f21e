//! Unit tests of parsing and validation on small inline scenarios; the fixture files
//! are covered by tests/scenario_files.rs.

use super::{ChainKind, Load, PullPolicy, RuntimeKind, Runtimes, Scenario, ScenarioError};
use crate::scenario::parse_error as error_of;
use std::path::Path;

/// The runtimes the tool registers: the scenario modules' tests validate against the
/// real capabilities, so a message a runtime's declaration makes is tested as written.
pub(crate) const RUNTIMES: Runtimes = crate::runtime::capabilities;

/// [`super::parse`] for the registered runtimes.
pub(crate) fn parse(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
    super::parse(path, text, RUNTIMES)
}

/// The error `parse` gives for `text` read as `t.yaml` (the scenario modules' tests).
pub(crate) fn parse_error(text: &str) -> String {
    match parse(Path::new("t.yaml"), text) {
        Ok(s) => panic!("expected an error, got {s:?}"),
        Err(e) => e.to_string(),
    }
}

/// A valid scenario; tests swap parts of it.
pub(crate) const BASE: &str = "\
name: t
nodes:
  alice:
    implementation: lnd
  bob:
    implementation: lnd
channels:
  - from: alice
    to: bob
    capacity_sat: 1000000
workload:
  kind: keysend
  senders: [alice]
  receiver: bob
  concurrency: 2
  stop:
    payments: 10
";

fn with(old: &str, new: &str) -> String {
    assert!(BASE.contains(old), "BASE has no {old:?}");
    BASE.replacen(old, new, 1)
}

#[test]
fn defaults_fill_runtime_chain_description_count_amount_and_timeout() {
    let s = parse(Path::new("t.yaml"), BASE).unwrap();
    assert_eq!(s.runtime, RuntimeKind::Auto);
    assert_eq!(s.pull, PullPolicy::IfMissing);
    assert_eq!(
        (s.chain.image.clone(), s.nodes[0].image.clone()),
        (None, None)
    );
    assert_eq!(s.chain.kind, ChainKind::Btcd);
    assert_eq!((s.chain.binary.clone(), s.chain.args.len()), (None, 0));
    assert_eq!(s.description, "");
    assert_eq!(s.channels[0].count, 1);
    assert_eq!(s.workload.amount_msat, 1000);
    assert_eq!(s.workload.payment_timeout.as_secs(), 60);
    assert_eq!(s.path, Path::new("t.yaml"));
    assert_eq!(s.source, BASE);
}

#[test]
fn an_unknown_top_level_field_lists_the_allowed_ones() {
    let text = error_of(&format!("{BASE}threads: 4\n"));
    assert!(
        text.starts_with("t.yaml:18:1: unknown field `threads`\n"),
        "{text}"
    );
    assert!(
        text.ends_with(
            "hint: allowed here: name, description, runtime, pull, chain, nodes, channels, workload, thresholds, sweep, repeat, after_load, etcd, profile, external, links, faults, mining, topology, kubernetes, resources, snapshot, history; fix the spelling or remove `threads`"
        ),
        "{text}"
    );
}

#[test]
fn a_sender_may_reach_the_receiver_through_a_router() {
    let text = BASE
        .replace(
            "  bob:\n",
            "  carol:\n    implementation: lnd\n  bob:\n",
        )
        .replace(
            "    to: bob\n    capacity_sat: 1000000\n",
            "    to: carol\n    capacity_sat: 1000000\n  - from: carol\n    to: bob\n    capacity_sat: 1000000\n",
        );
    let s = parse(Path::new("t.yaml"), &text).unwrap();
    assert_eq!(s.channels.len(), 2);
    assert_eq!(s.workload.senders, ["alice"]);
}

#[test]
fn a_path_that_stops_at_the_router_is_rejected() {
    let text = with("    to: bob\n", "    to: carol\n")
        .replace("  bob:\n", "  carol:\n    implementation: lnd\n  bob:\n");
    let err = error_of(&text);
    assert!(
        err.starts_with("t.yaml:15:13: sender alice has no channel path to receiver bob"),
        "{err}"
    );
}

#[test]
fn wumbo_capacity_is_allowed_when_both_ends_enable_it() {
    let flag = "    implementation: lnd\n    args: [--protocol.wumbo-channels]\n";
    let text = BASE
        .replace("    implementation: lnd\n", flag)
        .replace("capacity_sat: 1000000", "capacity_sat: 50000000");
    let s = parse(Path::new("t.yaml"), &text).unwrap();
    assert_eq!(s.channels[0].capacity_sat, 50_000_000);
}

#[test]
fn wumbo_capacity_names_every_end_without_the_flag() {
    let err = error_of(&with("capacity_sat: 1000000", "capacity_sat: 16777216"));
    assert!(
        err.ends_with("add \"--protocol.wumbo-channels\" to args: of alice and bob"),
        "{err}"
    );
}

#[test]
fn one_replica_keeps_the_plain_name_and_senders_follow_file_order() {
    let text = with(
        "  bob:\n",
        "  zed:\n    implementation: lnd\n    replicas: 1\n  bob:\n",
    )
    .replace(
        "    capacity_sat: 1000000\n",
        "    capacity_sat: 1000000\n  - from: zed\n    to: bob\n    capacity_sat: 1000\n",
    )
    .replace("senders: [alice]", "senders: [zed, alice]");
    let s = parse(Path::new("t.yaml"), &text).unwrap();
    let names: Vec<&str> = s.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["alice", "zed", "bob"]);
    assert_eq!(s.workload.senders, ["zed", "alice"]);
}

#[test]
fn a_non_finite_rate_is_rejected() {
    let err = error_of(&with(
        "  concurrency: 2\n",
        "  rate:\n    hold: { rate: .inf, duration: 1m }\n",
    ));
    assert!(
        err.starts_with("t.yaml:16:19: hold rate is inf payments/s"),
        "{err}"
    );
}

#[test]
fn a_rate_only_workload_is_an_open_loop() {
    let s = parse(
        Path::new("t.yaml"),
        &with(
            "  concurrency: 2\n",
            "  rate:\n    hold: { rate: 5, duration: 90s }\n",
        ),
    )
    .unwrap();
    let Load::Open { phases } = s.workload.load else {
        panic!("expected an open loop");
    };
    assert_eq!(phases.len(), 1);
    assert_eq!(phases[0].duration.as_secs(), 90);
}

#[test]
fn an_empty_file_is_a_located_yaml_error() {
    let err = error_of("");
    assert!(err.starts_with("t.yaml:1:1: "), "{err}");
    assert!(err.contains("\n  hint: "), "{err}");
}

#[test]
fn runtime_pull_and_images_are_read() {
    let text = BASE.replacen("name:", "runtime: docker\npull: never\nname:", 1);
    let text = text.replacen(
        "implementation: lnd",
        "implementation: lnd\n    image: my/lnd:dev",
        1,
    );
    let s = parse(Path::new("t.yaml"), &text).unwrap();
    assert_eq!(s.runtime, RuntimeKind::Docker);
    assert_eq!(s.pull, PullPolicy::Never);
    assert_eq!(s.nodes[0].image.as_deref(), Some("my/lnd:dev"));
    assert_eq!(s.nodes[1].image, None);
}

#[test]
fn a_bad_image_or_pull_policy_is_located_with_a_hint() {
    let text = BASE.replacen(
        "implementation: lnd",
        "implementation: lnd\n    image: 'my lnd'",
        1,
    );
    let err = error_of(&text);
    assert!(
        err.contains("image of node alice is not an image reference"),
        "{err}"
    );
    assert!(err.contains("hint: write repository:tag"), "{err}");
    assert!(err.starts_with("t.yaml:"), "{err}");
    let err = error_of(&BASE.replacen("name:", "pull: sometimes\nname:", 1));
    assert!(err.starts_with("t.yaml:1:7:"), "{err}");
    assert!(
        err.contains("write one of: if-missing, always, never"),
        "{err}"
    );
}

#[test]
fn after_load_restart_lists_instances_in_order() {
    let ok = |text: &str| parse(Path::new("t.yaml"), text).unwrap().restart;
    assert!(ok(BASE).is_empty(), "no after_load: restarts nothing");
    let all = with(
        "    implementation: lnd\n  bob:",
        "    implementation: lnd\n    replicas: 2\n  bob:",
    );
    let all = format!("{all}after_load:\n  restart: all\n");
    assert_eq!(ok(&all), ["alice-1", "alice-2", "bob"]);
    let listed = format!("{BASE}after_load:\n  restart: [bob, alice]\n");
    assert_eq!(ok(&listed), ["bob", "alice"]);
}

#[test]
fn after_load_restart_errors_say_where_and_what() {
    let empty = error_of(&format!("{BASE}after_load: {{}}\n"));
    assert!(
        empty.contains("t.yaml:18:13: after_load: names no step"),
        "{empty}"
    );
    let none = error_of(&format!("{BASE}after_load:\n  restart: []\n"));
    assert!(none.contains("restart: is an empty list"), "{none}");
    let twice = error_of(&format!("{BASE}after_load:\n  restart: [bob, bob]\n"));
    assert!(
        twice.contains("t.yaml:19:18: restart: names node bob twice"),
        "{twice}"
    );
    let field = error_of(&format!("{BASE}after_load:\n  compact: true\n"));
    assert!(field.contains("unknown field `compact`"), "{field}");
}

#[test]
fn etcd_members_default_to_one_and_must_make_a_quorum() {
    let s = parse(Path::new("t.yaml"), BASE).unwrap();
    assert_eq!(s.etcd_members, 1);
    let s = parse(
        Path::new("t.yaml"),
        &format!("{BASE}etcd: {{ members: 3 }}\n"),
    )
    .unwrap();
    assert_eq!(s.etcd_members, 3);
    let text = error_of(&format!("{BASE}etcd: {{ members: 2 }}\n"));
    assert!(
        text.contains("etcd: members: 2 is not a cluster size") && text.contains("1, 3 or 5"),
        "{text}"
    );
}

#[test]
fn database_postgres_sets_lnds_backend_flag_and_marks_the_node() {
    let text = with(
        "  alice:\n    implementation: lnd\n",
        "  alice:\n    implementation: lnd\n    database: postgres\n",
    );
    let s = parse(Path::new("t.yaml"), &text).unwrap();
    assert_eq!(s.nodes[0].database, super::Database::Postgres);
    assert_eq!(s.nodes[0].args, ["--db.backend=postgres"]);
    assert_eq!(s.nodes[1].database, super::Database::Default);
    assert!(s.nodes[1].args.is_empty());
    assert!(crate::runtime::shared::postgres::wants(&s.nodes[0]));
    assert!(!crate::runtime::shared::postgres::wants(&s.nodes[1]));
}

#[test]
fn database_postgres_beside_args_that_choose_the_database_is_located() {
    let text = with(
        "  alice:\n    implementation: lnd\n",
        "  alice:\n    implementation: lnd\n    database: postgres\n    args: [--db.backend=sqlite]\n",
    );
    let err = error_of(&text);
    assert!(err.starts_with("t.yaml:5:15:"), "{err}");
    assert!(err.contains("(--db.backend=sqlite)"), "{err}");
}

#[test]
fn an_unknown_database_is_an_error_naming_the_choices() {
    let text = with(
        "  alice:\n    implementation: lnd\n",
        "  alice:\n    implementation: lnd\n    database: mysql\n",
    );
    let err = error_of(&text);
    assert!(err.starts_with("t.yaml:5:"), "{err}");
    assert!(err.contains("postgres"), "{err}");
}

#[test]
fn database_beside_a_db_backend_sweep_is_located() {
    let text = with(
        "  alice:\n    implementation: lnd\n",
        "  alice:\n    implementation: lnd\n    database: postgres\n",
    ) + "sweep:\n  db_backend: [bbolt, postgres]\n";
    let err = error_of(&text);
    assert!(err.starts_with("t.yaml:5:15:"), "{err}");
    assert!(err.contains("the sweep sets db_backend:"), "{err}");
}

#[test]
fn database_postgres_on_eclair_sets_its_jvm_option() {
    let text = with(
        "name: t\n",
        "name: t\nchain: { implementation: bitcoind }\n",
    )
    .replace(
        "  alice:\n    implementation: lnd\n",
        "  alice:\n    implementation: eclair\n    database: postgres\n",
    );
    let s = parse(Path::new("t.yaml"), &text).unwrap();
    assert_eq!(s.nodes[0].args, ["-Declair.db.driver=postgres"]);
    let driver = crate::node::driver(s.nodes[0].implementation);
    assert_eq!(
        driver.database(s.nodes[0].database, &s.nodes[0].args),
        "postgres"
    );
    assert!(!driver.postgres().unwrap().over_unix_socket());
}

#[test]
fn database_postgres_on_ldk_is_refused_where_it_is_written() {
    let text = with(
        "name: t\n",
        "name: t\nchain: { implementation: bitcoind }\n",
    )
    .replace(
        "  alice:\n    implementation: lnd\n",
        "  alice:\n    implementation: ldk\n    database: postgres\n",
    )
    .replace("kind: keysend", "kind: invoice");
    let err = error_of(&text);
    assert!(err.starts_with("t.yaml:6:15:"), "{err}");
    assert!(err.contains("has no PostgreSQL backend"), "{err}");
}

/// A runtime asked for the database of a node whose implementation has no PostgreSQL
/// backend (past validation, which refuses it first) names the implementation.
#[test]
fn a_runtime_names_the_implementation_without_a_postgresql_backend() {
    let text = with(
        "name: t\n",
        "name: t\nchain: { implementation: bitcoind }\n",
    )
    .replace(
        "  alice:\n    implementation: lnd\n",
        "  alice:\n    implementation: ldk\n",
    )
    .replace("kind: keysend", "kind: invoice");
    let mut s = parse(Path::new("t.yaml"), &text).unwrap();
    assert!(crate::runtime::shared::postgres::backend(&s.nodes[1]).is_ok());
    s.nodes[0].database = super::Database::Postgres;
    assert!(crate::runtime::shared::postgres::wants(&s.nodes[0]));
    let err = crate::runtime::shared::postgres::backend(&s.nodes[0])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("ldk has no PostgreSQL backend"), "{err}");
}

#[test]
fn totals_past_their_limits_are_errors_at_the_value() {
    let e = error_of(&with("concurrency: 2", "concurrency: 4294967295"));
    assert!(e.contains("t.yaml:15:16"), "{e}");
    assert!(
        e.contains("concurrency is 4294967295, more than 10000"),
        "{e}"
    );
    assert!(
        parse(
            Path::new("t.yaml"),
            &with("concurrency: 2", "concurrency: 10000")
        )
        .is_ok()
    );

    let e = error_of(&with(
        "receiver: bob",
        "receiver: bob\n  amount_msat: 1000000001",
    ));
    assert!(e.contains("t.yaml:15:16"), "{e}");
    assert!(
        e.contains("more than the largest channel holds (1000000 sat)"),
        "{e}"
    );
    let fits = with("receiver: bob", "receiver: bob\n  amount_msat: 1000000000");
    assert!(parse(Path::new("t.yaml"), &fits).is_ok());

    let many = format!("    args: [{}]\n", vec!["--x"; 257].join(", "));
    let e = error_of(&with("  bob:\n", &format!("  bob:\n{many}")));
    assert!(e.contains("node bob has 257 args:, more than 256"), "{e}");
    let long = format!("    args: [--alias={}]\n", "a".repeat(4100));
    let e = error_of(&with("  bob:\n", &format!("  bob:\n{long}")));
    assert!(
        e.contains("an argument of 4108 bytes, more than 4096"),
        "{e}"
    );

    let crowd: String = ["carol", "dave", "erin"]
        .map(|n| format!("  {n}:\n    implementation: lnd\n    replicas: 200\n"))
        .concat();
    let e = error_of(&with("channels:", &format!("{crowd}channels:")));
    assert!(
        e.contains("the nodes up to erin make 602 nodes in all, more than 500"),
        "{e}"
    );

    // 150 alices × 150 bobs, 1 channel a pair: 22,500 channels.
    let pairs = BASE
        .replace(
            "  alice:\n    implementation: lnd\n",
            "  alice:\n    implementation: lnd\n    replicas: 150\n",
        )
        .replace(
            "  bob:\n    implementation: lnd\n",
            "  bob:\n    implementation: lnd\n    replicas: 150\n",
        );
    let e = error_of(&pairs);
    assert!(
        e.contains("the channels up to channel 1 make 22500 channels in all, more than 20000"),
        "{e}"
    );
    assert!(e.contains("t.yaml:10:5"), "{e}");
}
