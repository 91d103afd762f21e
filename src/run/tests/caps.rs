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

/// A load the caps stopped says so in report.json: the caps, what was spent, and
/// that the cap was reached (the load stopped there, not at its payment count).
#[tokio::test]
async fn a_load_stopped_by_the_cap_says_so_in_report_json() {
    let dirs = Dirs::new();
    let runtimes = fakes(|_| Ok(quick()));
    // 40 payments of 1000 msat asked, 10,000 msat allowed in all.
    let mut s = scenario("");
    s.external = Some(ExternalSettings {
        allow_mainnet: true,
        max_payment_msat: Some(1_100),
        max_total_msat: Some(10_000),
        nodes_file: None,
    });
    execute_with(s, &dirs.opts, &runtimes, Signals::manual())
        .await
        .unwrap();
    let report = dirs.report("");
    let caps = &report["mainnet_caps"];
    assert_eq!(caps["cap_reached"], true, "{report}");
    assert_eq!(u(&caps["max_payment_msat"]), 1_100);
    assert_eq!(u(&caps["max_total_msat"]), 10_000);
    let spent = u(&caps["paid_msat"]) + u(&caps["unknown_msat"]);
    assert!(spent <= 10_000, "{caps}");
    assert!(u(&report["results"]["ok"]) < 40, "{report}");
}
