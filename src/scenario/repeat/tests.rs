//! `repeat:` on small inline scenarios.

use crate::scenario::parse_error as error_of;
use crate::scenario::tests::{RUNTIMES, parse};
use crate::scenario::{Judge, SweepParam, SweepValue, parse_with_repeat};
use std::path::Path;
use std::time::Duration;

const PAIR: &str = "\
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

fn labels(text: &str, repeat: Option<u32>) -> Vec<String> {
    let s = parse_with_repeat(Path::new("t.yaml"), text, repeat, RUNTIMES)
        .unwrap_or_else(|e| panic!("{e}"));
    let sweep = s.sweep.expect("repeats make a sweep");
    sweep.points.iter().map(|p| p.label.clone()).collect()
}

#[test]
fn a_scenario_repeated_is_a_sweep_of_its_repeats_on_one_network() {
    let s = parse(Path::new("t.yaml"), &format!("{PAIR}repeat: 3\n")).unwrap();
    assert_eq!(s.repeat.count, 3);
    assert_eq!(s.repeat.settle, Duration::from_secs(5));
    let sweep = s.sweep.unwrap();
    assert_eq!(sweep.params, [SweepParam::Repeat]);
    let labels: Vec<&str> = sweep.points.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(labels, ["repeat=1", "repeat=2", "repeat=3"]);
    assert!(sweep.points.iter().all(|p| p.network == 0));
    assert_eq!(
        sweep.points[2].values,
        [(SweepParam::Repeat, SweepValue::Count(3))]
    );
    // Without repeat: no sweep at all.
    assert!(parse(Path::new("t.yaml"), PAIR).unwrap().sweep.is_none());
}

#[test]
fn each_sweep_point_repeats_in_turn_and_fresh_networks_are_numbered_apart() {
    let text = format!(
        "{PAIR}sweep:\n  concurrency: [1, 4]\nrepeat: {{ count: 2, settle: 0s, fresh_network: true, thresholds: median }}\n"
    );
    let s = parse(Path::new("t.yaml"), &text).unwrap();
    assert_eq!(s.repeat.judge, Judge::Median);
    assert!(s.repeat.fresh_network);
    assert_eq!(s.repeat.settle, Duration::ZERO);
    let sweep = s.sweep.unwrap();
    let got: Vec<(&str, usize)> = (sweep.points.iter())
        .map(|p| (p.label.as_str(), p.network))
        .collect();
    assert_eq!(
        got,
        [
            ("concurrency=1,repeat=1", 0),
            ("concurrency=1,repeat=2", 1),
            ("concurrency=4,repeat=1", 2),
            ("concurrency=4,repeat=2", 3),
        ]
    );
    assert_eq!(sweep.params, [SweepParam::Concurrency, SweepParam::Repeat]);
}

#[test]
fn the_command_line_count_replaces_the_files() {
    assert_eq!(
        labels(&format!("{PAIR}repeat: 3\n"), Some(2)),
        ["repeat=1", "repeat=2"]
    );
    assert_eq!(labels(PAIR, Some(2)), ["repeat=1", "repeat=2"]);
    let one = parse_with_repeat(
        Path::new("t.yaml"),
        &format!("{PAIR}repeat: 3\n"),
        Some(1),
        RUNTIMES,
    );
    assert!(one.unwrap().sweep.is_none(), "--repeat 1 runs once");
}

#[test]
fn mistakes_are_named_at_their_place() {
    let zero = error_of(&format!("{PAIR}repeat: 0\n"));
    assert!(
        zero.contains("t.yaml:18:9") && zero.contains("not between 1 and 20"),
        "{zero}"
    );
    let settle = error_of(&format!("{PAIR}repeat: {{ count: 3, settle: soon }}\n"));
    assert!(
        settle.contains("repeat settle \"soon\" is not a duration"),
        "{settle}"
    );
    let unknown = error_of(&format!("{PAIR}repeat: {{ count: 3, pause: 1s }}\n"));
    assert!(unknown.contains("pause"), "{unknown}");
    let judge = error_of(&format!("{PAIR}repeat: {{ count: 3, thresholds: mean }}\n"));
    assert!(judge.contains("mean"), "{judge}");
    let many = error_of(&format!(
        "{PAIR}sweep:\n  concurrency: [1, 2, 3, 4, 5, 6, 7]\nrepeat: 10\n"
    ));
    assert!(
        many.contains("7 point(s) × 10 repeats make 70 runs, more than 64"),
        "{many}"
    );
}

#[test]
fn a_draining_load_repeats_only_on_fresh_networks() {
    let drain = PAIR.replace(
        "    payments: 10\n",
        "    payments: 10\n    liquidity_failures: 3\n",
    );
    let shared = error_of(&format!("{drain}repeat: 2\n"));
    assert!(
        shared.contains("t.yaml:19:9:")
            && shared.contains("2 repeats of a draining load")
            && shared.contains("fresh_network: true"),
        "{shared}"
    );
    // --repeat gives the count (the error points at the name: no repeat: is written).
    let flag = parse_with_repeat(Path::new("t.yaml"), &drain, Some(2), RUNTIMES)
        .expect_err("repeats on one network");
    assert!(
        flag.to_string().contains("2 repeats of a draining load"),
        "{flag}"
    );
    // Fresh networks, or a single run, are fine.
    let fresh = format!("{drain}repeat: {{ count: 1, fresh_network: true }}\n");
    assert_eq!(labels(&fresh, Some(2)), ["repeat=1", "repeat=2"]);
    parse(Path::new("t.yaml"), &drain).unwrap();
    // Without the drain stop, repeats share the network as before.
    assert_eq!(labels(PAIR, Some(2)), ["repeat=1", "repeat=2"]);
}
