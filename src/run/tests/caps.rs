//! Mainnet caps over a whole run on the fake runtime: the repeats of one run share
//! one spend ledger, so what the nodes report paid over all of them (amounts
//! received plus routing fees) stays within `max_total_msat`.

use super::*;
use crate::scenario::external::ExternalSettings;

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[tokio::test]
async fn repeats_share_one_total() {
    let dirs = Dirs::new();
    let runtimes = fakes(|_| Ok(quick()));
    // Three repeats of 40 payments of 1000 msat (1 msat fee each): 120,120 msat
    // without caps.
    let mut s = scenario("repeat: { count: 3, settle: 0s }\n");
    let total = 100_000;
    s.external = Some(ExternalSettings {
        allow_mainnet: true,
        max_payment_msat: Some(1_100),
        max_total_msat: Some(total),
        nodes_file: None,
    });
    execute_with(s, &dirs.opts, &runtimes, Signals::manual())
        .await
        .unwrap();
    let mut paid = 0;
    let mut ok = 0;
    for label in ["repeat=1", "repeat=2", "repeat=3"] {
        let report = dirs.report(label);
        let r = &report["reconciliation"];
        paid += u(&r["receivers"][0]["received_msat"]) + u(&r["fees_paid_msat"]);
        ok += u(&report["results"]["ok"]);
    }
    assert!(
        paid <= total,
        "the nodes report {paid} msat paid, cap {total}"
    );
    assert!(ok < 120, "{ok} payments made");
    assert!(
        paid + 1_100 > total,
        "stopped at the cap, not before: {paid}"
    );
}
