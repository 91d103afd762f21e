//! Unit tests of `topology:` and `workload: activity:` on small inline scenarios.

use super::Load;
use super::tests::parse;
use super::topology::{Shape, edges};
use crate::scenario::parse_error as error_of;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::path::Path;

const BASE: &str = "\
name: net
topology:
  shape: random
  nodes: 12
  degree: 3
  capacity_sat: { uniform: [1000000, 3000000] }
  seed: 5
workload:
  kind: keysend
  activity:
    senders: all
    amount_msat: { log_normal: { median: 5000, sigma: 0.5 } }
  concurrency: 2
  stop:
    duration: 1m
";

fn with(old: &str, new: &str) -> String {
    assert!(BASE.contains(old), "BASE has no {old:?}");
    BASE.replacen(old, new, 1)
}

fn connected(n: usize, links: &[(usize, usize)]) -> bool {
    let t = super::Topology {
        shape: Shape::Random,
        seed: 0,
        nodes: (0..n).map(|i| i.to_string()).collect(),
        edges: links.to_vec(),
    };
    t.hops_from(0).iter().all(Option::is_some)
}

#[test]
fn a_topology_becomes_nodes_and_channels_both_ways_with_every_node_sending() {
    let s = parse(Path::new("net.yaml"), BASE).unwrap();
    let t = s.topology.as_ref().unwrap();
    assert_eq!(s.nodes.len(), 12);
    assert_eq!(s.nodes[0].name, "n01");
    assert_eq!(s.channels.len(), t.edges.len() * 2);
    assert!(connected(12, &t.edges));
    for c in &s.channels {
        assert!((1_000_000..=3_000_000).contains(&c.capacity_sat), "{c:?}");
    }
    let a = s.activity.as_ref().unwrap();
    assert_eq!((a.senders.len(), a.peers.len()), (12, 12));
    assert_eq!(s.workload.senders.len(), 12);
    // concurrency: is per sender with activity:.
    assert_eq!(s.workload.load, Load::Closed { concurrency: 24 });
    assert_eq!(s.workload.amount_msat, 5000);
}

#[test]
fn the_same_seed_gives_the_same_network_and_another_seed_another() {
    let a = parse(Path::new("net.yaml"), BASE).unwrap();
    let b = parse(Path::new("net.yaml"), BASE).unwrap();
    assert_eq!(a.topology, b.topology);
    assert_eq!(a.channels, b.channels);
    let c = parse(Path::new("net.yaml"), &with("seed: 5", "seed: 6")).unwrap();
    assert_ne!(a.topology.unwrap().edges, c.topology.unwrap().edges);
}

#[test]
fn every_shape_links_all_nodes_as_its_name_says() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let n = 10;
    assert_eq!(edges(Shape::Star, n, 0.0, &mut rng).len(), n - 1);
    assert_eq!(edges(Shape::Line, n, 0.0, &mut rng).len(), n - 1);
    assert_eq!(edges(Shape::Ring, n, 0.0, &mut rng).len(), n);
    assert_eq!(
        edges(Shape::Complete, n, 0.0, &mut rng).len(),
        n * (n - 1) / 2
    );
    for shape in [
        Shape::Star,
        Shape::Line,
        Shape::Ring,
        Shape::Complete,
        Shape::Random,
        Shape::ScaleFree,
    ] {
        for seed in 0..20 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let links = edges(shape, n, 2.0, &mut rng);
            assert!(connected(n, &links), "{shape:?} seed {seed}: {links:?}");
            assert!(links.iter().all(|(a, b)| a < b && *b < n));
        }
    }
    // Scale-free: each node after the core of 3 adds 2 links.
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    assert_eq!(
        edges(Shape::ScaleFree, n, 2.0, &mut rng).len(),
        3 + 2 * (n - 3)
    );
}

#[test]
fn implementation_shares_become_counts_that_add_up() {
    let text = with(
        "  seed: 5\n",
        "  seed: 5\n  implementations: { lnd: 0.5, cln: 0.25, eclair: 0.25 }\n",
    )
    .replace("kind: keysend", "kind: invoice")
    .replace(
        "name: net\n",
        "name: net\nchain: { implementation: bitcoind }\n",
    );
    let s = parse(Path::new("net.yaml"), &text).unwrap_or_else(|e| panic!("{e}"));
    let count =
        |i: crate::node::Implementation| s.nodes.iter().filter(|n| n.implementation == i).count();
    use crate::node::Implementation::*;
    assert_eq!((count(Lnd), count(Cln), count(Eclair)), (6, 3, 3));
}

#[test]
fn a_share_of_senders_picks_that_many_nodes() {
    let s = parse(
        Path::new("net.yaml"),
        &with("senders: all", "senders: 0.25"),
    )
    .unwrap();
    assert_eq!(s.workload.senders.len(), 3);
    assert_eq!(s.workload.receivers.len(), 12);
}

#[test]
fn mistakes_in_a_topology_or_activity_point_at_the_value() {
    let cases = [
        (with("nodes: 12", "nodes: 1"), "4:10", "nodes: 1"),
        (with("degree: 3", "degree: 30"), "5:11", "degree: 30"),
        (
            with("shape: random", "shape: ring").replace("  degree: 3\n", "  degree: 2\n"),
            "5:11",
            "fixed degree",
        ),
        (
            with("[1000000, 3000000]", "[3000000, 1000000]"),
            "6:17",
            "capacity_sat",
        ),
        (with("senders: all", "senders: 2"), "11:14", "not a share"),
        (
            with("senders: all", "senders: some"),
            "11:14",
            "neither all",
        ),
        (
            with("  activity:\n", "  receiver: n01\n  activity:\n"),
            "10:13",
            "activity: and senders:",
        ),
        (
            format!("{BASE}nodes:\n  a: {{ implementation: lnd }}\n"),
            "17:3",
            "beside topology",
        ),
        (
            with("sigma: 0.5", "sigma: 9"),
            "12:18",
            "activity amount_msat",
        ),
    ];
    for (text, at, message) in cases {
        let err = error_of(&text);
        assert!(
            err.contains(&format!("t.yaml:{at}:")),
            "{at} not in:\n{err}"
        );
        assert!(err.contains(message), "{message:?} not in:\n{err}");
    }
}

#[test]
fn a_workload_without_senders_or_activity_is_missing_a_field() {
    let text = "name: t\nnodes:\n  a: { implementation: lnd }\n  b: { implementation: lnd }\n\
                workload:\n  kind: keysend\n  concurrency: 1\n  stop: { payments: 1 }\n";
    let err = error_of(text);
    assert!(err.contains("missing field `senders`"), "{err}");
}

#[test]
fn an_imported_graph_is_cut_to_n_connected_nodes_with_capped_capacities() {
    let path = Path::new("tests/fixtures/scenarios/valid/network-import.yaml");
    let s = super::load(path, super::tests::RUNTIMES).unwrap_or_else(|e| panic!("{e}"));
    let t = s.topology.as_ref().unwrap();
    assert_eq!((t.shape, t.nodes.len()), (Shape::Import, 10));
    assert!(connected(10, &t.edges), "{:?}", t.edges);
    assert!(
        s.channels
            .iter()
            .all(|c| (20_000..=5_000_000).contains(&c.capacity_sat))
    );
    // Fewer connected nodes in the file than asked for.
    let text = std::fs::read_to_string(path)
        .unwrap()
        .replace("nodes: 10", "nodes: 41");
    let err = parse(path, &text).unwrap_err().to_string();
    assert!(
        err.contains(":6:9:") && err.contains("fewer than nodes: 41"),
        "{err}"
    );
    let text = std::fs::read_to_string(path)
        .unwrap()
        .replace("describegraph-40", "missing");
    let err = parse(path, &text).unwrap_err().to_string();
    assert!(err.contains("cannot read graph file"), "{err}");
}

#[test]
fn pregenerated_invoices_do_not_go_with_activity() {
    let err = error_of(&with("kind: keysend", "kind: invoice-pregenerated"));
    assert!(
        err.contains("t.yaml:9:9:") && err.contains("not supported"),
        "{err}"
    );
}

#[test]
fn keysend_across_a_network_with_an_ldk_node_is_refused_at_kind() {
    let text = with(
        "  seed: 5\n",
        "  seed: 5\n  implementations: { lnd: 0.5, ldk: 0.5 }\n",
    )
    .replace(
        "name: net\n",
        "name: net\nchain: { implementation: bitcoind }\n",
    );
    let err = error_of(&text);
    assert!(
        err.contains("t.yaml:11:9:") && err.contains("is ldk"),
        "{err}"
    );
}
