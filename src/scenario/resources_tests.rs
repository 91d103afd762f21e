use super::{cpuset_cpus, parse_cpuset, parse_memory};
use crate::scenario::parse_error;
use crate::scenario::tests::parse;
use std::path::Path;

/// The scenario modules' base scenario, on the local runtime (which applies envelopes).
fn base() -> String {
    crate::scenario::tests::BASE.replacen("name: t\n", "name: t\nruntime: local\n", 1)
}

fn with_resources(top: &str, alice: &str) -> String {
    let mut text = base().replacen(
        "  alice:\n    implementation: lnd\n",
        &format!("  alice:\n    implementation: lnd\n{alice}"),
        1,
    );
    text.push_str(top);
    text
}

#[test]
fn memory_takes_binary_and_decimal_units_and_bare_bytes() {
    assert_eq!(parse_memory("2GiB"), Some(2 << 30));
    assert_eq!(parse_memory("512MiB"), Some(512 << 20));
    assert_eq!(parse_memory("1.5GB"), Some(1_500_000_000));
    assert_eq!(parse_memory("1048576"), Some(1 << 20));
    assert_eq!(parse_memory("2 gigs"), None);
    assert_eq!(parse_memory("GiB"), None);
}

#[test]
fn cpusets_are_normalised_and_bad_ones_refused() {
    assert_eq!(parse_cpuset("0 - 1"), Some("0-1".into()));
    assert_eq!(parse_cpuset("1, 3,2-2"), Some("1,3,2".into()));
    assert_eq!(parse_cpuset("2-1"), None);
    assert_eq!(parse_cpuset("a"), None);
    assert_eq!(parse_cpuset(""), None);
    assert_eq!(cpuset_cpus("0,2-4"), vec![0, 2, 3, 4]);
}

#[test]
fn a_node_s_own_fields_win_over_the_default_and_the_rest_is_kept() {
    let text = with_resources(
        "resources:\n  nodes: { cpus: 2, memory: 2GiB }\n  chain: { cpus: 0.5 }\n  databases: { memory: 1GiB }\n",
        "    resources: { cpus: 1.5, cpuset: 1 }\n",
    );
    let s = parse(Path::new("t.yaml"), &text).unwrap();
    let alice = s.nodes[0].resources.clone().unwrap();
    assert_eq!(
        (alice.cpus, alice.memory_bytes, alice.cpuset.as_deref()),
        (Some(1.5), Some(2 << 30), Some("1"))
    );
    let bob = s.nodes[1].resources.clone().unwrap();
    assert_eq!(
        (bob.cpus, bob.memory_bytes, bob.cpuset),
        (Some(2.0), Some(2 << 30), None)
    );
    assert_eq!(s.resources.chain.unwrap().cpus, Some(0.5));
    assert_eq!(s.resources.databases.unwrap().memory_bytes, Some(1 << 30));
}

#[test]
fn without_resources_nothing_is_limited() {
    let s = parse(Path::new("t.yaml"), &base()).unwrap();
    assert!(!s.resources.any(&s.nodes));
}

#[test]
fn a_bad_memory_is_located_and_says_which_units() {
    let err = parse_error(&with_resources(
        "resources:\n  nodes: { memory: 2 gigs }\n",
        "",
    ));
    assert!(err.contains("t.yaml:20:20"), "{err}");
    assert!(err.contains("is not an amount of memory"), "{err}");
    assert!(err.contains("GiB"), "{err}");
}

#[test]
fn too_little_memory_and_cpus_out_of_range_are_refused() {
    let err = parse_error(&with_resources("", "    resources: { memory: 1MiB }\n"));
    assert!(
        err.contains("t.yaml:6:26") && err.contains("at least 32MiB"),
        "{err}"
    );
    let err = parse_error(&with_resources("resources:\n  chain: { cpus: 0 }\n", ""));
    assert!(
        err.contains("t.yaml:20:18") && err.contains("cpus: 0 is out of range"),
        "{err}"
    );
}

#[test]
fn a_bad_cpuset_and_an_empty_envelope_are_refused() {
    let err = parse_error(&with_resources("", "    resources: { cpuset: \"3-1\" }\n"));
    assert!(
        err.contains("t.yaml:6:26") && err.contains("not a list of CPUs"),
        "{err}"
    );
    let err = parse_error(&with_resources("resources:\n  databases: {}\n", ""));
    assert!(err.contains("limits nothing"), "{err}");
}

#[test]
fn unknown_fields_in_an_envelope_are_refused() {
    let err = parse_error(&with_resources("resources:\n  nodes: { cores: 2 }\n", ""));
    assert!(err.contains("cores"), "{err}");
}

#[test]
fn a_runtime_that_starts_no_nodes_refuses_resources() {
    let text = with_resources("resources:\n  nodes: { cpus: 1 }\n", "")
        .replace("runtime: local", "runtime: external");
    let err = parse_error(&text);
    assert!(
        err.contains("starts no nodes, so resources: cannot apply"),
        "{err}"
    );
}
