//! A structure-aware mutation fuzzer for `compare`'s inputs, shared by the bounded CI
//! test (`tests/fuzz_compare.rs`) and the long run (`examples/fuzz_compare.rs`). Seeds
//! are the report.json fixtures; each case mutates one (JSON-aware edits: numbers swapped
//! for extremes or other types, strings for odd ones, keys dropped, arrays emptied or
//! grown, values nested; plus raw byte flips and cuts), reads it as `compare` does, and,
//! when it reads, compares it with an untouched baseline and renders the markdown and
//! the HTML. A case fails when any of that panics; a refused input must name its file.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The report.json fixtures, with their text.
pub fn seeds(root: &Path) -> Vec<(PathBuf, String)> {
    let dir = root.join("tests/fixtures/reports");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    dirs.sort();
    dirs.into_iter()
        .filter_map(|d| {
            let path = d.join("report.json");
            std::fs::read_to_string(&path).ok().map(|t| (path, t))
        })
        .collect()
}

fn odd_value(rng: &mut StdRng) -> Value {
    match rng.random_range(0..12) {
        0 => Value::Null,
        1 => Value::from(-1),
        2 => Value::from(0),
        3 => Value::from(u64::MAX),
        4 => Value::from(i64::MIN),
        5 => Value::from(1e308),
        6 => Value::from(-1e-308),
        7 => Value::from(""),
        8 => Value::from("\u{202e}<script>x</script>{{ y }}"),
        9 => Value::Array(Vec::new()),
        10 => Value::Object(serde_json::Map::new()),
        _ => Value::from(true),
    }
}

/// Every path (as indexes into the tree) of `v`, up to a limit.
fn paths(v: &Value, prefix: &mut Vec<PathStep>, out: &mut Vec<Vec<PathStep>>) {
    if out.len() > 4000 {
        return;
    }
    out.push(prefix.clone());
    match v {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                prefix.push(PathStep::Index(i));
                paths(item, prefix, out);
                prefix.pop();
            }
        }
        Value::Object(map) => {
            for (k, item) in map {
                prefix.push(PathStep::Key(k.clone()));
                paths(item, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

#[derive(Clone, Debug)]
enum PathStep {
    Index(usize),
    Key(String),
}

fn at<'a>(v: &'a mut Value, path: &[PathStep]) -> Option<&'a mut Value> {
    let mut cur = v;
    for step in path {
        cur = match (step, cur) {
            (PathStep::Index(i), Value::Array(items)) => items.get_mut(*i)?,
            (PathStep::Key(k), Value::Object(map)) => map.get_mut(k)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// One JSON-aware edit of `v`.
fn mutate_value(v: &mut Value, rng: &mut StdRng) {
    let mut all = Vec::new();
    paths(v, &mut Vec::new(), &mut all);
    // Never the root's schema_version alone: most edits should reach the shape checks.
    let path = all[rng.random_range(0..all.len())].clone();
    let Some(target) = at(v, &path) else {
        return;
    };
    match rng.random_range(0..6) {
        0 | 1 => *target = odd_value(rng),
        2 => {
            if let Value::Object(map) = target
                && let Some(k) = map
                    .keys()
                    .nth(rng.random_range(0..map.len().max(1)))
                    .cloned()
            {
                map.remove(&k);
            }
        }
        3 => {
            if let Value::Array(items) = target {
                if items.is_empty() || rng.random_bool(0.5) {
                    items.clear();
                } else {
                    let copy = items[rng.random_range(0..items.len())].clone();
                    for _ in 0..rng.random_range(1..50) {
                        items.push(copy.clone());
                    }
                }
            }
        }
        4 => {
            if let Value::Number(n) = target {
                let f = n.as_f64().unwrap_or(0.0);
                *target = Value::from(-f * 1e6);
            }
        }
        _ => *target = Value::Array(vec![target.clone(), target.clone()]),
    }
}

/// A mutated report text.
pub fn mutate(seed: &str, rng: &mut StdRng) -> String {
    if rng.random_range(0..10) == 0 {
        // Raw bytes: a flip or a cut somewhere.
        let mut bytes = seed.as_bytes().to_vec();
        let i = rng.random_range(0..bytes.len());
        if rng.random_bool(0.5) {
            bytes[i] = rng.random();
        } else {
            bytes.truncate(i);
        }
        return String::from_utf8_lossy(&bytes).into_owned();
    }
    let mut v: Value = serde_json::from_str(seed).expect("seed is JSON");
    for _ in 0..rng.random_range(1..4) {
        mutate_value(&mut v, rng);
    }
    serde_json::to_string_pretty(&v).unwrap()
}

/// What a run of the fuzzer saw.
#[derive(Debug, Default)]
pub struct Tally {
    pub cases: u64,
    /// Inputs compare read and compared.
    pub compared: u64,
    /// Inputs it refused.
    pub refused: u64,
    /// Refusals whose message does not name the file.
    pub unnamed: u64,
    pub panics: Vec<(String, String)>,
}

/// Runs `cases` mutated reports from `seeds` (random seed `seed`), each against the
/// first seed as baseline; stops early at the deadline when one is given.
pub fn run(
    seeds: &[(PathBuf, String)],
    cases: u64,
    seed: u64,
    deadline: Option<std::time::Instant>,
) -> Tally {
    use lnbench_tui::report::compare::{Comparison, input};
    let mut rng = StdRng::seed_from_u64(seed);
    let mut tally = Tally::default();
    let baseline = input::from_text(seeds[0].0.clone(), &seeds[0].1).expect("baseline reads");
    let path = PathBuf::from("fuzz/report.json");
    for _ in 0..cases {
        if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            break;
        }
        let (_, text) = &seeds[rng.random_range(0..seeds.len())];
        let text = mutate(text, &mut rng);
        tally.cases += 1;
        let outcome = std::panic::catch_unwind(|| match input::from_text(path.clone(), &text) {
            Ok(other) => {
                let runs = [baseline.clone(), other];
                let comparison = Comparison::of(&runs, 5.0);
                let _ = comparison.markdown();
                let _ = comparison.html();
                Ok(())
            }
            Err(e) => Err(e.to_string()),
        });
        match outcome {
            Ok(Ok(())) => tally.compared += 1,
            Ok(Err(message)) => {
                tally.refused += 1;
                if !message.contains("fuzz/report.json") {
                    tally.unnamed += 1;
                }
            }
            Err(panic) => {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                tally.panics.push((text, message));
            }
        }
    }
    tally
}
