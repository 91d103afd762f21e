//! The `compare` fuzzer, bounded for every CI run (see tests/common/fuzz_compare.rs; the
//! long run is `cargo run --release --example fuzz_compare -- --seconds N`).

mod common;

#[path = "common/fuzz_compare.rs"]
mod fuzz_compare;

#[test]
fn mutated_reports_never_panic_compare_and_refusals_name_the_file() {
    let seeds = fuzz_compare::seeds(&common::repo_file(""));
    assert!(seeds.len() >= 4, "report fixtures found: {}", seeds.len());
    std::panic::set_hook(Box::new(|_| {}));
    let tally = fuzz_compare::run(&seeds, 3_000, 0xc0, None);
    let _ = std::panic::take_hook();
    if let Some((input, message)) = tally.panics.first() {
        // Kept for `lnbench-tui compare <a fixture> <this file> --out DIR` to replay.
        let kept =
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-compare-panic.json");
        std::fs::write(&kept, input).unwrap();
        panic!(
            "{} of {} cases panicked; first panic: {message}; its input: {}",
            tally.panics.len(),
            tally.cases,
            kept.display()
        );
    }
    assert_eq!(tally.cases, 3_000);
    assert!(tally.compared > 100 && tally.refused > 100, "{tally:?}");
    assert_eq!(tally.unnamed, 0, "{tally:?}");
}
