//! `workload: attack:` in scenario files: slots or share, and the located errors for
//! an attack that cannot run.

use super::tests::{parse, parse_error};
use std::path::Path;
use std::time::Duration;

/// Honest alice -> bob -> carol; the attacker mallory -> bob -> carol -> eve (also
/// the run's route probes test).
pub(crate) const JAM: &str = "\
name: t
nodes:
  alice:
    implementation: lnd
  bob:
    implementation: lnd
    args: [--default-remote-max-htlcs=10]
  carol:
    implementation: lnd
  mallory:
    implementation: lnd
  eve:
    implementation: lnd
channels:
  - { from: alice, to: bob, capacity_sat: 1000000 }
  - { from: bob, to: carol, capacity_sat: 1000000 }
  - { from: mallory, to: bob, capacity_sat: 1000000 }
  - { from: carol, to: eve, capacity_sat: 1000000 }
workload:
  kind: keysend
  senders: [alice]
  receiver: carol
  concurrency: 2
  stop:
    duration: 40s
  attack: { attacker: mallory, accomplice: eve, slots: 8, hold: 5s, start: 10s, for: 20s }
";

fn with(old: &str, new: &str) -> String {
    assert!(JAM.contains(old), "JAM has no {old:?}");
    JAM.replacen(old, new, 1)
}

#[test]
fn an_attack_is_read_with_its_slots_and_window() {
    let s = parse(Path::new("t.yaml"), JAM).unwrap();
    let a = s.workload.attack.unwrap();
    assert_eq!(
        (a.attacker.as_str(), a.accomplice.as_str()),
        ("mallory", "eve")
    );
    assert_eq!((a.slots, a.amount_msat), (8, 10_000));
    let secs = |d: Duration| d.as_secs();
    assert_eq!((secs(a.hold), secs(a.start), secs(a.duration)), (5, 10, 20));
}

#[test]
fn a_share_is_of_the_smallest_max_accepted_htlcs() {
    let s = parse(Path::new("t.yaml"), &with("slots: 8", "share: 0.5")).unwrap();
    // bob sets 10: half of it.
    assert_eq!(s.workload.attack.unwrap().slots, 5);
    let err = parse_error(&with("slots: 8", "share: 1.5"));
    assert!(err.starts_with("t.yaml:26:56: "), "{err}");
    assert!(err.contains("outside (0, 1]"), "{err}");
    let both = parse_error(&with("slots: 8", "slots: 8, share: 0.5"));
    assert!(both.contains("both slots: and share:"), "{both}");
}

/// Each implementation's own flag, or its default where bob sets none: half of it.
#[test]
fn a_share_reads_each_implementations_limit() {
    let hop = |bob: &str| {
        let text = with(
            "  bob:\n    implementation: lnd\n    args: [--default-remote-max-htlcs=10]\n",
            bob,
        )
        .replace("slots: 8", "share: 0.5")
        .replace(
            "name: t\n",
            "name: t\nchain: { implementation: bitcoind }\n",
        );
        let s = parse(Path::new("t.yaml"), &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        s.workload.attack.unwrap().slots
    };
    let cases = [
        (
            "  bob:\n    implementation: cln\n    args: [--max-concurrent-htlcs=12]\n",
            6,
        ),
        ("  bob:\n    implementation: cln\n", 242),
        ("  bob:\n    implementation: eclair\n", 15),
        (
            "  bob:\n    implementation: eclair\n    args: [-Declair.channel.max-accepted-htlcs=8]\n",
            4,
        ),
        ("  bob:\n    implementation: ldk\n", 25),
        ("  bob:\n    implementation: lnd\n", 242),
    ];
    for (bob, slots) in cases {
        assert_eq!(hop(bob), slots, "{bob}");
    }
}

#[test]
fn zero_slots_and_unknown_nodes_are_located_errors() {
    let zero = parse_error(&with("slots: 8", "slots: 0"));
    assert!(zero.starts_with("t.yaml:26:56: "), "{zero}");
    assert!(zero.contains("attack slots is 0"), "{zero}");
    let unknown = parse_error(&with("attacker: mallory", "attacker: trudy"));
    assert!(unknown.starts_with("t.yaml:26:23: "), "{unknown}");
    assert!(unknown.contains("node \"trudy\""), "{unknown}");
}

#[test]
fn the_attacker_may_not_be_an_honest_sender() {
    let err = parse_error(&with("attacker: mallory", "attacker: alice"));
    assert!(err.starts_with("t.yaml:26:23: "), "{err}");
    assert!(
        err.contains("attacker alice is also an honest sender"),
        "{err}"
    );
}

#[test]
fn an_attack_beyond_the_load_is_refused() {
    let long = parse_error(&with("for: 20s", "for: 31s"));
    assert!(long.starts_with("t.yaml:26:86: "), "{long}");
    assert!(long.contains("start + for goes beyond the load"), "{long}");
    let hold = parse_error(&with("hold: 5s", "hold: 41s"));
    assert!(hold.contains("attack hold goes beyond the load"), "{hold}");
}

#[test]
fn no_path_from_attacker_to_accomplice_is_refused() {
    let err = parse_error(&with(
        "  - { from: carol, to: eve, capacity_sat: 1000000 }\n",
        "",
    ));
    assert!(
        err.contains("attacker mallory has no channel path to accomplice eve"),
        "{err}"
    );
}

#[test]
fn an_accomplice_without_hold_invoices_is_refused_with_why() {
    let cln = with(
        "  eve:\n    implementation: lnd",
        "  eve:\n    implementation: cln",
    )
    .replacen("nodes:", "chain:\n  implementation: bitcoind\nnodes:", 1);
    let err = parse_error(&cln);
    assert!(err.starts_with("t.yaml:28:44: "), "{err}");
    assert!(err.contains("eve is cln"), "{err}");
    assert!(err.contains("plugin"), "{err}");
}

#[test]
fn a_sweep_over_attack_slots_sets_each_points_slots_on_one_network() {
    let text = format!(
        "{}sweep:\n  attack_slots: [2, 4, 8]\n",
        with("slots: 8", "share: 0.5")
    );
    let s = parse(Path::new("t.yaml"), &text).unwrap_or_else(|e| panic!("{e}"));
    let sweep = s.sweep.expect("a sweep");
    let labels: Vec<&str> = sweep.points.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(
        labels,
        ["attack.slots=2", "attack.slots=4", "attack.slots=8"]
    );
    let slots: Vec<u32> = (sweep.points.iter())
        .map(|p| p.scenario.workload.attack.as_ref().unwrap().slots)
        .collect();
    // The sweep's value, not the file's share (half of bob's 10).
    assert_eq!(slots, [2, 4, 8]);
    assert!(sweep.points.iter().all(|p| p.network == 0));
}

#[test]
fn an_attack_slots_sweep_without_an_attack_or_beyond_the_limit_is_located() {
    let no_attack = JAM.replace(
        "  attack: { attacker: mallory, accomplice: eve, slots: 8, hold: 5s, start: 10s, for: 20s }\n",
        "",
    );
    let err = parse_error(&format!("{no_attack}sweep:\n  attack_slots: [2, 4]\n"));
    assert!(err.starts_with("t.yaml:27:17: "), "{err}");
    assert!(err.contains("workload has no attack:"), "{err}");
    let err = parse_error(&format!("{JAM}sweep:\n  attack_slots: [2, 500]\n"));
    assert!(err.starts_with("t.yaml:28:21: "), "{err}");
    assert!(err.contains("sweep point attack.slots=500"), "{err}");
}

#[test]
fn an_lnd_htlc_limit_below_five_is_refused_at_its_node() {
    for bad in ["4", "none"] {
        let text = with(
            "--default-remote-max-htlcs=10",
            &format!("--default-remote-max-htlcs={bad}"),
        );
        let err = parse_error(&text);
        assert!(err.starts_with("t.yaml:5:3: "), "{err}");
        assert!(err.contains("fewer than 5 HTLCs"), "{err}");
    }
    let five = with(
        "--default-remote-max-htlcs=10",
        "--default-remote-max-htlcs=5",
    );
    assert!(parse(Path::new("t.yaml"), &five).is_ok());
}
