//! The `compare` fuzzer's long run: mutated report.json files (tests/common/fuzz_compare.rs)
//! read and compared until a case count or a time is reached; prints what it saw and
//! exits 1 on a panic or on a refusal that does not name its file.
//!
//!     cargo run --release --example fuzz_compare -- --seconds 600 [--cases N] [--seed S]

#[path = "../tests/common/fuzz_compare.rs"]
mod fuzz_compare;

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
    let seeds = fuzz_compare::seeds(root);
    std::panic::set_hook(Box::new(|_| {}));
    let started = Instant::now();
    let tally = fuzz_compare::run(
        &seeds,
        cases,
        seed,
        Some(started + Duration::from_secs(seconds)),
    );
    let _ = std::panic::take_hook();
    println!(
        "{} cases from {} report files in {:.1} s (seed {seed}): {} compared, {} refused ({} without the file's name), {} panics",
        tally.cases,
        seeds.len(),
        started.elapsed().as_secs_f64(),
        tally.compared,
        tally.refused,
        tally.unnamed,
        tally.panics.len(),
    );
    for (input, message) in tally.panics.iter().take(3) {
        println!("--- panic: {message} (input of {} bytes)", input.len());
    }
    if tally.panics.is_empty() && tally.unnamed == 0 {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}
