//! The scenario fuzzer's long run: mutated scenario files (tests/common/fuzz.rs) parsed
//! until a case count or a time is reached; prints what it saw and exits 1 on a panic
//! or an error without a location.
//!
//!     cargo run --release --example fuzz_scenarios -- --seconds 600 [--cases N] [--seed S]

#[path = "../tests/common/fuzz.rs"]
mod fuzz;

use std::time::{Duration, Instant};

fn flag(name: &str) -> Option<u64> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == name)?;
    args.get(at + 1).and_then(|v| v.parse().ok())
}

fn main() -> std::process::ExitCode {
    let seconds = flag("--seconds").unwrap_or(60);
    let cases = flag("--cases").unwrap_or(u64::MAX);
    let seed = flag("--seed").unwrap_or(1);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let seeds = fuzz::seeds(root);
    std::panic::set_hook(Box::new(|_| {}));
    let started = Instant::now();
    let tally = fuzz::run(
        &seeds,
        cases,
        seed,
        Some(started + Duration::from_secs(seconds)),
    );
    let _ = std::panic::take_hook();
    println!(
        "{} cases from {} seed files in {:.1} s (seed {seed}): {} valid, {} errors ({} without a location), {} panics; slowest parse {:.1} ms",
        tally.cases,
        seeds.len(),
        started.elapsed().as_secs_f64(),
        tally.valid,
        tally.errors,
        tally.without_location,
        tally.panics.len(),
        tally.slowest.as_secs_f64() * 1000.0
    );
    for (input, message) in tally.panics.iter().take(3) {
        println!("--- panic: {message}\n{input}\n---");
    }
    if tally.panics.is_empty() && tally.without_location == 0 {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}
