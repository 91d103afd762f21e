use super::super::RuntimeKind;
use crate::node::Credentials;
use crate::scenario::tests::parse;
use std::path::Path;

const WORKLOAD: &str = "workload:
  kind: keysend
  senders: [alice]
  receiver: bob
  amount_msat: 1000
  concurrency: 2
  stop:
    payments: 100
";

fn scenario(head: &str, nodes: &str) -> String {
    format!("name: ext\nruntime: external\n{head}nodes:\n{nodes}{WORKLOAD}")
}

const PAIR: &str = "  alice:
    implementation: lnd
    rpc: 10.0.0.1:10009
    tls_cert: /creds/alice/tls.cert
    macaroon: creds/alice.macaroon
  bob:
    implementation: cln
    rpc: bob.example:9736
    ca_cert: /creds/bob/ca.pem
    client_cert: /creds/bob/client.pem
    client_key: ~/bob/client-key.pem
";

fn err(text: &str) -> String {
    parse(Path::new("/scen/x.yaml"), text)
        .unwrap_err()
        .to_string()
}

#[test]
fn external_nodes_give_address_and_credential_paths() {
    let s = parse(Path::new("/scen/x.yaml"), &scenario("", PAIR)).unwrap();
    assert_eq!(s.runtime, RuntimeKind::External);
    let alice = s.nodes[0].external.as_ref().unwrap();
    assert_eq!(alice.rpc_addr, "10.0.0.1:10009");
    let Credentials::Lnd(c) = &alice.credentials else {
        panic!("{alice:?}")
    };
    // Relative to the scenario's directory.
    assert_eq!(c.macaroon, Path::new("/scen/creds/alice.macaroon"));
    let bob = s.nodes[1].external.as_ref().unwrap();
    let Credentials::Cln(c) = &bob.credentials else {
        panic!("{bob:?}")
    };
    assert!(c.client_key.ends_with("bob/client-key.pem"));
    assert!(!c.client_key.starts_with("~"));
    assert!(s.channels.is_empty());
}

#[test]
fn secrets_missing_fields_and_other_runtimes_are_refused() {
    let literal = PAIR.replace("creds/alice.macaroon", &"0a".repeat(40));
    assert!(err(&scenario("", &literal)).contains("the secret itself"));
    let no_mac = PAIR.replace("    macaroon: creds/alice.macaroon\n", "");
    assert!(err(&scenario("", &no_mac)).contains("has no macaroon"));
    let unset = PAIR.replace("creds/alice.macaroon", "$LNBENCH_UNSET_VARIABLE_FOR_TEST");
    assert!(err(&scenario("", &unset)).contains("not set"));
    let with_channel =
        format!("{PAIR}channels:\n  - {{ from: alice, to: bob, capacity_sat: 100000 }}\n");
    let local = scenario("chain:\n  implementation: bitcoind\n", &with_channel)
        .replace("runtime: external", "runtime: local");
    assert!(err(&local).contains("only runtime: external takes"));
    let no_nodes = format!("name: ext\nruntime: external\n{WORKLOAD}");
    assert!(err(&no_nodes).contains("missing field `nodes`"));
    let chain = scenario("chain:\n  implementation: btcd\n", PAIR);
    assert!(err(&chain).contains("starts no chain"));
    let image = PAIR.replace(
        "    rpc: 10.0.0.1:10009\n",
        "    rpc: 10.0.0.1:10009\n    image: x\n",
    );
    assert!(err(&scenario("", &image)).contains("starts no node"));
}

#[test]
fn mainnet_needs_both_caps_that_cover_the_run() {
    let allow = |caps: &str| scenario(&format!("external:\n  allow_mainnet: true\n{caps}"), PAIR);
    assert!(err(&allow("")).contains("without both caps"));
    assert!(
        err(&allow(
            "  max_payment_msat: 500\n  max_total_msat: 1000000\n"
        ))
        .contains("above max_payment_msat")
    );
    // 100 payments of 1000 msat are 100000 msat.
    assert!(
        err(&allow(
            "  max_payment_msat: 1000\n  max_total_msat: 99999\n"
        ))
        .contains("above max_total_msat")
    );
    let s = parse(
        Path::new("/scen/x.yaml"),
        &allow("  max_payment_msat: 1000\n  max_total_msat: 100000\n"),
    )
    .unwrap();
    let e = s.external.unwrap();
    assert!(e.allow_mainnet);
    assert_eq!(e.max_total_msat, Some(100_000));
}

#[test]
fn sim_ln_node_files_give_the_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let bob = format!("02{}", "ab".repeat(32));
    let sim = serde_json::json!({"nodes": [
            {"id": "alice", "address": "https://127.0.0.1:10011",
             "macaroon": "alice/admin.macaroon", "cert": "/abs/tls.cert"},
            {"id": bob, "address": "localhost:10013", "ca_cert": "/c/ca.pem",
             "client_cert": "/c/client.pem", "client_key": "/c/client-key.pem"}
        ], "activity": [{"source": "alice", "destination": "x", "interval_secs": 1, "amount_msat": 1}]});
    std::fs::write(dir.path().join("sim.json"), sim.to_string()).unwrap();
    let text = format!(
        "name: ext\nruntime: external\nexternal:\n  nodes_file: sim.json\n{}",
        WORKLOAD.replace("receiver: bob", &format!("receiver: {bob}"))
    );
    let s = parse(&dir.path().join("x.yaml"), &text).unwrap();
    assert_eq!(s.nodes.len(), 2);
    let alice = s.nodes[0].external.as_ref().unwrap();
    assert_eq!(alice.rpc_addr, "127.0.0.1:10011");
    assert_eq!(alice.pubkey, None);
    let Credentials::Lnd(c) = &alice.credentials else {
        panic!()
    };
    assert_eq!(c.macaroon, dir.path().join("alice/admin.macaroon"));
    let b = &s.nodes[1];
    assert_eq!(b.implementation, crate::node::Implementation::Cln);
    assert_eq!(
        b.external.as_ref().unwrap().pubkey.as_deref(),
        Some(bob.as_str())
    );
    // Without runtime: external, a nodes file is refused.
    let local = text.replace("runtime: external", "runtime: local");
    assert!(parse(&dir.path().join("x.yaml"), &local).is_err());
}
