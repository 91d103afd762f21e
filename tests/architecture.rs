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
    let modules = ["local", "docker", "kube", "external", "auto", "fake"];
    let mut found = Vec::new();
    for line in source_lines(&["runtime"]) {
        for module in modules {
            let named = line.text.contains(&format!("runtime::{module}::"))
                || line.text.contains(&format!("runtime::{module};"));
            if named && !(module == "fake" && line.in_test) {
                found.push(line.to_string());
            }
        }
    }
    assert!(
        found.is_empty(),
        "a runtime named outside src/runtime/:\n{}",
        found.join("\n")
    );
}

/// One line of code under src/ (comments are left out).
struct Line {
    /// The file, as `src/...`.
    file: String,
    /// Its line number, from 1.
    n: usize,
    text: String,
    /// In a test file (`tests.rs`, `*_tests.rs`, under `tests/`) or after the file's
    /// test module begins (`#[cfg(test)]`).
    in_test: bool,
}

impl std::fmt::Display for Line {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.n, self.text)
    }
}

/// The lines of code of the source files under src/ outside `skip` (folders or files,
/// relative to src/).
fn source_lines(skip: &[&str]) -> Vec<Line> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    let mut dirs = vec![root.clone()];
    let mut files = 0;
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(&root).unwrap().display().to_string();
            if skip.contains(&rel.as_str()) {
                continue;
            }
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if !name.ends_with(".rs") {
                continue;
            }
            files += 1;
            let mut in_test = name == "tests.rs"
                || name.ends_with("_tests.rs")
                || path.components().any(|c| c.as_os_str() == "tests");
            let text = std::fs::read_to_string(&path).unwrap();
            for (n, line) in text.lines().enumerate() {
                in_test |= line.trim() == "#[cfg(test)]";
                if !line.trim_start().starts_with("//") {
                    out.push(Line {
                        file: format!("src/{rel}"),
                        n: n + 1,
                        text: line.trim().to_string(),
                        in_test,
                    });
                }
            }
        }
    }
    assert!(files > 100, "only {files} files under src/");
    out
}

/// Lines that choose by a name (`== "lnd"`, `"docker" =>`, `Kind::Lnd`): a variant
/// path of `kind`, or one of `names` compared or matched as a string.
fn choosing_by_name(line: &str, kind: &str, variants: &[&str], names: &[&str]) -> bool {
    variants
        .iter()
        .any(|v| line.contains(&format!("{kind}::{v}")))
        || names.iter().any(|n| {
            let quoted = format!("\"{n}\"");
            line.contains(&format!("== {quoted}"))
                || line.contains(&format!("!= {quoted}"))
                || line.contains(&format!("{quoted} =>"))
                || line.contains(&format!("{quoted} |"))
        })
}

/// No code outside src/node/ chooses by an implementation's name: what only some
/// implementations do is asked of their driver (`NodeDriver::missing(Feature)`, its
/// capabilities), so a new implementation is its folder and its line in
/// `node::driver`. Scenario validation, the runtimes and the report ask; tests may
/// name implementations freely.
#[test]
fn no_code_outside_the_nodes_chooses_by_an_implementation_name() {
    let found: Vec<String> = source_lines(&["node"])
        .into_iter()
        .filter(|line| {
            !line.in_test
                && choosing_by_name(
                    &line.text,
                    "Implementation",
                    &["Lnd", "Cln", "Eclair", "Ldk"],
                    &["lnd", "cln", "eclair", "ldk"],
                )
        })
        .map(|line| line.to_string())
        .collect();
    assert!(
        found.is_empty(),
        "an implementation chosen by name outside src/node/ ({}):\n{}",
        found.len(),
        found.join("\n")
    );
}

/// No code outside src/runtime/ chooses by a runtime's name: validation and the
/// orchestration ask the runtime's registered `Capabilities` (whether it starts its
/// nodes, the section of its own settings, whether it reaches the nodes' sockets).
/// `scenario/mod.rs` holds the names themselves (`RuntimeKind` and its `ALL`).
#[test]
fn no_code_outside_the_runtimes_chooses_by_a_runtime_name() {
    let found: Vec<String> = source_lines(&["runtime", "runtime.rs", "scenario/mod.rs"])
        .into_iter()
        .filter(|line| {
            !line.in_test
                && choosing_by_name(
                    &line.text,
                    "RuntimeKind",
                    &["Local", "Docker", "Kubernetes", "External", "Auto"],
                    &["local", "docker", "kubernetes", "external", "auto"],
                )
        })
        .map(|line| line.to_string())
        .collect();
    assert!(
        found.is_empty(),
        "a runtime chosen by name outside src/runtime/ ({}):\n{}",
        found.len(),
        found.join("\n")
    );
}

/// Where payments are counted, shown and reported, no workload kind is named: the
/// worker hands each payment's end to the subscribers that `engine/subscribers.rs`
/// lists, the live view reads the sources the engine handed the recorder, and the
/// report's page and summary show the sections `report/workload_sections.rs` lists.
/// The worker still shapes payments by kind (an activity's route, a stream's tick,
/// an invoice in parts), so it is held to the kinds that only listen.
#[test]
fn the_payment_loop_the_live_view_and_the_report_name_no_workload_kind() {
    let kinds = ["attack", "rebalanc", "drain", "activity", "stream", "parts"];
    let held: [(&str, &[&str]); 6] = [
        // The event carries what the node told of the payment: its parts, a tick's
        // split answers.
        ("src/engine/event.rs", &kinds[..4]),
        ("src/metrics/live.rs", &kinds),
        ("src/report/html.rs", &kinds),
        ("src/report/markdown.rs", &kinds),
        ("src/report/section.rs", &kinds),
        ("src/engine/worker.rs", &kinds[..3]),
    ];
    let lines = source_lines(&[]);
    let mut found = Vec::new();
    for (file, names) in held {
        let of_file: Vec<&Line> = lines.iter().filter(|l| l.file == file).collect();
        assert!(
            !of_file.is_empty(),
            "{file} is gone: say where its part went"
        );
        let named = of_file.into_iter().filter(|l| {
            let text = l.text.to_lowercase();
            !l.in_test && names.iter().any(|kind| text.contains(kind))
        });
        found.extend(named.map(|l| l.to_string()));
    }
    assert!(
        found.is_empty(),
        "a workload kind named where it should be asked of a list ({}):\n{}",
        found.len(),
        found.join("\n")
    );
}

/// Every file the tool reads goes through `src/files.rs` (`read_text`, `read_bytes`,
/// `read_tail`, `open_regular`: a regular file, of bounded size, opened without
/// blocking), unless it is on this list with the reason it needs no bound: the
/// kernel's own files, and files the run itself wrote in its own directory. A new raw
/// read (`fs::read`, `fs::read_to_string`, `File::open`, std's or tokio's) outside
/// test code fails here, naming its line.
#[test]
fn every_raw_read_of_a_file_is_listed_with_its_reason() {
    const RAW: &[(&str, usize, &str)] = &[
        (
            "files.rs",
            1,
            "the copy of a file the run wrote (latency.hlog)",
        ),
        ("leftovers.rs", 4, "/proc, /etc/passwd"),
        ("metrics/host.rs", 1, "/proc/stat"),
        (
            "metrics/payments.rs",
            1,
            "payments.csv, which the run writes",
        ),
        ("metrics/process.rs", 2, "/proc/PID"),
        ("report/host.rs", 1, "/proc and /sys facts of the host"),
        ("runtime/docker/engine.rs", 2, "/proc/PID"),
        (
            "runtime/docker/etcd.rs",
            1,
            "an etcd member's log in the run's directory",
        ),
        (
            "runtime/docker/postgres/snapshot.rs",
            1,
            "an archive the run downloaded",
        ),
        (
            "runtime/docker/snapshot.rs",
            1,
            "an archive the run downloaded",
        ),
        (
            "runtime/local/cgroup.rs",
            4,
            "/proc/PID/cgroup and the cgroup tree",
        ),
        ("runtime/local/ports.rs", 1, "/proc/sys"),
        ("runtime/local/postgres.rs", 1, "/proc/self/status"),
        ("runtime/local/stats.rs", 1, "/proc/PID/io"),
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let patterns = ["fs::read_to_string(", "fs::read(", "File::open("];
    let mut dirs = vec![root.clone()];
    let mut found: Vec<(String, Vec<String>)> = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if name != "tests" {
                    dirs.push(path);
                }
                continue;
            }
            if !name.ends_with(".rs") || name == "tests.rs" || name.ends_with("_tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            // The code before the file's test module, if it has one.
            let code = (text.match_indices("#[cfg(test)]"))
                .find(|(at, attr)| text[at + attr.len()..].trim_start().starts_with("mod "))
                .map_or(text.as_str(), |(at, _)| &text[..at]);
            let lines: Vec<String> = (code.lines().enumerate())
                .filter(|(_, l)| !l.trim_start().starts_with("//"))
                .filter(|(_, l)| patterns.iter().any(|p| l.contains(p)))
                .map(|(n, l)| format!("{}: {}", n + 1, l.trim()))
                .collect();
            if !lines.is_empty() {
                let rel = path.strip_prefix(&root).unwrap().display().to_string();
                found.push((rel, lines));
            }
        }
    }
    assert!(
        !found.is_empty(),
        "no raw read found at all: did the scan break?"
    );
    let mut wrong = Vec::new();
    for (file, lines) in &found {
        let listed = RAW.iter().find(|(f, _, _)| f == file).map(|(_, n, _)| *n);
        if listed != Some(lines.len()) {
            wrong.push(format!(
                "src/{file}: {} raw read(s), {} listed:\n  {}",
                lines.len(),
                listed.map_or("none".to_string(), |n| n.to_string()),
                lines.join("\n  ")
            ));
        }
    }
    for (file, _, _) in RAW {
        if !found.iter().any(|(f, _)| f == file) {
            wrong.push(format!(
                "src/{file}: listed, but it reads nothing raw any more"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "read through crate::files (read_text, read_bytes, read_tail, open_regular), \
         or list the read here with the reason it needs no bound:\n{}",
        wrong.join("\n")
    );
}
