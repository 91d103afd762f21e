//! Podcast streaming end to end (`kind: stream`), through the real binary on real LND
//! nodes and a real btcd chain: two listeners stream ticks split across two
//! recipients; every tick ok, every recipient got its splits, each recipient's node
//! saw the podcast record (read back from its invoices), and the nodes' ledgers
//! reconcile with the tool's counts split by split. Then the same with Core Lightning
//! listeners (xkeysend's `extratlvs`) paying LND recipients on Bitcoin Core.

use crate::common::scenario_run::Finished;
use crate::common::*;

const TICKS: u64 = 20;

#[test]
fn listeners_stream_split_ticks_that_recipients_receive_with_the_podcast_record() {
    require_node_binaries();
    streams("btcd", "lnd");
}

#[test]
fn core_lightning_listeners_send_the_podcast_record_too() {
    let test = "core_lightning_listeners_send_the_podcast_record_too";
    if built_on_bitcoind(test, "lightningd", CLN_BUILD) {
        streams("bitcoind", "cln");
    }
}

/// Listeners of `listener` stream to two LND recipients on `chain`.
fn streams(chain: &str, listener: &str) {
    let scenario = format!(
        "\
name: e2e-stream
runtime: local
chain:
  implementation: {chain}
nodes:
  listener:
    implementation: {listener}
    replicas: 2
  host:
    implementation: lnd
  guest:
    implementation: lnd
channels:
  - {{ from: listener, to: host, capacity_sat: 2000000 }}
  - {{ from: listener, to: guest, capacity_sat: 2000000 }}
workload:
  kind: stream
  senders: [listener]
  recipients:
    - {{ node: host, split: 70 }}
    - {{ node: guest, split: 30 }}
  amount_msat: 10000
  concurrency: 2
  stop:
    payments: {TICKS}
  payment_timeout: 30s
"
    );
    let run = Finished::run(&scenario);
    assert_eq!(run.status.code(), Some(0), "{}", run.log);
    let text = std::fs::read_to_string(run.report_dir().join("report.json")).expect("report");
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_matches_schema(&report);
    assert_eq!(report["workload"]["kind"], "stream");
    let results = &report["results"];
    assert_eq!(results["ok"], TICKS, "{results:#}");
    let stream = &results["stream"];
    assert_eq!(stream["ticks"], TICKS, "{stream:#}");
    assert_eq!(stream["ticks_ok"], TICKS, "{stream:#}");
    assert_eq!(stream["splits_ok"], 2 * TICKS, "{stream:#}");
    let recipients = stream["recipients"].as_array().expect("recipients");
    let shares: Vec<(&str, u64)> = (recipients.iter())
        .map(|r| {
            (
                r["recipient"].as_str().unwrap(),
                r["amount_msat"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(shares, [("host", 7_000), ("guest", 3_000)]);
    for r in recipients {
        assert_eq!(r["ok"], TICKS, "{r:#}");
        // The recipient's own node: a settled keysend with the podcast record per split.
        assert_eq!(r["records_received"], TICKS, "{r:#}");
    }
    // Split by split: the senders' ledgers and the recipients' settled keysends.
    assert_reconciled(&report);
    let receivers = report["reconciliation"]["receivers"].as_array().unwrap();
    for r in receivers {
        assert_eq!(r["node_received"], TICKS, "{r:#}");
    }
}
