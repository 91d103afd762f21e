//! The scenario fuzzer, bounded for every CI run (see tests/common/fuzz.rs; the long run
//! is `cargo run --release --example fuzz_scenarios -- --seconds N`).

mod common;

use common::fuzz;

#[test]
fn mutated_scenarios_never_panic_and_errors_say_where() {
    let seeds = fuzz::seeds(&common::repo_file(""));
    assert!(seeds.len() > 50, "seed files found: {}", seeds.len());
    // Quiet the default hook: caught panics are reported below, with their input.
    std::panic::set_hook(Box::new(|_| {}));
    let tally = fuzz::run(&seeds, 20_000, 0x5eed, None);
    let _ = std::panic::take_hook();
    assert!(
        tally.panics.is_empty(),
        "{} of {} cases panicked; first input:\n{}\npanic: {}",
        tally.panics.len(),
        tally.cases,
        tally.panics[0].0,
        tally.panics[0].1
    );
    assert_eq!(tally.cases, 20_000);
    assert!(tally.errors > 1_000 && tally.valid > 100, "{tally:?}");
    assert_eq!(tally.without_location, 0, "{tally:?}");
}
