//! The Dockerfile's builder stage compiles from a context that .dockerignore cuts down to
//! what the build reads. Nothing here can pull its Rust image, so this checks the two
//! lists against the sources instead: a file the build reads and either list leaves out
//! fails `docker build .` only where a registry is reachable, far from this repository.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The top-level entries `cargo build --release --bin lnbench-tui` reads: the manifest,
/// the lock file, the build script, the sources, the bench targets Cargo.toml declares,
/// and every file the non-test code includes with `include_str!` / `include_bytes!`.
fn read_by_the_build() -> BTreeSet<String> {
    let mut needed: BTreeSet<String> = ["Cargo.toml", "Cargo.lock", "src"].map(String::from).into();
    if repo().join("build.rs").exists() {
        needed.insert("build.rs".into());
    }
    if read("Cargo.toml").contains("[[bench]]") {
        needed.insert("benches".into());
    }
    let mut dirs = vec![repo().join("src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") && !is_test_file(&path) {
                needed.extend(included_top_levels(&path));
            }
        }
    }
    needed
}

fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().unwrap().to_string_lossy();
    name == "tests.rs"
        || name.ends_with("_tests.rs")
        || path.components().any(|c| c.as_os_str() == "tests")
}

/// The top-level entry of each file `path` includes before its first `#[cfg(test)]`.
fn included_top_levels(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let code = text.split("#[cfg(test)]").next().unwrap();
    let mut found = Vec::new();
    for piece in code.split("include_").skip(1) {
        let Some(rest) = piece
            .strip_prefix("str!(\"")
            .or_else(|| piece.strip_prefix("bytes!(\""))
        else {
            continue;
        };
        let relative = rest.split('"').next().unwrap();
        let mut resolved = path.parent().unwrap().to_path_buf();
        for part in Path::new(relative).components() {
            match part {
                Component::ParentDir => {
                    resolved.pop();
                }
                other => resolved.push(other),
            }
        }
        let inside = resolved.strip_prefix(repo()).unwrap_or_else(|_| {
            panic!(
                "{} includes {relative}, outside the repository",
                path.display()
            )
        });
        let top = inside.components().next().unwrap();
        found.push(top.as_os_str().to_string_lossy().into_owned());
    }
    found
}

#[test]
fn the_builder_stage_and_the_context_hold_everything_the_build_reads() {
    let dockerfile = read("Dockerfile");
    let builder = dockerfile
        .split("\nFROM ")
        .find(|stage| stage.contains("AS builder"))
        .expect("the Dockerfile has a builder stage");
    let copied: BTreeSet<&str> = builder
        .lines()
        .filter_map(|l| l.strip_prefix("COPY "))
        .flat_map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            words[..words.len() - 1].to_vec()
        })
        .map(|w| w.trim_end_matches('/'))
        .collect();
    let ignore = read(".dockerignore");
    let allowed: BTreeSet<&str> = ignore
        .lines()
        .filter_map(|l| l.trim().strip_prefix('!'))
        .collect();
    let needed = read_by_the_build();
    assert!(
        needed.contains("src") && needed.contains("assets"),
        "{needed:?}"
    );
    let not_copied: Vec<&String> = needed
        .iter()
        .filter(|n| !copied.contains(n.as_str()))
        .collect();
    let not_in_context: Vec<&String> = needed
        .iter()
        .filter(|n| !allowed.contains(n.as_str()))
        .collect();
    assert!(
        not_copied.is_empty() && not_in_context.is_empty(),
        "the build reads {not_copied:?}, which the Dockerfile's builder stage does not copy, \
         and {not_in_context:?}, which .dockerignore leaves out of the context"
    );
}

/// prost-build (under the LND client's tonic build) runs `protoc`, which the Rust
/// images lack: the builder stage installs it before the build (a `docker build .`
/// failed there without it).
#[test]
fn the_builder_stage_installs_protoc_when_a_build_script_needs_it() {
    let lock = read("Cargo.lock");
    if !lock.contains("name = \"prost-build\"") {
        return;
    }
    let dockerfile = read("Dockerfile");
    let builder = dockerfile
        .split("\nFROM ")
        .find(|stage| stage.contains("AS builder"))
        .expect("a builder stage");
    let install = builder
        .find("protobuf-compiler")
        .expect("the builder stage installs protobuf-compiler");
    let build = builder.find("cargo build").expect("the builder builds");
    assert!(install < build, "protoc is installed before the build");
}
