use super::*;
use crate::scenario::tests::parse;
use std::path::Path;

const BASE: &str = "\
name: t
nodes:
  alice:
    implementation: lnd
  bob:
    implementation: lnd
  carol:
    implementation: lnd
    replicas: 2
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
    payments: 1000
";

fn parsed(block: &str) -> Result<(Vec<LinkSpec>, Vec<Fault>), String> {
    parse(Path::new("t.yaml"), &format!("{BASE}{block}"))
        .map(|s| (s.links, s.faults))
        .map_err(|e| e.to_string())
}

fn faults(block: &str) -> Vec<Fault> {
    parsed(block).unwrap().1
}

fn error(block: &str) -> String {
    parsed(block).unwrap_err()
}

#[test]
fn none_unless_written() {
    assert_eq!(parsed("").unwrap(), (Vec::new(), Vec::new()));
}

#[test]
fn every_kind_of_fault_reads() {
    let f = faults(
        "faults:
  - { at: 20s, kill: bob, restart_after: 5s }
  - { at: 25s, kill: carol-2 }
  - { after_payments: 500, restart: bob }
  - { at: 10s, pause: alice, for: 3s }
  - { at: 15s, link: [alice, bob], latency: 50ms, jitter: 5ms, for: 10s }
  - { at: 15s, link: [alice, \"*\"], bandwidth: 100 }
  - { at: 30s, link: [alice, bob], down: true, for: 5s }
  - { at: 40s, link: [bob, alice], reset: true }
  - { at: 50s, mine: 6 }
",
    );
    let s = Duration::from_secs;
    assert_eq!(f.len(), 9);
    assert_eq!(
        f[0],
        Fault {
            trigger: FaultTrigger::At(s(20)),
            action: FaultAction::Kill {
                node: "bob".into(),
                restart_after: Some(s(5))
            }
        }
    );
    assert_eq!(
        f[1].action,
        FaultAction::Kill {
            node: "carol-2".into(),
            restart_after: None
        }
    );
    assert_eq!(f[2].trigger, FaultTrigger::AfterPayments(500));
    assert_eq!(
        f[3].action,
        FaultAction::Pause {
            node: "alice".into(),
            duration: s(3)
        }
    );
    let FaultAction::Link {
        pair,
        change: LinkChange::Shape(shape),
        duration,
    } = &f[4].action
    else {
        panic!("{:?}", f[4]);
    };
    assert!(pair.covers("bob", "alice") && !pair.covers("alice", "carol-1"));
    assert_eq!(
        (shape.latency, shape.jitter, *duration),
        (
            Duration::from_millis(50),
            Duration::from_millis(5),
            Some(s(10))
        )
    );
    let FaultAction::Link { pair, change, .. } = &f[5].action else {
        panic!()
    };
    assert!(pair.covers("carol-1", "alice") && !pair.covers("bob", "carol-1"));
    assert_eq!(f[5].label(), "bandwidth alice–*");
    assert!(matches!(
        f[6].action,
        FaultAction::Link {
            change: LinkChange::Down,
            ..
        }
    ));
    assert_eq!(f[6].label(), "partition alice–bob");
    assert!(matches!(change, LinkChange::Shape(_)));
    assert!(matches!(
        f[7].action,
        FaultAction::Link {
            change: LinkChange::Reset,
            duration: None,
            ..
        }
    ));
    assert_eq!(f[8].action, FaultAction::Mine { blocks: 6 });
}

#[test]
fn links_read_with_their_shape() {
    let (links, _) = parsed(
        "links:\n  - between: [alice, carol-1]\n    latency: 15ms\n  - { between: [bob, \"*\"], bandwidth: 500 }\n",
    )
    .unwrap();
    assert_eq!(links.len(), 2);
    assert_eq!(links[0].shape.latency, Duration::from_millis(15));
    assert_eq!(links[1].shape.bandwidth_kb_s, Some(500));
    assert_eq!(links[1].pair.b, LinkEnd::Every);
}

#[test]
fn bad_node_faults_are_errors_at_their_place() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "faults:\n  - { kill: bob }\n",
            "t.yaml:22:5",
            "says not when",
        ),
        (
            "faults:\n  - { at: 1s }\n",
            "t.yaml:22:5",
            "names no action",
        ),
        (
            "faults:\n  - { at: 1s, kill: bob, pause: alice }\n",
            "t.yaml:22:",
            "more than one action",
        ),
        (
            "faults:\n  - { at: 1s, kill: dave }\n",
            "t.yaml:22:",
            "dave",
        ),
        (
            "faults:\n  - { at: 1s, kill: carol }\n",
            "t.yaml:22:",
            "a group of 2 nodes",
        ),
        (
            "faults:\n  - { at: 1s, pause: alice }\n",
            "t.yaml:22:",
            "how long",
        ),
        (
            "faults:\n  - { at: soon, kill: bob }\n",
            "t.yaml:22:",
            "not a duration",
        ),
        (
            "faults:\n  - { at: 1s, after_payments: 5, kill: bob }\n",
            "t.yaml:22:",
            "both at: and after_payments:",
        ),
    ];
    assert_located_errors(cases);
}

#[test]
fn bad_link_faults_and_runtimes_are_errors_at_their_place() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "faults:\n  - { at: 1s, link: [alice, bob] }\n",
            "t.yaml:22:",
            "says not what happens",
        ),
        (
            "faults:\n  - { at: 1s, link: [alice], down: true }\n",
            "t.yaml:22:",
            "names 1 nodes",
        ),
        (
            "faults:\n  - { at: 1s, link: [alice, alice], down: true }\n",
            "t.yaml:22:",
            "twice",
        ),
        (
            "faults:\n  - { at: 1s, link: [alice, bob], down: true, latency: 5ms }\n",
            "t.yaml:22:",
            "more than one of",
        ),
        (
            "faults:\n  - { at: 1s, link: [alice, bob], reset: true, for: 2s }\n",
            "t.yaml:22:",
            "a reset has for:",
        ),
        (
            "faults:\n  - { at: 1s, kill: bob, latency: 5ms }\n",
            "t.yaml:22:",
            "latency: belongs to link:",
        ),
        (
            "faults:\n  - { at: 1s, kill: bob, for: 5s }\n",
            "t.yaml:22:",
            "for: belongs to",
        ),
        (
            "faults:\n  - { at: 1s, restart: bob, restart_after: 5s }\n",
            "t.yaml:22:",
            "restart_after: belongs to kill:",
        ),
        (
            "faults:\n  - { at: 1s, link: [alice, bob], latency: 5ms, jitter: 9ms }\n",
            "t.yaml:22:",
            "more than the latency",
        ),
        (
            "faults:\n  - { at: 1s, mine: 0 }\n",
            "t.yaml:22:",
            "not a burst",
        ),
        (
            "links:\n  - { between: [alice, bob] }\n",
            "t.yaml:22:",
            "adds nothing",
        ),
        (
            "links:\n  - { between: [alice, bob], bandwidth: 0 }\n",
            "t.yaml:22:",
            "bandwidth: 0",
        ),
    ];
    assert_located_errors(cases);
}

/// The docker runtime kills, pauses and restarts its containers, mines on its chain
/// and shapes links through its proxy container: every fault passes there.
#[test]
fn docker_runs_every_fault_and_links() {
    let (links, f) = parsed(
        "runtime: docker\nlinks:\n  - { between: [alice, bob], latency: 5ms }\nfaults:\n  \
         - { at: 1s, kill: bob, restart_after: 2s }\n  - { at: 5s, pause: alice, for: 1s }\n  \
         - { at: 8s, restart: bob }\n  - { at: 9s, mine: 2 }\n  \
         - { at: 10s, link: [alice, bob], down: true, for: 1s }\n",
    )
    .unwrap();
    assert_eq!((links.len(), f.len()), (1, 5), "{links:?} {f:?}");
}

/// Each block after the base scenario is an error at `at` (file:line:column prefix)
/// that says `words` and gives a hint.
fn assert_located_errors(cases: &[(&str, &str, &str)]) {
    for (block, at, words) in cases {
        let e = error(block);
        assert!(e.starts_with(at) && e.contains(words), "{block}: {e}");
        assert!(e.contains("hint:"), "{block}: {e}");
    }
}

fn mining(block: &str) -> Result<(Option<Duration>, Vec<Fault>), String> {
    parse(Path::new("t.yaml"), &format!("{BASE}{block}"))
        .map(|s| (s.mining, s.faults))
        .map_err(|e| e.to_string())
}

#[test]
fn background_mining_and_its_faults_read() {
    assert_eq!(mining("").unwrap(), (None, Vec::new()));
    let (every, f) = mining(
        "mining: { every: 10s }
faults:
  - { at: 20s, mining: stop }
  - { after_payments: 500, mining: resume }
",
    )
    .unwrap();
    assert_eq!(every, Some(Duration::from_secs(10)));
    assert_eq!(f[0].action, FaultAction::Mining { on: false });
    assert_eq!(f[0].label(), "mining stop");
    assert_eq!(f[1].action, FaultAction::Mining { on: true });
    assert_eq!(f[1].label(), "mining resume");
}

#[test]
fn bad_mining_is_an_error_at_its_place() {
    let cases: &[(&str, &str, &str)] = &[
        ("mining: { every: 500ms }\n", "t.yaml:21:18", "too often"),
        ("mining: { every: 0s }\n", "t.yaml:21:18", "above zero"),
        ("mining: { every: 2h }\n", "t.yaml:21:18", "too long"),
        ("mining: { each: 10s }\n", "t.yaml:21:", "each"),
        (
            "faults:\n  - { at: 1s, mining: stop }\n",
            "t.yaml:22:",
            "no background mining",
        ),
        (
            "mining: { every: 5s }\nfaults:\n  - { at: 1s, mining: pause }\n",
            "t.yaml:23:",
            "neither stop nor resume",
        ),
        (
            "mining: { every: 5s }\nfaults:\n  - { at: 1s, mining: stop, for: 5s }\n",
            "t.yaml:23:",
            "for:",
        ),
    ];
    for (block, at, says) in cases {
        let e = mining(block).unwrap_err();
        assert!(e.contains(at) && e.contains(says), "{block}: {e}");
    }
}

/// `kill: chain` and `restart: chain` name the chain backend, on bitcoind, on every
/// runtime that starts one; on btcd they are refused at the fault's value.
#[test]
fn chain_faults_read_on_bitcoind_and_are_refused_where_they_cannot_run() {
    let block =
        "faults:\n  - { at: 5s, restart: chain }\n  - { at: 9s, kill: chain, restart_after: 3s }\n";
    for runtime in ["local", "docker", "kubernetes"] {
        let f = faults(&format!(
            "runtime: {runtime}\nchain: {{ implementation: bitcoind }}\n{block}"
        ));
        assert_eq!(f.len(), 2);
        assert!(f.iter().all(Fault::stops_chain), "{f:?}");
        assert_eq!(
            (f[0].label(), f[1].label()),
            ("restart chain".to_string(), "kill chain".to_string())
        );
    }
    assert_located_errors(&[
        (
            &format!("runtime: local\n{block}"),
            "t.yaml:23:24:",
            "restart chain cannot run on btcd: btcd deletes its regtest chain at every start",
        ),
        (
            "runtime: local\nchain: { implementation: btcd }\nfaults:\n  - { at: 9s, kill: chain }\n",
            "t.yaml:24:21:",
            "kill chain cannot run on btcd",
        ),
    ]);
    // A node may not be called chain, so the word names the chain only.
    assert!(error("faults:\n  - { at: 9s, pause: chain, for: 1s }\n").contains("chain"));
}
