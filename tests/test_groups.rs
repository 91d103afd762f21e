//! The test groups of `.config/nextest.toml` and the locks in the end-to-end tests'
//! code say the same thing. `cargo nextest run` runs each test in its own process, so a
//! lock in the code keeps nothing apart there: the group does. `cargo test` runs the
//! tests of a binary in one process, where the lock does. A test that takes a lock and
//! is not in its group would run beside the tests it must not meet, under nextest only.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn read(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A file's functions: name and body (the text up to the next function).
fn functions(text: &str) -> Vec<(String, String, bool)> {
    let mut out = Vec::new();
    let starts: Vec<usize> = (text.match_indices("fn ").map(|(i, _)| i))
        .filter(|&i| i == 0 || text[..i].ends_with(' ') || text[..i].ends_with('\n'))
        .collect();
    for (n, &start) in starts.iter().enumerate() {
        let end = starts.get(n + 1).copied().unwrap_or(text.len());
        let rest = &text[start + 3..];
        let Some(name_end) = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')) else {
            continue;
        };
        let name = rest[..name_end].to_string();
        // `#[test]` on one of the lines just before the function.
        let before = &text[..start];
        let head = &before[before.len().saturating_sub(300)..];
        let is_test = (head.rsplit_once("\n}").map_or(head, |(_, h)| h)).contains("#[test]");
        out.push((name, text[start..end].to_string(), is_test));
    }
    out
}

/// The group each end-to-end test's code puts it in, by the lock it takes (itself or
/// through a function of its file that takes it).
fn groups_in_code() -> BTreeMap<String, BTreeSet<String>> {
    let mut groups: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let module = path.file_stem().unwrap().to_str().unwrap().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let locks = [
            ("CLUSTER.lock()", "cluster".to_string()),
            ("killed_runs_turn()", "killed-runs".to_string()),
            ("ENGINE.lock()", "docker-engine".to_string()),
            ("ONE_AT_A_TIME.lock()", module.clone()),
        ];
        let fns = functions(&text);
        let takes = |body: &str| -> Option<String> {
            let direct = |b: &str| (locks.iter()).find(|(l, _)| b.contains(l));
            if let Some((_, g)) = direct(body) {
                return Some(g.clone());
            }
            (fns.iter())
                .filter(|(name, _, test)| !test && body.contains(&format!("{name}(")))
                .find_map(|(_, b, _)| direct(b).map(|(_, g)| g.clone()))
        };
        for (name, body, is_test) in &fns {
            if *is_test && let Some(group) = takes(body) {
                (groups.entry(group).or_default()).insert(format!("{module}::{name}"));
            }
        }
    }
    groups
}

/// The overrides of the default profile: each block's text.
fn overrides(config: &str) -> Vec<&str> {
    config
        .split("[[profile.default.overrides]]")
        .skip(1)
        .collect()
}

/// What `pattern(=NAME)` names in a block.
fn named<'a>(block: &'a str, pattern: &str) -> BTreeSet<&'a str> {
    (block.match_indices(&format!("{pattern}(=")))
        .map(|(i, p)| &block[i + p.len()..])
        .map(|rest| &rest[..rest.find(')').unwrap()])
        .collect()
}

#[test]
fn every_test_that_takes_a_lock_is_in_its_group_and_no_other() {
    let config = read(".config/nextest.toml");
    let mut in_config: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for block in overrides(&config) {
        let Some(group) = (block.lines()).find_map(|l| l.strip_prefix("test-group = ")) else {
            continue;
        };
        let group = group.trim_matches('"').to_string();
        let names = named(block, "test");
        assert!(!names.is_empty(), "group {group} names no test: {block}");
        (in_config.entry(group).or_default()).extend(names.iter().map(|s| s.to_string()));
    }
    let in_code = groups_in_code();
    // The check itself sees the locks (a parser that found none would pass anything).
    assert!(in_code["cluster"].len() >= 7, "{in_code:#?}");
    assert!(in_code["killed-runs"].len() >= 5, "{in_code:#?}");
    assert_eq!(
        in_code, in_config,
        "the locks in tests/e2e (left) and the test groups in .config/nextest.toml (right) differ"
    );
    for group in in_config.keys() {
        assert!(
            config.contains(&format!("\n{group} = {{ max-threads = 1 }}")),
            "group {group} is not declared with max-threads = 1"
        );
    }
}

#[test]
fn every_test_binary_that_must_run_alone_has_the_machine_to_itself() {
    let config = read(".config/nextest.toml");
    let alone: BTreeSet<&str> = (overrides(&config).into_iter())
        .filter(|b| b.contains("threads-required = \"num-test-threads\""))
        .flat_map(|b| named(b, "binary"))
        .collect();
    // The end-to-end tests that stay binaries of their own (tests/e2e_*.rs; the shared
    // ones are modules of tests/e2e/) do so because they must not share the machine
    // (tests/e2e/main.rs says why).
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut in_code = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        if path.extension().is_some_and(|e| e == "rs") && name.starts_with("e2e_") {
            in_code.insert(name);
        }
    }
    assert!(in_code.len() >= 3, "{in_code:?}");
    let alone: BTreeSet<String> = alone.into_iter().map(str::to_string).collect();
    assert_eq!(
        in_code, alone,
        "the tests/e2e_*.rs binaries (left) and those nextest runs alone (right) differ"
    );
}

/// The light tests (one slot of four, `.config/nextest.toml`) are end-to-end tests that
/// exist, and everything else takes two slots: a test renamed out of the list would
/// quietly take two again, and a default of one slot would put four heavy tests on two
/// cores.
#[test]
fn the_light_tests_exist_and_every_other_test_takes_half_the_machine() {
    let config = read(".config/nextest.toml");
    assert!(config.contains("\ntest-threads = 4\n"), "four slots");
    let blocks = overrides(&config);
    let last = blocks.last().expect("overrides");
    assert!(
        last.contains("filter = \"all()\"") && last.contains("threads-required = 2"),
        "the last override gives every other test two slots: {last}"
    );
    let light: Vec<&str> = (blocks.iter())
        .filter(|b| b.contains("threads-required = 1\n"))
        .flat_map(|b| named(b, "test"))
        .collect();
    assert!(light.len() >= 5, "{light:?}");
    for name in light {
        let (module, test) = name.split_once("::").expect("module::test");
        let text = read(&format!("tests/e2e/{module}.rs"));
        let found = functions(&text).into_iter().any(|(n, _, t)| t && n == test);
        assert!(
            found,
            "{name} in .config/nextest.toml is no test of tests/e2e/{module}.rs"
        );
    }
}
