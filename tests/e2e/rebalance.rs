//! Circular rebalancing end to end, through the real binary on real LND nodes on btcd:
//! alice drains her small channel to bob with keysends while paying herself around
//! alice -> carol -> bob -> alice whenever her balance toward bob is low. The report
//! must show the rebalances that moved liquidity and what they cost, and the nodes'
//! ledgers must still match the tool's counts once the payments to herself are
//! taken out of alice's.

use crate::common::scenario_run::Finished;
use crate::common::*;

/// 100 000 sat per rebalance, due every 3 s while alice has less than 150 000 sat
/// toward bob; honest keysends of 10 000 sat at 5 a second for 30 s.
const SCENARIO: &str = include_str!("../fixtures/scenarios/e2e/rebalance.yaml");

#[test]
fn a_node_refills_its_drained_channel_around_a_circle_and_the_ledgers_still_match() {
    require_node_binaries();
    let run = Finished::run(SCENARIO);
    assert_eq!(run.status.code(), Some(0), "{}", run.log);
    let report = run.report_json();
    assert_matches_schema(&report);
    // Without taking the rebalances out of alice's ledger, her succeeded payments
    // would exceed the tool's and bob's settled ones would not match.
    assert_reconciled(&report);
    let r = &report["results"]["rebalance"];
    eprintln!("rebalance: {r:#}");
    let n = |v: &serde_json::Value| v.as_u64().unwrap_or_else(|| panic!("{v} in {r:#}"));
    let (sent, ok) = (n(&r["sent"]), n(&r["succeeded"]));
    assert!(ok >= 2, "at least two rebalances moved liquidity: {r:#}");
    assert_eq!(n(&r["moved_msat"]), ok * 100_000_000, "{r:#}");
    // carol and bob each charge LND's default policy (1 sat and 1 ppm) to forward.
    let fees = n(&r["fees_paid_msat"]);
    assert!(
        (ok * 2_000..=ok * 50_000).contains(&fees),
        "two hops' fees per rebalance: {fees} msat for {ok}"
    );
    let tries = r["tries"].as_array().expect("tries");
    assert_eq!(tries.len() as u64, sent, "{r:#}");
    for t in tries {
        let balance = n(&t["balance_sat"]);
        assert!(balance < 150_000, "paid only below the threshold: {t}");
        if t["result"] == "succeeded" {
            assert!(n(&t["fee_msat"]) <= 50_000, "within max_fee_ppm: {t}");
        }
    }
    assert_eq!(n(&r["ticks"]), sent + n(&r["skipped"]), "{r:#}");
    // Ticks every 3 s over a 30 s load: 9 or 10, fewer if a payment outlasted a tick.
    assert!((5..=10).contains(&n(&r["ticks"])), "{r:#}");
    // The progress lines show them live.
    assert!(
        run.log.contains(" ok · ") && run.log.contains("msat fees"),
        "the progress lines show the rebalances: {}",
        run.log
    );
    assert!(run.log.contains("rebalances "), "{}", run.log);
    let html = std::fs::read_to_string(run.report_dir().join("report.html")).expect("report.html");
    assert!(
        html.contains("<h2>Rebalancing</h2>"),
        "the HTML report has the section"
    );
    assert!(html.contains("alice paid itself"), "and its line");
}
