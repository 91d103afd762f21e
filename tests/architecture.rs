//! docs/ARCHITECTURE.md stays true: every file path it names exists (a rename or a
//! move that forgets the map fails here).

use std::path::Path;

#[test]
fn every_path_the_architecture_page_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    let mut named = 0;
    let mut missing = Vec::new();
    for quoted in text.split('`').skip(1).step_by(2) {
        // A file (`src/run/plan.rs`, or `node/fake.rs` under src/); `<name>` is a
        // recipe's placeholder and `*` a pattern, not files.
        let is_path = quoted.contains('/')
            && (quoted.ends_with(".rs") || quoted.ends_with(".sh") || quoted.ends_with(".md"));
        if !is_path || quoted.contains(['<', ' ', '*']) {
            continue;
        }
        named += 1;
        if !root.join(quoted).exists() && !root.join("src").join(quoted).exists() {
            missing.push(quoted.to_string());
        }
    }
    assert!(
        named >= 20,
        "only {named} paths found: did the page change shape?"
    );
    assert!(missing.is_empty(), "named but missing: {missing:?}");
}

/// Outside src/runtime/, no code reaches into one runtime's module
/// (`runtime::docker::...`): a capability is asked of the runtime that has it
/// (`Runtime::snapshots`, `Profiling::loopback_port`, the registered `Leftovers` that
/// `down` looks in), so a new runtime is its module plus its line in the table. Tests
/// may name the fake runtime, their double.
#[test]
fn no_code_outside_the_runtimes_names_one_of_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules = ["local", "docker", "kube", "external", "auto", "fake"];
    let mut files = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path == root.join("runtime") {
                continue;
            }
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    assert!(files.len() > 100, "only {} files under src/", files.len());
    let is_test = |p: &Path| {
        let name = p.file_name().unwrap().to_string_lossy();
        name == "tests.rs"
            || name.ends_with("_tests.rs")
            || p.components().any(|c| c.as_os_str() == "tests")
    };
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for module in modules {
                let named = line.contains(&format!("runtime::{module}::"))
                    || line.contains(&format!("runtime::{module};"));
                if named && !(module == "fake" && is_test(file)) {
                    let at = file.strip_prefix(&root).unwrap().display();
                    found.push(format!("src/{at}:{}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "a runtime named outside src/runtime/:\n{}",
        found.join("\n")
    );
}
