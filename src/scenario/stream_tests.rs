//! `kind: stream` in scenario files: recipients and their shares, and the located
//! errors for what cannot be streamed.

use super::tests::{parse, parse_error};
use std::path::Path;

/// Two listeners streaming to three recipients; tests swap parts of it.
const STREAM: &str = "\
name: t
nodes:
  listener:
    implementation: lnd
    replicas: 2
  hub:
    implementation: lnd
  host:
    implementation: lnd
  guest:
    implementation: lnd
  app:
    implementation: lnd
channels:
  - { from: listener, to: hub, capacity_sat: 1000000 }
  - { from: hub, to: host, capacity_sat: 1000000 }
  - { from: hub, to: guest, capacity_sat: 1000000 }
  - { from: hub, to: app, capacity_sat: 1000000 }
workload:
  kind: stream
  senders: [listener]
  recipients:
    - { node: host, split: 50 }
    - { node: guest, split: 30 }
    - { node: app, split: 20 }
  amount_msat: 10000
  rate:
    hold: { rate: 2, duration: 30s }
  stop:
    duration: 30s
";

fn with(old: &str, new: &str) -> String {
    assert!(STREAM.contains(old), "STREAM has no {old:?}");
    STREAM.replacen(old, new, 1)
}

#[test]
fn recipients_get_their_share_of_each_tick() {
    let s = parse(Path::new("t.yaml"), STREAM).unwrap();
    let w = &s.workload;
    assert_eq!(w.kind, super::PaymentKind::Stream);
    assert_eq!(w.senders, ["listener-1", "listener-2"]);
    assert_eq!(w.receivers, ["host", "guest", "app"]);
    let splits = &w.stream.as_ref().unwrap().splits;
    let shares: Vec<_> = splits
        .iter()
        .map(|s| (s.recipient.as_str(), s.amount_msat))
        .collect();
    assert_eq!(shares, [("host", 5_000), ("guest", 3_000), ("app", 2_000)]);
}

#[test]
fn a_share_below_one_msat_is_a_located_error() {
    let err = parse_error(&with("amount_msat: 10000", "amount_msat: 4"));
    // 4 msat * 20 / 100 rounds down to 0 for app (line 25, its split at column 27).
    assert!(err.starts_with("t.yaml:25:27: "), "{err}");
    assert!(err.contains("less than 1 msat"), "{err}");
    assert!(err.contains("amount_msat: to at least 5"), "{err}");
}

#[test]
fn a_split_of_zero_and_a_sender_recipient_are_located_errors() {
    let zero = parse_error(&with("split: 30", "split: 0"));
    assert!(zero.starts_with("t.yaml:24:29: "), "{zero}");
    assert!(zero.contains("split of guest is 0"), "{zero}");
    let both = parse_error(&with("node: app,", "node: listener,"));
    assert!(both.contains("both a sender and a recipient"), "{both}");
}

#[test]
fn stream_needs_recipients_and_no_receiver() {
    let none = parse_error(&with(
        "  recipients:\n    - { node: host, split: 50 }\n    - { node: guest, split: 30 }\n    - { node: app, split: 20 }\n",
        "",
    ));
    assert!(none.contains("kind: stream without recipients:"), "{none}");
    let receiver = parse_error(&with(
        "  amount_msat: 10000",
        "  receiver: host\n  amount_msat: 10000",
    ));
    assert!(
        receiver.contains("pays recipients:, not one receiver:"),
        "{receiver}"
    );
    let keysend = parse_error(&with("kind: stream", "kind: keysend\n  receiver: host"));
    assert!(
        keysend.contains("recipients: is for kind: stream"),
        "{keysend}"
    );
}

#[test]
fn a_sender_that_cannot_send_the_record_is_refused_with_why() {
    let eclair = with(
        "nodes:\n  listener:\n    implementation: lnd",
        "chain:\n  implementation: bitcoind\nnodes:\n  listener:\n    implementation: eclair",
    );
    let err = parse_error(&eclair);
    // At listener under senders: (line 23 once chain: adds two lines).
    assert!(err.starts_with("t.yaml:23:13: "), "{err}");
    assert!(err.contains("sender listener is eclair"), "{err}");
    assert!(err.contains("no parameter for custom TLV records"), "{err}");
    let ldk = with(
        "  app:\n    implementation: lnd",
        "  app:\n    implementation: ldk",
    )
    .replacen("nodes:", "chain:\n  implementation: bitcoind\nnodes:", 1);
    let err = parse_error(&ldk);
    assert!(err.contains("recipient app is ldk"), "{err}");
    // Core Lightning sends the record with xkeysend's extratlvs.
    let cln = with(
        "nodes:\n  listener:\n    implementation: lnd",
        "chain:\n  implementation: bitcoind\nnodes:\n  listener:\n    implementation: cln",
    );
    crate::scenario::tests::parse(std::path::Path::new("t.yaml"), &cln)
        .unwrap_or_else(|e| panic!("a CLN listener streams: {e}"));
}

#[test]
fn a_recipient_without_a_channel_path_is_refused() {
    let err = parse_error(&with(
        "  - { from: hub, to: app, capacity_sat: 1000000 }\n",
        "",
    ));
    assert!(err.contains("no channel path to recipient app"), "{err}");
}
