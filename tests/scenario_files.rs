//! Every fixture under tests/fixtures/scenarios/: valid ones expand as expected, each
//! invalid one fails with its own message, at its own line and column, with a hint.

mod common;

use lnbench_tui::node::Implementation;
use lnbench_tui::scenario::{
    self, LatencyStat, Load, PaymentKind, PhaseKind, PhaseThreshold, ScenarioError, Threshold,
};
use std::path::{Path, PathBuf};
use std::time::Duration;

const INVALID: &str = "tests/fixtures/scenarios/invalid";
const VALID: &str = "tests/fixtures/scenarios/valid";

/// One test per invalid fixture: `test_name: "file" at "line:col", "what is wrong",
/// hint "what to write instead";`. Also lists the files, so a fixture without a
/// test fails `every_invalid_fixture_has_a_test`.
macro_rules! invalid_fixtures {
    ($($test:ident: $file:literal at $at:literal, $message:literal, hint $hint:literal;)*) => {
        const TESTED_FIXTURES: &[&str] = &[$($file),*];
        $(
            #[test]
            fn $test() {
                check_invalid($file, $at, $message, $hint);
            }
        )*
    };
}

invalid_fixtures! {
    unknown_field: "unknown-field" at "6:5", "unknown field `replcas`", hint "allowed here: implementation, version, binary, image, replicas, database, payment_engine, args";
    unknown_field_in_phase: "unknown-field-in-phase" at "17:37", "unknown field `burst`", hint "allowed here: rate, duration";
    yaml_syntax: "yaml-syntax" at "15:11", "illegal placement of ':' indicator", hint "an unclosed [ or {";
    missing_field: "missing-field" at "8:1", "missing field `workload`", hint "add `workload:`";
    duplicate_node: "duplicate-node" at "8:3", "`alice` appears twice in the same mapping", hint "names under nodes: must be unique";
    bad_kind: "bad-kind" at "13:9", "unknown value `keysnd`", hint "write one of: keysend, invoice, invoice-pregenerated";
    bad_implementation: "bad-implementation" at "7:21", "unknown value `phoenixd`", hint "write one of: lnd, cln, eclair, ldk";
    keysend_with_ldk: "keysend-with-ldk" at "16:9", "kind: keysend, but receiver bob is ldk: ldk-server at commit ee1c96c", hint "write kind: invoice";
    cln_on_btcd: "cln-on-btcd" at "9:21", "node bob is cln, which cannot run on chain btcd (it runs on bitcoind)", hint "chain: { implementation: bitcoind }";
    eclair_on_btcd: "eclair-on-btcd" at "9:21", "node bob is eclair, which cannot run on chain btcd (it runs on bitcoind)", hint "chain: { implementation: bitcoind }";
    topology_bad_shape: "topology-bad-shape" at "4:10", "unknown value `hexagon`", hint "write one of: star, ring, line, complete, random, scale-free";
    topology_degree_too_high: "topology-degree-too-high" at "6:11", "degree: 8 does not fit 6 nodes", hint "write a degree from 1 to 5";
    activity_bad_amount: "activity-bad-amount" at "12:18", "activity amount_msat is not a distribution of values between 0 and 10000000000: { uniform: [5000, 1000] }", hint "{ uniform: [LOW, HIGH] }";
    activity_bad_share: "activity-bad-share" at "10:14", "activity senders: 1.5 is not a share of the nodes", hint "write senders: all, or a share above 0 and at most 1";
    bad_runtime: "bad-runtime" at "3:10", "unknown value `nomad`", hint "write one of: auto, docker, local, external, kubernetes";
    bad_chain: "bad-chain" at "4:19", "unknown value `bitcoin-core`", hint "write one of: btcd, bitcoind";
    bad_number: "bad-number" at "6:15", "this value is not a whole number of at least 0", hint "e.g. 10";
    bad_duration: "bad-duration" at "18:15", "stop duration \"5\" is not a duration (time unit needed", hint "e.g. 30s, 5m or 1h30m";
    empty_name: "empty-name" at "2:7", "name is empty", hint "name: alice-pays-bob";
    path_name: "path-name" at "2:7", "name \"../../x\" is not allowed", hint "starting with a letter or digit";
    huge_replicas: "huge-replicas" at "6:15", "node alice has replicas: 100000, more than 200", hint "replicas: 200 or fewer";
    huge_count: "huge-count" at "12:12", "channel 1 has count: 100000000, more than 1000", hint "count: 1000 or fewer";
    no_nodes: "no-nodes" at "3:8", "nodes: is empty", hint "alice: { implementation: lnd }";
    bad_node_name: "bad-node-name" at "6:3", "node name \"bob smith\" is not allowed", hint "use letters, digits, - and _";
    reserved_node_name: "reserved-node-name" at "6:3", "node name \"chain\" is reserved for the chain backend", hint "e.g. chain-node";
    reserved_postgres_name: "reserved-postgres-name" at "6:3", "node name \"postgres\" is reserved for the PostgreSQL server", hint "e.g. postgres-node";
    zero_replicas: "zero-replicas" at "6:15", "node alice has replicas: 0", hint "write replicas: 1 or more";
    instance_collision: "instance-collision" at "7:3", "node alice-1 makes an instance named alice-1, which node alice already makes", hint "rename one of alice and alice-1";
    unknown_channel_node: "unknown-channel-node" at "10:9", "channel 1 to: names node \"carol\", which is not defined under nodes: (defined: alice, bob)", hint "add carol under nodes: or use one of alice, bob";
    channel_to_itself: "channel-to-itself" at "10:9", "channel 1 goes from alice to itself", hint "e.g. to: bob";
    zero_capacity: "zero-capacity" at "11:19", "channel 1 has capacity_sat: 0", hint "capacity_sat: 5000000";
    capacity_above_wumbo: "capacity-above-wumbo" at "12:19", "channel 1 has capacity_sat: 16777216, above 16777215 sat", hint "add \"--protocol.wumbo-channels\" to args: of bob";
    zero_count: "zero-count" at "12:12", "channel 1 has count: 0", hint "write count: 1 or more";
    empty_senders: "empty-senders" at "14:12", "senders: is empty", hint "senders: [alice]";
    unknown_sender: "unknown-sender" at "14:13", "senders: names node \"alcie\", which is not defined under nodes: (defined: alice, bob)", hint "use one of alice, bob";
    duplicate_sender: "duplicate-sender" at "14:20", "alice is listed twice under senders:", hint "list alice once";
    unknown_receiver: "unknown-receiver" at "15:13", "receiver: names node \"carol\", which is not defined", hint "add carol under nodes:";
    receiver_is_sender: "receiver-is-sender" at "14:20", "bob is both a sender and the receiver", hint "remove bob from senders:";
    no_path: "no-path" at "14:13", "sender alice has no channel path to receiver bob", hint "{ from: alice, to: bob, capacity_sat: 5000000 }";
    rate_and_concurrency: "rate-and-concurrency" at "16:16", "workload sets both concurrency: (closed loop) and rate: (open loop)", hint "keep one";
    no_load: "no-load" at "13:3", "workload sets neither concurrency: nor rate:", hint "add concurrency: 10";
    zero_concurrency: "zero-concurrency" at "16:16", "concurrency is 0", hint "write concurrency: 1 or more";
    empty_rate: "empty-rate" at "16:9", "rate: has no phase", hint "hold: { rate, duration }";
    zero_phase_rate: "zero-phase-rate" at "18:19", "hold rate is 0 payments/s", hint "write a rate above 0";
    huge_rate: "huge-rate" at "18:19", "hold rate is 1000000000000 payments/s, more than 100000", hint "at most 100000 payments per second";
    huge_duration: "huge-duration" at "18:15", "stop duration \"400000000000y\"", hint "at most 30d";
    zero_phase_duration: "zero-phase-duration" at "20:17", "ramp duration is 0", hint "write a duration above zero";
    no_stop_condition: "no-stop-condition" at "17:9", "stop: sets neither payments: nor duration:", hint "add payments: 2000 and/or duration: 5m";
    zero_payments: "zero-payments" at "18:15", "stop payments is 0", hint "write payments: 1 or more";
    huge_payments: "huge-payments" at "18:15", "stop payments is 5000000000, more than 1000000000", hint "write at most 1000000000 payments";
    zero_amount: "zero-amount" at "16:16", "amount_msat is 0", hint "amount_msat: 1000";
    zero_payment_timeout: "zero-payment-timeout" at "19:20", "payment_timeout is 0", hint "write a duration above zero";
    unknown_threshold: "unknown-threshold" at "21:3", "unknown field `p95_latency`", hint "allowed here: p50_latency, p90_latency, p99_latency, max_latency, min_tps, max_failure_rate";
    bad_threshold_percent: "bad-threshold-percent" at "20:21", "thresholds max_failure_rate \"150%\" is not a fraction from 0 to 1 or a percentage from 0% to 100%", hint "max_failure_rate: 1% or max_failure_rate: 0.01";
    negative_threshold: "negative-threshold" at "20:12", "thresholds min_tps is -5 payments/s", hint "min_tps: 20";
    bad_threshold_latency: "bad-threshold-latency" at "20:16", "thresholds p99_latency \"2\" is not a duration (time unit needed", hint "p99_latency: 2s or 500ms";
    duplicate_workload: "duplicate-workload" at "20:1", "`workload` appears twice in the same mapping", hint "give `workload:` once; merge the two blocks";
    amount_as_list: "amount-as-list" at "16:16", "this must be a single value (a word or a number), not a list or a mapping", hint "docs/scenario-format.md";
    kind_as_list: "kind-as-list" at "13:9", "this must be one name, not a list or a mapping", hint "write one of the names";
    control_in_name: "control-in-name" at "2:7", "name \"a\\u{1b}[2Jb\\u{202e}c\" is not allowed", hint "starting with a letter or digit";
    empty_threshold: "empty-threshold" at "22:5", "a thresholds entry sets no threshold, so it would check nothing", hint "remove the empty entry";
    fault_after_load: "fault-after-load" at "22:9", "this fault is at: 10m, but the load stops at 30s (stop: duration:)", hint "write an at: below 30s";
    fault_after_last_payment: "fault-after-last-payment" at "21:21", "this fault is after_payments: 100, but the load stops after 100 payments", hint "write an after_payments: below 100";
    threshold_unknown_phase: "threshold-unknown-phase" at "28:12", "thresholds phase: steady is not a phase of this workload (its measured phases: ramp, hold)", hint "write one of: ramp, hold";
    threshold_phase_warm_up: "threshold-phase-warm-up" at "28:12", "thresholds phase: warm-up is not measured", hint "use one of the measured phases: ramp, hold";
    restart_unknown_node: "restart-unknown-node" at "20:20", "after_load restart: names node \"carol\", which is not defined under nodes: (defined: alice, bob)", hint "use one of alice, bob";
    restart_not_a_list: "restart-not-a-list" at "20:12", "restart: \"alice\" is neither all nor a list of nodes", hint "restart: [alice, bob]";
    mainnet_repeats_over_total: "mainnet-repeats-over-total" at "6:19", "20 runs (points × repeats) of 100 payments of 1000 msat make 2000000 msat, above max_total_msat: 100000", hint "the caps hold for the whole run";
    threshold_phase_closed_loop: "threshold-phase-closed-loop" at "20:10", "thresholds phase: hold is set, but the load is closed-loop (concurrency:), which has no phases", hint "remove phase: to check the whole run";
}

fn load_invalid(name: &str) -> (PathBuf, ScenarioError) {
    let path = Path::new(INVALID).join(format!("{name}.yaml"));
    match scenario::load(&path, lnbench_tui::runtime::capabilities) {
        Ok(_) => panic!("{} should be rejected", path.display()),
        Err(err) => (path, err),
    }
}

fn check_invalid(name: &str, at: &str, message: &str, hint: &str) {
    let (path, err) = load_invalid(name);
    let text = err.to_string();
    let head = format!("{}:{at}: {message}", path.display());
    assert!(
        text.starts_with(&head),
        "expected to start with\n{head}\ngot\n{text}"
    );
    let hint_line = text.lines().last().unwrap_or_default();
    assert!(
        hint_line.starts_with("  hint: ") && hint_line.contains(hint),
        "expected a hint containing {hint:?}, got\n{text}"
    );
    let line: u64 = at.split(':').next().and_then(|l| l.parse().ok()).unwrap();
    assert_eq!(err.position().map(|p| p.line), Some(line));
    assert!(err.is_input_error());
}

#[test]
fn every_invalid_fixture_has_a_test() {
    let mut files: Vec<String> = std::fs::read_dir(INVALID)
        .unwrap()
        .map(|e| {
            e.unwrap()
                .path()
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    files.sort();
    let mut cased: Vec<String> = TESTED_FIXTURES.iter().map(|f| f.to_string()).collect();
    cased.sort();
    assert_eq!(files, cased);
}

#[test]
fn the_excerpt_quotes_the_line_and_points_at_the_value() {
    let (_, err) = load_invalid("unknown-channel-node");
    let text = err.to_string();
    assert!(
        text.contains("10 |     to: carol\n   |         ^^^^^\n"),
        "got\n{text}"
    );
}

#[test]
fn an_unreadable_file_names_its_path() {
    let err = scenario::load(
        Path::new("tests/fixtures/scenarios/no-such-file.yaml"),
        lnbench_tui::runtime::capabilities,
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with(
            "tests/fixtures/scenarios/no-such-file.yaml: cannot read the scenario file: "
        ),
        "got {text}"
    );
    assert!(text.contains("\n  hint: check the path"));
    assert!(err.is_input_error());
    assert_eq!(err.position(), None);
}

#[test]
fn alice_pays_bob_is_a_closed_loop_over_ten_channels() {
    let s = scenario::load(
        &Path::new(VALID).join("alice-pays-bob.yaml"),
        lnbench_tui::runtime::capabilities,
    )
    .unwrap();
    assert_eq!(s.name, "alice-pays-bob");
    assert!(
        s.description
            .starts_with("What throughput (payments/s) and latency")
    );
    let names: Vec<&str> = s.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["alice", "bob"]);
    assert_eq!(s.nodes[0].implementation, Implementation::Lnd);
    assert_eq!(s.nodes[0].version.as_deref(), Some("v0.21.1-beta"));
    assert_eq!(s.channels.len(), 1);
    assert_eq!(
        (s.channels[0].from.as_str(), s.channels[0].to.as_str()),
        ("alice", "bob")
    );
    assert_eq!(
        (s.channels[0].capacity_sat, s.channels[0].count),
        (5_000_000, 10)
    );
    let w = &s.workload;
    assert_eq!(w.kind, PaymentKind::Keysend);
    assert_eq!(
        (w.senders.as_slice(), w.receivers.as_slice()),
        (&["alice".to_string()][..], &["bob".to_string()][..])
    );
    assert_eq!(w.load, Load::Closed { concurrency: 10 });
    assert_eq!(w.stop.payments, Some(2000));
    assert_eq!(w.stop.duration, Some(Duration::from_secs(45)));
    assert_eq!(w.payment_timeout, Duration::from_secs(60));
}

#[test]
fn cln_pays_cln_runs_core_lightning_on_bitcoind() {
    let s = scenario::load(
        &Path::new(VALID).join("cln-pays-cln.yaml"),
        lnbench_tui::runtime::capabilities,
    )
    .unwrap();
    assert_eq!(s.chain.kind, lnbench_tui::chain::ChainKind::Bitcoind);
    for node in &s.nodes {
        assert_eq!(node.implementation, Implementation::Cln, "{}", node.name);
        assert_eq!(node.version.as_deref(), Some("v26.06.6"));
    }
    assert_eq!(s.workload.kind, PaymentKind::Keysend);
    // The shipped scenario is the same network and load, swept over the concurrency
    // (its first point is concurrency 1; the fixture runs 10).
    let shipped = scenario::load(
        Path::new("scenarios/cln-pays-cln.yaml"),
        lnbench_tui::runtime::capabilities,
    )
    .unwrap();
    assert_eq!(shipped.nodes, s.nodes);
    assert_eq!(shipped.channels, s.channels);
    let at_ten = scenario::Workload {
        load: s.workload.load.clone(),
        ..shipped.workload.clone()
    };
    assert_eq!(at_ten, s.workload);
}

#[test]
fn ldk_pays_ldk_runs_ldk_server_on_bitcoind_with_invoices() {
    let s = scenario::load(
        &Path::new(VALID).join("ldk-pays-ldk.yaml"),
        lnbench_tui::runtime::capabilities,
    )
    .unwrap();
    assert_eq!(s.chain.kind, lnbench_tui::chain::ChainKind::Bitcoind);
    for node in &s.nodes {
        assert_eq!(node.implementation, Implementation::Ldk, "{}", node.name);
    }
    assert_eq!(s.workload.kind, PaymentKind::Invoice);
    for shipped in ["scenarios/ldk-pays-ldk.yaml", "scenarios/lnd-pays-ldk.yaml"] {
        let shipped =
            scenario::load(Path::new(shipped), lnbench_tui::runtime::capabilities).unwrap();
        assert_eq!(shipped.channels, s.channels);
        assert_eq!(shipped.workload, s.workload);
    }
}

#[test]
fn the_shipped_alice_pays_bob_sweeps_the_fixture_over_concurrency() {
    let shipped = scenario::load(
        Path::new("scenarios/alice-pays-bob.yaml"),
        lnbench_tui::runtime::capabilities,
    )
    .unwrap();
    let fixture = scenario::load(
        &Path::new(VALID).join("alice-pays-bob.yaml"),
        lnbench_tui::runtime::capabilities,
    )
    .unwrap();
    let sweep = shipped
        .sweep
        .expect("alice-pays-bob.yaml sweeps concurrency");
    let loads: Vec<Load> = sweep
        .points
        .iter()
        .map(|p| p.scenario.workload.load.clone())
        .collect();
    let closed = |concurrency| Load::Closed { concurrency };
    assert_eq!(loads, [closed(1), closed(4), closed(7), closed(10)]);
    // The last point is the single run of the fixture.
    assert_eq!(sweep.points[3].scenario.workload, fixture.workload);
    assert_eq!(sweep.points[3].scenario.channels, fixture.channels);
}

/// Every file under scenarios/ is valid, says what question it answers, and (being
/// a benchmark people run as shipped) keeps realistic counts.
#[test]
fn every_shipped_scenario_is_valid_and_has_a_description() {
    let mut names = Vec::new();
    for entry in std::fs::read_dir("scenarios").unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        let s = scenario::load(&path, lnbench_tui::runtime::capabilities)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            s.description.ends_with('?') || s.description.contains("? "),
            "{}: the description should ask the question the scenario answers: {:?}",
            path.display(),
            s.description
        );
        names.push(s.name.clone());
        let points = s.sweep.as_ref().map_or(vec![s.clone()], |sw| {
            sw.points.iter().map(|p| p.scenario.clone()).collect()
        });
        for p in points {
            let stop = p.workload.stop;
            assert!(
                // 45 s: the quick start's first point (alice-pays-bob, one payment in
                // flight, ~500 payments) prints its figures within a minute.
                stop.payments.is_none_or(|n| n >= 500)
                    && stop.duration.is_none_or(|d| d.as_secs() >= 45),
                "{}: shipped counts are realistic ones; tests use --payments: {stop:?}",
                path.display()
            );
        }
    }
    names.sort();
    for wanted in [
        "alice-pays-bob",
        "alice-pays-bob-via-carols",
        "alices-pay-bob",
        "payment-kinds",
    ] {
        assert!(
            names.iter().any(|n| n == wanted),
            "{wanted} not shipped: {names:?}"
        );
    }
}

#[test]
fn open_loop_phases_run_warm_up_ramp_hold_whatever_the_file_order() {
    let s = scenario::load(
        &Path::new(VALID).join("open-loop-phases.yaml"),
        lnbench_tui::runtime::capabilities,
    )
    .unwrap();
    let Load::Open { phases } = &s.workload.load else {
        panic!("expected an open loop, got {:?}", s.workload.load);
    };
    let got: Vec<(PhaseKind, f64, f64, u64)> = phases
        .iter()
        .map(|p| (p.kind, p.from_rate, p.to_rate, p.duration.as_secs()))
        .collect();
    assert_eq!(
        got,
        [
            (PhaseKind::WarmUp, 20.0, 20.0, 10),
            (PhaseKind::Ramp, 20.0, 100.5, 30),
            (PhaseKind::Hold, 100.0, 100.0, 60),
        ]
    );
    assert_eq!(s.workload.kind, PaymentKind::Invoice);
    assert_eq!(s.workload.amount_msat, 5000);
    assert_eq!(s.workload.stop.payments, None);
    assert_eq!(s.workload.stop.duration, Some(Duration::from_secs(120)));
    assert_eq!(s.workload.payment_timeout, Duration::from_secs(30));
    assert_eq!(s.nodes[0].args, ["--maxpendingchannels=10"]);
    assert_eq!(s.channels[0].capacity_sat, 16_777_215);
}

#[test]
fn replicas_expand_nodes_channels_and_senders() {
    let s = scenario::load(
        &Path::new(VALID).join("replicas.yaml"),
        lnbench_tui::runtime::capabilities,
    )
    .unwrap();
    let nodes: Vec<(&str, &str)> = s
        .nodes
        .iter()
        .map(|n| (n.name.as_str(), n.group.as_str()))
        .collect();
    assert_eq!(
        nodes,
        [
            ("alice-1", "alice"),
            ("alice-2", "alice"),
            ("alice-3", "alice"),
            ("alice-4", "alice"),
            ("carol", "carol"),
            ("bob", "bob"),
        ]
    );
    let channels: Vec<(&str, &str, u64, u32)> = s
        .channels
        .iter()
        .map(|c| (c.from.as_str(), c.to.as_str(), c.capacity_sat, c.count))
        .collect();
    assert_eq!(
        channels,
        [
            ("alice-1", "carol", 2_000_000, 2),
            ("alice-2", "carol", 2_000_000, 2),
            ("alice-3", "carol", 2_000_000, 2),
            ("alice-4", "carol", 2_000_000, 2),
            ("carol", "bob", 20_000_000, 1),
        ]
    );
    assert_eq!(
        s.workload.senders,
        ["alice-1", "alice-2", "alice-3", "alice-4"]
    );
    assert_eq!(s.workload.receivers, ["bob"]);
    assert_eq!(s.workload.kind, PaymentKind::InvoicePregenerated);
    assert_eq!(s.workload.load, Load::Closed { concurrency: 40 });
    assert_eq!(s.workload.amount_msat, 1000);
    assert_eq!(s.workload.stop.duration, None);
}

#[test]
fn thresholds_are_read_with_their_units_and_percentages() {
    let path = Path::new(VALID).join("thresholds.yaml");
    let s = scenario::load(&path, lnbench_tui::runtime::capabilities).unwrap();
    let latency = |stat, ms| Threshold::Latency {
        stat,
        max: Duration::from_millis(ms),
    };
    assert_eq!(
        s.thresholds,
        [
            latency(LatencyStat::P50, 500),
            latency(LatencyStat::P99, 2000),
            latency(LatencyStat::Max, 60_000),
            Threshold::MinTps(20.0),
            Threshold::MaxFailureRate(0.01),
        ]
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let as_fraction = scenario::parse(
        &path,
        &text.replace("1%", "0.01"),
        lnbench_tui::runtime::capabilities,
    )
    .unwrap();
    assert_eq!(as_fraction.thresholds, s.thresholds);
}

#[test]
fn thresholds_in_a_list_can_name_their_phase() {
    let s = scenario::load(
        &Path::new(VALID).join("phase-thresholds.yaml"),
        lnbench_tui::runtime::capabilities,
    )
    .unwrap();
    let latency = |ms| Threshold::Latency {
        stat: LatencyStat::P99,
        max: Duration::from_millis(ms),
    };
    assert_eq!(
        s.thresholds,
        [latency(2000), Threshold::MaxFailureRate(0.01)]
    );
    let on = |phase, threshold| PhaseThreshold { phase, threshold };
    assert_eq!(
        s.phase_thresholds,
        [
            on(PhaseKind::Hold, latency(1000)),
            on(PhaseKind::Hold, Threshold::MinTps(45.0)),
            on(PhaseKind::Ramp, Threshold::MaxFailureRate(0.005)),
        ]
    );
    // One block with phase: is a mapping, as without.
    let text = std::fs::read_to_string(Path::new(VALID).join("phase-thresholds.yaml")).unwrap();
    let cut = text.find("thresholds:").unwrap();
    let one = format!("{}thresholds:\n  phase: ramp\n  min_tps: 5\n", &text[..cut]);
    let s = scenario::parse(
        Path::new("one.yaml"),
        &one,
        lnbench_tui::runtime::capabilities,
    )
    .unwrap();
    assert!(s.thresholds.is_empty());
    assert_eq!(
        s.phase_thresholds,
        [on(PhaseKind::Ramp, Threshold::MinTps(5.0))]
    );
}

#[test]
fn an_unknown_field_in_a_listed_threshold_block_is_located() {
    let text = std::fs::read_to_string(Path::new(VALID).join("phase-thresholds.yaml")).unwrap();
    let bad = text.replace("    min_tps: 45", "    min_tsp: 45");
    let err = scenario::parse(
        Path::new("bad.yaml"),
        &bad,
        lnbench_tui::runtime::capabilities,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("bad.yaml:28:5"), "{err}");
    assert!(err.contains("unknown field `min_tsp`"), "{err}");
}

#[test]
fn a_scenario_without_thresholds_has_none() {
    let s = scenario::load(
        &Path::new(VALID).join("alice-pays-bob.yaml"),
        lnbench_tui::runtime::capabilities,
    )
    .unwrap();
    assert!(s.thresholds.is_empty());
}

/// scenarios/jamming.yaml and its Core Lightning and Eclair hop variants: the
/// attacker's route crosses the honest route's Bob -> Carol channel, and `share: 1.0`
/// holds every slot the nodes' args allow.
#[test]
fn shipped_jamming_scenarios_jam_every_slot_of_the_honest_channel() {
    for (file, hop) in [
        ("scenarios/jamming.yaml", "lnd"),
        ("scenarios/jamming-cln.yaml", "cln"),
        ("scenarios/jamming-eclair.yaml", "eclair"),
    ] {
        jams_every_slot(file, hop);
    }
}

fn jams_every_slot(file: &str, hop: &str) {
    let s = scenario::load(Path::new(file), lnbench_tui::runtime::capabilities)
        .unwrap_or_else(|e| panic!("{e}"));
    let bob = s.nodes.iter().find(|n| n.name == "bob").expect("a bob");
    assert_eq!(bob.implementation.as_str(), hop, "{file}");
    let attack = s.workload.attack.as_ref().expect("an attack");
    assert_eq!(
        (attack.attacker.as_str(), attack.accomplice.as_str()),
        ("mallory", "eve")
    );
    // The sweep holds 4, 8 and then all 12 slots (every node's HTLC limit).
    let sweep = s.sweep.as_ref().expect("a sweep over attack_slots");
    let slots: Vec<u32> = (sweep.points.iter())
        .map(|p| p.scenario.workload.attack.as_ref().unwrap().slots)
        .collect();
    assert_eq!(slots, [4, 8, 12], "{file}");
    assert_eq!(attack.slots, 4, "{file}: the first point's");
    let stop = s.workload.stop.duration.unwrap();
    assert!(attack.start + attack.duration < stop, "{attack:?}");
    let has = |from: &str, to: &str| s.channels.iter().any(|c| c.from == from && c.to == to);
    assert!(
        has("alice", "bob") && has("bob", "carol") && has("mallory", "bob") && has("carol", "eve")
    );
    assert_eq!(s.workload.senders, ["alice"]);
    assert_eq!(s.workload.receivers, ["carol"]);
}

/// The scenarios the end-to-end tests of each implementation build as values
/// (tests/common/impls.rs): written as YAML they read back as the same value, and are
/// valid scenarios, locally and on docker.
#[test]
fn the_implementation_scenarios_built_as_values_are_valid() {
    use common::impls::{CLN, ECLAIR, LDK};
    for imp in [&CLN, &ECLAIR, &LDK] {
        let mut on_docker = imp.fixture();
        on_docker["runtime"] = "docker".into();
        let scenarios = [
            imp.fixture(),
            on_docker,
            imp.mixed("alice", "bob", "invoice"),
            imp.mixed("bob", "alice", "invoice"),
        ];
        for value in scenarios {
            let text = common::yaml(&value);
            let back: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
            assert_eq!(back, value, "{text}");
            let path = Path::new("built.yaml");
            if let Err(e) = scenario::parse(path, &text, lnbench_tui::runtime::capabilities) {
                panic!("{}: {e}\n{text}", imp.name);
            }
        }
        let file = scenario::parse(
            Path::new("fixture.yaml"),
            &imp.fixture_text(),
            lnbench_tui::runtime::capabilities,
        );
        assert!(file.is_ok(), "{}'s fixture", imp.name);
    }
}
