//! A structure-aware mutation fuzzer for scenario files, shared by the bounded CI test
//! (`tests/fuzz_scenarios.rs`) and the long run (`examples/fuzz_scenarios.rs`). Seeds
//! are the shipped scenarios and the test fixtures; each case mutates one seed a few
//! times (YAML-aware edits: numbers swapped for extremes, values for other types,
//! lines duplicated, dropped or moved, keys renamed, deep nesting; plus raw byte flips,
//! inserts and cuts) and hands it to `scenario::parse`. A case fails when parsing
//! panics; an error must say where (`path:line:col`) unless the YAML parser had no
//! position to give (counted apart).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::path::{Path, PathBuf};

/// The seed files: every scenario shipped and every fixture, with their text.
pub fn seeds(root: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for dir in [
        "scenarios",
        "tests/fixtures/scenarios/valid",
        "tests/fixtures/scenarios/invalid",
        "tests/fixtures/scenarios/env",
    ] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        files.sort();
        for path in files
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        {
            if let Ok(text) = std::fs::read_to_string(&path) {
                out.push((path, text));
            }
        }
    }
    out
}

/// Values that break assumptions: extremes, wrong types, odd strings.
const NASTY: &[&str] = &[
    "0",
    "-1",
    "1e308",
    "-1e308",
    "NaN",
    ".inf",
    "18446744073709551616",
    "4294967296",
    "99999999999999999999999",
    "0.0000001",
    "\"\"",
    "~",
    "null",
    "[]",
    "{}",
    "true",
    "400000000000y",
    "1ns",
    "0s",
    "-5m",
    "'../../etc'",
    "\"a\\u0000b\"",
    "&a [*a]",
    "!!binary aGk=",
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
    "{a: {a: {a: {a: {a: {a: {a: {a: {a: {a: 1}}}}}}}}}}",
    "\u{202e}evil",
    "💥",
];

/// One mutated text from `seed`.
pub fn mutate(seed: &str, rng: &mut StdRng) -> String {
    let mut text = seed.to_string();
    for _ in 0..rng.random_range(1..=4) {
        text = match rng.random_range(0..10) {
            0..=2 => replace_value(&text, rng),
            3 => duplicate_line(&text, rng),
            4 => drop_line(&text, rng),
            5 => move_line(&text, rng),
            6 => rename_key(&text, rng),
            7 => flip_bytes(&text, rng),
            8 => insert_bytes(&text, rng),
            _ => cut(&text, rng),
        };
    }
    text
}

fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_string).collect()
}

fn pick<T>(items: &[T], rng: &mut StdRng) -> Option<usize> {
    (!items.is_empty()).then(|| rng.random_range(0..items.len()))
}

/// The value after `key:` on a line, swapped for a nasty one (or a number's digits for
/// an extreme).
fn replace_value(text: &str, rng: &mut StdRng) -> String {
    let mut ls = lines(text);
    let candidates: Vec<usize> = (0..ls.len()).filter(|&i| ls[i].contains(": ")).collect();
    let Some(k) = pick(&candidates, rng) else {
        return text.to_string();
    };
    let i = candidates[k];
    let at = ls[i].find(": ").unwrap_or(0) + 2;
    let nasty = NASTY[rng.random_range(0..NASTY.len())];
    ls[i] = format!("{}{nasty}", &ls[i][..at]);
    ls.join("\n")
}

fn duplicate_line(text: &str, rng: &mut StdRng) -> String {
    let mut ls = lines(text);
    if let Some(i) = pick(&ls, rng) {
        let line = ls[i].clone();
        ls.insert(i, line);
    }
    ls.join("\n")
}

fn drop_line(text: &str, rng: &mut StdRng) -> String {
    let mut ls = lines(text);
    if let Some(i) = pick(&ls, rng) {
        ls.remove(i);
    }
    ls.join("\n")
}

fn move_line(text: &str, rng: &mut StdRng) -> String {
    let mut ls = lines(text);
    if let (Some(i), Some(j)) = (pick(&ls, rng), pick(&ls, rng)) {
        let line = ls.remove(i);
        ls.insert(j.min(ls.len()), line);
    }
    ls.join("\n")
}

fn rename_key(text: &str, rng: &mut StdRng) -> String {
    const KEYS: &[&str] = &[
        "name",
        "nodes",
        "channels",
        "workload",
        "sweep",
        "chain",
        "replicas",
        "count",
        "through",
        "rate",
        "hold",
        "ramp",
        "stop",
        "payments",
        "duration",
        "thresholds",
        "after_load",
        "restart",
        "implementation",
        "args",
        "binary",
        "image",
        "x",
    ];
    let mut ls = lines(text);
    let candidates: Vec<usize> = (0..ls.len()).filter(|&i| ls[i].contains(':')).collect();
    if let Some(k) = pick(&candidates, rng) {
        let i = candidates[k];
        let indent = ls[i].len() - ls[i].trim_start().len();
        let rest = ls[i].split_once(':').map_or("", |(_, r)| r).to_string();
        let key = KEYS[rng.random_range(0..KEYS.len())];
        ls[i] = format!("{}{key}:{rest}", " ".repeat(indent));
    }
    ls.join("\n")
}

fn flip_bytes(text: &str, rng: &mut StdRng) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..rng.random_range(1..=8) {
        if let Some(i) = pick(&bytes, rng) {
            bytes[i] = rng.random();
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn insert_bytes(text: &str, rng: &mut StdRng) -> String {
    const PIECES: &[&str] = &[
        "\t",
        ":",
        "- ",
        "{",
        "}",
        "[",
        "]",
        "#",
        "'",
        "\"",
        "\n  ",
        "&x",
        "*x",
        "? ",
        "|\n",
        "%YAML 1.2\n---\n",
    ];
    let mut s = text.to_string();
    let mut at = rng.random_range(0..=s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    s.insert_str(at, PIECES[rng.random_range(0..PIECES.len())]);
    s
}

fn cut(text: &str, rng: &mut StdRng) -> String {
    let mut a = rng.random_range(0..=text.len());
    let mut b = rng.random_range(0..=text.len());
    if a > b {
        std::mem::swap(&mut a, &mut b);
    }
    while !text.is_char_boundary(a) {
        a -= 1;
    }
    while !text.is_char_boundary(b) {
        b -= 1;
    }
    format!("{}{}", &text[..a], &text[b..])
}

/// What a run of the fuzzer saw.
#[derive(Debug, Default)]
pub struct Tally {
    pub cases: u64,
    pub valid: u64,
    pub errors: u64,
    /// Errors without `path:line:col` (the YAML parser gave no position).
    pub without_location: u64,
    /// Inputs whose parse panicked (with the panic message).
    pub panics: Vec<(String, String)>,
    /// The slowest single parse.
    pub slowest: std::time::Duration,
}

/// Runs `cases` mutated inputs from `seeds` with the random seed `seed`; stops early
/// at the deadline when one is given.
pub fn run(
    seeds: &[(PathBuf, String)],
    cases: u64,
    seed: u64,
    deadline: Option<std::time::Instant>,
) -> Tally {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut tally = Tally::default();
    let path = Path::new("fuzz.yaml");
    let located = regex_free_location(path);
    for _ in 0..cases {
        if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            break;
        }
        let (_, text) = &seeds[rng.random_range(0..seeds.len())];
        let input = mutate(text, &mut rng);
        let started = std::time::Instant::now();
        let outcome = std::panic::catch_unwind(|| {
            lnbench_tui::scenario::parse(path, &input, lnbench_tui::runtime::capabilities)
        });
        tally.slowest = tally.slowest.max(started.elapsed());
        tally.cases += 1;
        match outcome {
            Ok(Ok(_)) => tally.valid += 1,
            Ok(Err(e)) => {
                tally.errors += 1;
                if !located(&e.to_string()) {
                    tally.without_location += 1;
                }
            }
            Err(panic) => {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                tally.panics.push((input, message));
            }
        }
    }
    tally
}

/// `fuzz.yaml:12:7: ...`: the message starts with the path, a line and a column.
fn regex_free_location(path: &Path) -> impl Fn(&str) -> bool {
    let prefix = format!("{}:", path.display());
    move |message: &str| {
        let Some(rest) = message.strip_prefix(&prefix) else {
            return false;
        };
        let mut parts = rest.splitn(3, ':');
        let line = parts.next().unwrap_or("");
        let col = parts.next().unwrap_or("");
        !line.is_empty()
            && line.chars().all(|c| c.is_ascii_digit())
            && !col.is_empty()
            && col.chars().all(|c| c.is_ascii_digit())
    }
}
