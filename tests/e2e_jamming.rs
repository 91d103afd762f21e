//! Jamming under load end to end, through the real binary on real LND nodes and a
//! real btcd chain: an attacker holds every HTLC slot of the channel the honest
//! payments cross, the honest payments fail during the attack and succeed before and
//! after it, and every held HTLC is cancelled by the end.

mod common;

use common::scenario_run::Finished;
use common::*;

/// Honest alice -> bob -> carol; the attacker mallory -> bob -> carol -> eve. Every
/// channel takes at most 6 HTLCs in flight per direction (LND refuses fewer than 5), and the attack holds all 6
/// of bob -> carol from second 8 to second 20 of a 32 s load. Alice forgets failed
/// channels within seconds (`penaltyhalflife`), so payments succeed again after it;
/// mallory too, so a slot whose HTLC lost the race for bob -> carol to an honest one
/// tries again at once rather than an hour later (a CI run held 5 of 6 slots with
/// mallory on LND's default). The honest load is open-loop at 3/s, not a closed loop
/// that keeps one honest HTLC on bob -> carol nearly all the time.
const SCENARIO: &str = "\
name: e2e-jamming
runtime: local
chain:
  implementation: btcd
nodes:
  alice:
    implementation: lnd
    args: [--default-remote-max-htlcs=6, --routerrpc.apriori.penaltyhalflife=2s]
  bob:
    implementation: lnd
    args: [--default-remote-max-htlcs=6]
  carol:
    implementation: lnd
    args: [--default-remote-max-htlcs=6]
  mallory:
    implementation: lnd
    args: [--default-remote-max-htlcs=6, --routerrpc.apriori.penaltyhalflife=2s]
  eve:
    implementation: lnd
    args: [--default-remote-max-htlcs=6]
channels:
  - { from: alice, to: bob, capacity_sat: 1000000 }
  - { from: bob, to: carol, capacity_sat: 1000000 }
  - { from: mallory, to: bob, capacity_sat: 1000000 }
  - { from: carol, to: eve, capacity_sat: 1000000 }
workload:
  kind: keysend
  senders: [alice]
  receiver: carol
  amount_msat: 1000
  rate:
    hold: { rate: 3, duration: 32s }
  stop:
    duration: 32s
  payment_timeout: 10s
  attack: { attacker: mallory, accomplice: eve, share: 1.0, amount_msat: 10000, hold: 5s, start: 8s, for: 12s }
";

#[test]
fn honest_payments_fail_while_every_slot_is_held_and_nothing_stays_held() {
    require_node_binaries();
    jammed(SCENARIO);
}

/// The jammed hop is Core Lightning: bob forwards both the honest payments and the
/// attack's, on Bitcoin Core. Carol (LND) still takes at most 6 HTLCs from bob.
#[test]
fn a_core_lightning_hop_is_jammed_the_same_way() {
    let bob = "  bob:\n    implementation: cln\n    args: [--max-concurrent-htlcs=6]";
    let test = "a_core_lightning_hop_is_jammed_the_same_way";
    jammed_hop(test, "lightningd", CLN_BUILD, bob);
}

/// The same with an Eclair hop.
#[test]
fn an_eclair_hop_is_jammed_the_same_way() {
    let bob =
        "  bob:\n    implementation: eclair\n    args: [-Declair.channel.max-accepted-htlcs=6]";
    jammed_hop(
        "an_eclair_hop_is_jammed_the_same_way",
        "eclair-node",
        ECLAIR_BUILD,
        bob,
    );
}

/// The same with an LDK hop (ldk-server sets no HTLC limit of its own here; carol's
/// 6 is the one that counts).
#[test]
fn an_ldk_hop_is_jammed_the_same_way() {
    let bob = "  bob:\n    implementation: ldk";
    jammed_hop(
        "an_ldk_hop_is_jammed_the_same_way",
        "ldk-server",
        LDK_BUILD,
        bob,
    );
}

/// The scenario on Bitcoin Core with bob as `bob` (its YAML), when `binary` is built.
fn jammed_hop(test: &str, binary: &str, build: &str, bob: &str) {
    if !built_on_bitcoind(test, binary, build) {
        return;
    }
    let scenario = SCENARIO
        .replace("implementation: btcd", "implementation: bitcoind")
        .replace(
            "  bob:\n    implementation: lnd\n    args: [--default-remote-max-htlcs=6]",
            bob,
        );
    assert!(scenario.contains(bob), "{scenario}");
    jammed(&scenario);
}

/// One jam at a time: the attack races honest HTLCs for slots, and two networks of
/// five nodes side by side on two cores would time that race by each other's load.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn jammed(scenario: &str) {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let run = Finished::run(scenario);
    assert_eq!(run.status.code(), Some(0), "{}", run.log);
    let report = run.report_json();
    assert_matches_schema(&report);
    let attack = &report["results"]["attack"];
    eprintln!("attack: {attack:#}");
    assert_eq!(attack["slots_target"], 6, "{attack:#}");
    assert_eq!(
        attack["slots_held_max"], 6,
        "the slots reach the target: {attack:#}"
    );
    // Held 5 s each over 12 s: refreshed.
    assert!(attack["accepted"].as_u64().unwrap() > 6, "{attack:#}");
    assert_eq!(attack["cancelled"], attack["invoices"], "{attack:#}");
    assert_eq!(attack["cancel_errors"], 0, "{attack:#}");
    assert_eq!(
        attack["left_held"], 0,
        "nothing held at the end: {attack:#}"
    );
    // Eve's own count (LND's pending HTLCs over her channels, only the attack's: the
    // honest payments end at carol), asked each second right after the tool counted.
    let node: Vec<u64> = (attack["accomplice_pending_htlcs"]
        .as_array()
        .unwrap()
        .iter())
    .map(|n| n.as_u64().expect("LND answers every second"))
    .collect();
    let tool: Vec<u64> = (attack["slots_held"].as_array().unwrap().iter())
        .map(|n| n.as_u64().unwrap())
        .collect();
    assert_eq!(node.len(), tool.len(), "{attack:#}");
    let (node_max, tool_max) = (node.iter().max().unwrap(), tool.iter().max().unwrap());
    assert!(
        *node_max <= 6 && node_max + 1 >= *tool_max && *node_max >= 5,
        "eve held what the tool counted: {node:?} against {tool:?}"
    );
    assert_eq!(node[0], 0, "nothing before the attack: {node:?}");
    assert_eq!(
        attack["accomplice_pending_after"], 0,
        "eve holds nothing once the slots cancelled: {attack:#}"
    );
    let (before, during, after) = (&attack["before"], &attack["during"], &attack["after"]);
    assert!(before["ok"].as_u64().unwrap() > 0, "{before:#}");
    assert_eq!(before["failed"], 0, "{before:#}");
    let failed = during["failed"].as_u64().unwrap();
    assert!(failed > 0, "honest payments fail while jammed: {during:#}");
    let named: u64 = (during["failures_by_reason"].as_object().unwrap().values())
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(named, failed, "the report names why: {during:#}");
    assert!(after["ok"].as_u64().unwrap() > 0, "{after:#}");
    assert_eq!(attack["cost"]["fees_paid_msat"], 0, "{attack:#}");
    // The progress lines show the slots held live, none before the attack.
    let held: Vec<u32> = (run.log.lines())
        .filter_map(|l| l.split("attack ").nth(1)?.split_once("/6 slots held"))
        .filter_map(|(n, _)| n.parse().ok())
        .collect();
    assert_eq!(held.first(), Some(&0), "{}", run.log);
    assert!(held.iter().any(|n| *n > 0), "{}", run.log);
    assert!(attack["cost"]["locked_msat_s"].as_f64().unwrap() > 0.0);
}
