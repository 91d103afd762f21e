//! Helpers shared by the end-to-end tests, which run the real binary against real
//! LND nodes on a real btcd regtest chain (built by `scripts/setup.sh`).

#![allow(dead_code)] // each test binary uses a different subset of these helpers

use std::path::{Path, PathBuf};

/// The lnbench-tui binary cargo built for this test run.
pub fn lnbench() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_lnbench-tui"))
}

pub fn repo_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Fails (never skips) when the node binaries are missing: a skipped end-to-end test
/// would let CI pass without ever touching a real node.
pub fn require_node_binaries() {
    let cache = std::env::var_os("LNBENCH_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("lnbench-tui"))
        })
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/lnbench-tui")))
        .expect("HOME is set");
    for bin in ["lnd", "btcd"] {
        let p = cache.join("bin").join(bin);
        assert!(
            p.exists(),
            "{} is missing: run scripts/setup.sh before the end-to-end tests",
            p.display()
        );
    }
}

/// Processes whose command line mentions `needle` (e.g. a run directory), as
/// `(pid, cmdline)`. Used to prove that nothing of a run is left running.
pub fn processes_mentioning(needle: &Path) -> Vec<(u32, String)> {
    let needle = needle.to_string_lossy().to_string();
    let mut found = Vec::new();
    let me = std::process::id();
    for entry in std::fs::read_dir("/proc").expect("read /proc") {
        let Ok(entry) = entry else { continue };
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&raw).replace('\0', " ");
        // Zombies have an empty cmdline; they are not running anything.
        if cmd.contains(&needle) && !cmd.contains("cargo") {
            found.push((pid, cmd));
        }
    }
    found
}

/// Validates a report against the JSON Schema published in the repository.
pub fn assert_matches_schema(report: &serde_json::Value) {
    let schema_text = std::fs::read_to_string(repo_file("docs/report.schema.json"))
        .expect("docs/report.schema.json exists");
    let schema: serde_json::Value = serde_json::from_str(&schema_text).expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(report)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "report.json does not match its schema:\n{}",
        errors.join("\n")
    );
}

/// Opens `html` in headless Chromium (Debian's package, installed by
/// `scripts/setup.sh --dev`): returns the DOM as Chromium built it, and writes a
/// screenshot to `png`. Chromium runs with its network features off: the page must
/// need nothing from outside.
pub fn chromium_render(html: &Path, png: &Path) -> String {
    let profile = tempfile::tempdir().expect("temp dir");
    let url = format!("file://{}", html.display());
    let run = |extra: &[String]| {
        let out = std::process::Command::new("chromium")
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                "--window-size=1200,2400",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(extra)
            .arg(&url)
            .output()
            .expect("chromium runs (scripts/setup.sh --dev installs it)");
        assert!(
            out.status.success(),
            "chromium failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    run(&[format!("--screenshot={}", png.display())]);
    let dom = run(&["--dump-dom".to_string()]);
    String::from_utf8_lossy(&dom.stdout).into_owned()
}
