//! `workload: max_parts:` (multi-part payments) and `stop: liquidity_failures:`
//! (draining channels): parsed values and located errors.

use crate::scenario::tests::{BASE, parse, parse_error};
use std::path::Path;

/// BASE paying invoices of `amount_msat` over four 1 M sat channels alice -> bob,
/// with `extra` appended under `workload:`.
fn mpp(amount_msat: u64, extra: &str) -> String {
    BASE.replace(
        "    capacity_sat: 1000000\n",
        "    capacity_sat: 1000000\n    count: 4\n",
    )
    .replace("kind: keysend", "kind: invoice")
    .replace(
        "  concurrency: 2\n",
        &format!("  concurrency: 2\n  amount_msat: {amount_msat}\n{extra}"),
    )
}

#[test]
fn max_parts_lets_an_invoice_exceed_one_channel_up_to_their_sum() {
    let s = parse(Path::new("t.yaml"), &mpp(2_500_000_000, "  max_parts: 8\n")).unwrap();
    assert_eq!(s.workload.max_parts, Some(8));
    assert_eq!(s.workload.amount_msat, 2_500_000_000);
    let plain = parse(Path::new("t.yaml"), BASE).unwrap();
    assert_eq!(plain.workload.max_parts, None);
}

#[test]
fn max_parts_zero_is_a_located_error() {
    let text = parse_error(&mpp(2_500_000_000, "  max_parts: 0\n"));
    assert!(text.starts_with("t.yaml:18:14: max_parts is 0"), "{text}");
    assert!(text.contains("hint: write max_parts: 1 or more"), "{text}");
}

#[test]
fn an_absurd_max_parts_is_a_located_error() {
    let text = parse_error(&mpp(2_500_000_000, "  max_parts: 100000\n"));
    assert!(
        text.starts_with("t.yaml:18:14: max_parts is 100000, more than 128"),
        "{text}"
    );
}

#[test]
fn max_parts_on_keysend_is_a_located_error() {
    let text =
        parse_error(&mpp(1_000_000, "  max_parts: 4\n").replace("kind: invoice", "kind: keysend"));
    assert!(
        text.starts_with("t.yaml:18:14: max_parts with kind: keysend"),
        "{text}"
    );
}

#[test]
fn an_amount_above_the_senders_channels_together_is_a_located_error() {
    let text = parse_error(&mpp(4_000_000_001, "  max_parts: 16\n"));
    assert!(
        text.starts_with(
            "t.yaml:17:16: amount_msat is 4000000001, more than alice's channels hold together (4000000 sat)"
        ),
        "{text}"
    );
}

#[test]
fn an_amount_above_one_channel_without_max_parts_still_names_the_largest() {
    let text = parse_error(&mpp(2_500_000_000, ""));
    assert!(
        text.contains("more than the largest channel holds"),
        "{text}"
    );
    assert!(
        text.contains("max_parts"),
        "the hint offers max_parts: {text}"
    );
}

#[test]
fn max_parts_with_a_sender_that_is_not_lnd_is_a_located_error() {
    // Core Lightning runs on bitcoind.
    let text = parse_error(
        &mpp(2_500_000_000, "  max_parts: 8\n")
            .replacen("implementation: lnd", "implementation: cln", 1)
            .replacen(
                "nodes:\n",
                "chain:\n  implementation: bitcoind\nnodes:\n",
                1,
            ),
    );
    assert!(
        text.starts_with("t.yaml:20:14: max_parts is set, but sender alice runs cln"),
        "{text}"
    );
    assert!(text.contains("xpay takes no part limit"), "{text}");
}

#[test]
fn an_ldk_sender_takes_max_parts() {
    let ldk = mpp(2_500_000_000, "  max_parts: 8\n")
        .replacen("implementation: lnd", "implementation: ldk", 1)
        .replacen(
            "nodes:\n",
            "chain:\n  implementation: bitcoind\nnodes:\n",
            1,
        );
    assert!(ldk.contains("implementation: ldk"), "{ldk}");
    let s = parse(Path::new("t.yaml"), &ldk).unwrap();
    assert_eq!(s.workload.max_parts, Some(8));
}

#[test]
fn liquidity_failures_stop_the_load_and_zero_is_a_located_error() {
    let drain = BASE.replace(
        "    payments: 10\n",
        "    duration: 1m\n    liquidity_failures: 5\n",
    );
    let s = parse(Path::new("t.yaml"), &drain).unwrap();
    assert_eq!(s.workload.stop.liquidity_failures, Some(5));
    let zero = parse_error(&drain.replace("liquidity_failures: 5", "liquidity_failures: 0"));
    assert!(
        zero.starts_with("t.yaml:18:25: stop liquidity_failures is 0"),
        "{zero}"
    );
}

#[test]
fn liquidity_failures_alone_asks_for_a_bound() {
    let text = parse_error(&BASE.replace("    payments: 10\n", "    liquidity_failures: 5\n"));
    assert!(
        text.contains("stop: sets liquidity_failures: without payments: or duration:"),
        "{text}"
    );
}
