//! `workload: rebalance:` in scenario files: what is read, and the located errors for
//! a rebalance that cannot run.

use super::tests::{parse, parse_error};
use std::path::Path;
use std::time::Duration;

/// Alice drains her channel to bob; she refills it around alice -> carol -> bob -> alice.
pub(crate) const CIRCLE: &str = "\
name: t
nodes:
  alice:
    implementation: lnd
  bob:
    implementation: lnd
  carol:
    implementation: lnd
channels:
  - { from: alice, to: bob, capacity_sat: 1000000 }
  - { from: alice, to: carol, capacity_sat: 2000000 }
  - { from: carol, to: bob, capacity_sat: 2000000 }
workload:
  kind: keysend
  senders: [alice]
  receiver: bob
  concurrency: 1
  stop:
    duration: 60s
  rebalance: { node: alice, first_hop: carol, last_hop: bob, amount_sat: 200000, every: 5s }
";

fn with(old: &str, new: &str) -> String {
    assert!(CIRCLE.contains(old), "CIRCLE has no {old:?}");
    CIRCLE.replacen(old, new, 1)
}

#[test]
fn a_rebalance_is_read_with_its_hops_and_default_fee_limit() {
    let s = parse(Path::new("t.yaml"), CIRCLE).unwrap();
    let r = s.workload.rebalance.unwrap();
    let names = (r.node.as_str(), r.first_hop.as_str(), r.last_hop.as_str());
    assert_eq!(names, ("alice", "carol", "bob"));
    assert_eq!(
        (r.amount_sat, r.every, r.below_sat),
        (200_000, Duration::from_secs(5), None)
    );
    // 1,000 ppm of 200,000 sat: 200 sat.
    assert_eq!((r.max_fee_ppm, r.max_fee_msat()), (1_000, 200_000));
    let s = parse(
        Path::new("t.yaml"),
        &with(
            "every: 5s }",
            "every: 5s, below_sat: 300000, max_fee_ppm: 10 }",
        ),
    )
    .unwrap();
    let r = s.workload.rebalance.unwrap();
    assert_eq!((r.below_sat, r.max_fee_msat()), (Some(300_000), 2_000));
}

#[test]
fn a_rebalance_without_a_circle_is_refused_where_it_is_written() {
    let err = parse_error(&with(
        "  - { from: carol, to: bob, capacity_sat: 2000000 }\n",
        "",
    ));
    assert!(err.starts_with("t.yaml:19:57: "), "{err}");
    assert!(
        err.contains("no channels lead from carol to bob except through alice"),
        "{err}"
    );
    assert!(err.contains("add a channel from carol to bob"), "{err}");
    let err = parse_error(&with("first_hop: carol", "first_hop: nobody"));
    assert!(err.contains("not defined under nodes:"), "{err}");
    let same = parse_error(&with("first_hop: carol", "first_hop: bob"));
    assert!(
        same.contains("first_hop and last_hop are the same node"),
        "{same}"
    );
    let own = parse_error(&with("last_hop: bob", "last_hop: alice"));
    assert!(own.contains("names alice as its own hop"), "{own}");
}

#[test]
fn a_hop_must_be_a_peer_of_the_node() {
    let text = with("  carol:\n", "  dave:\n    implementation: lnd\n  carol:\n")
        .replace("first_hop: carol", "first_hop: dave");
    let err = parse_error(&text);
    assert!(
        err.contains("rebalance node alice has no channel with dave"),
        "{err}"
    );
}

#[test]
fn bad_amounts_intervals_and_fee_limits_are_refused() {
    let zero = parse_error(&with("amount_sat: 200000", "amount_sat: 0"));
    assert!(zero.contains("rebalance amount_sat is 0"), "{zero}");
    let long = parse_error(&with("every: 5s", "every: 2m"));
    assert!(
        long.contains("longer than the load, which lasts 1m"),
        "{long}"
    );
    let never = parse_error(&with("every: 5s", "every: 0s"));
    assert!(never.contains("write a duration above zero"), "{never}");
    let fee = parse_error(&with("every: 5s }", "every: 5s, max_fee_ppm: 0 }"));
    assert!(fee.contains("rebalance max_fee_ppm is 0"), "{fee}");
    let unknown = parse_error(&with("every: 5s }", "every: 5s, via: dave }"));
    assert!(unknown.contains("via"), "{unknown}");
}

#[test]
fn only_an_lnd_node_can_pay_itself_around_the_circle() {
    for (implementation, why) in [
        ("cln", "sendpay"),
        ("eclair", "sendtoroute"),
        ("ldk", "ldk-server"),
    ] {
        let text = with(
            "  alice:\n    implementation: lnd\n",
            &format!("  alice:\n    implementation: {implementation}\n"),
        )
        .replace(
            "name: t\n",
            "name: t\nchain: { implementation: bitcoind }\n",
        );
        let err = parse_error(&text);
        assert!(
            err.contains("rebalancing needs a node that pays itself"),
            "{err}"
        );
        assert!(err.contains(why), "{implementation}: {err}");
        assert!(err.contains("implementation: lnd"), "{err}");
    }
}
