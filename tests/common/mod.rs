//! Helpers shared by the end-to-end tests, which run the real binary against real
//! LND nodes on a real btcd regtest chain (built by `scripts/setup.sh`).

#![allow(dead_code)] // each test binary uses a different subset of these helpers

pub mod chain_faults;
pub mod docker;
pub mod fault_kinds;
pub mod fuzz;
pub mod impl_faults;
pub mod impls;
pub mod kube;
pub mod openmetrics;
pub mod running;
pub mod runtime_faults;
pub mod scenario_run;
pub mod svg;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// The turn of a test that leaves a killed run's leftovers behind on purpose and calls
/// `lnbench-tui down` to remove them. `down` removes every killed run's containers it
/// finds (a live run's it leaves alone), so two such tests at once would each remove
/// what the other means to look at. A failed test poisons the lock; the others run.
pub fn killed_runs_turn() -> MutexGuard<'static, ()> {
    static KILLED_RUNS: Mutex<()> = Mutex::new(());
    KILLED_RUNS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The lnbench-tui binary cargo built for this test run.
pub fn lnbench() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_lnbench-tui"))
}

/// The JVM options the end-to-end tests give Eclair (`JAVA_TOOL_OPTIONS`, which every
/// JVM reads): the quick C1 compiler only and the serial collector. An Eclair pair's
/// run of 200 keysends took 70 s of CPU with the JVM's defaults and 37 s with these
/// (C2 compiling in the background on two cores is most of it): the tests check what
/// Eclair does, not how fast, and the cores go to the test beside. Benchmarks run the
/// JVM as the scenario says (docs/verification.md, "The JVM in tests").
pub const TEST_JVM_OPTIONS: [&str; 2] = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"];

/// A command that runs [`lnbench`] with [`TEST_JVM_OPTIONS`] in its environment, which
/// the local runtime's Eclair nodes inherit (a container's do not: see
/// `impls::ECLAIR`'s `args:` for Docker).
pub fn lnbench_command() -> std::process::Command {
    let mut command = std::process::Command::new(lnbench());
    command.env("JAVA_TOOL_OPTIONS", TEST_JVM_OPTIONS.join(" "));
    command
}

pub fn repo_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// A scenario file under tests/fixtures/scenarios/ (`valid/cln-pays-cln.yaml`), as a
/// value to edit.
pub fn scenario_fixture(rel: &str) -> serde_json::Value {
    let path = repo_file(&format!("tests/fixtures/scenarios/{rel}"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// A scenario value as the YAML text the binary reads.
pub fn yaml(scenario: &serde_json::Value) -> String {
    serde_saphyr::to_string(scenario).expect("a scenario is YAML")
}

/// The build cache of scripts/build-nodes.sh.
pub fn cache_dir() -> PathBuf {
    std::env::var_os("LNBENCH_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("lnbench-tui"))
        })
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/lnbench-tui")))
        .expect("HOME is set")
}

/// Fails (never skips) when the node binaries are missing: a skipped end-to-end test
/// would let CI pass without ever touching a real node.
pub fn require_node_binaries() {
    let cache = cache_dir();
    for bin in ["lnd", "btcd"] {
        let p = cache.join("bin").join(bin);
        assert!(
            p.exists(),
            "{} is missing: run scripts/setup.sh before the end-to-end tests",
            p.display()
        );
    }
}

/// [`require_node_binaries`], and Toxiproxy (built from the Go module proxy on every
/// machine too) for the tests of faults on a link.
pub fn require_node_binaries_and_toxiproxy() {
    require_node_binaries();
    let proxy = cache_dir().join("bin").join("toxiproxy-unix");
    assert!(
        proxy.exists(),
        "{} is missing: run scripts/setup.sh before the end-to-end tests",
        proxy.display()
    );
}

/// True when `binary` is in the build cache. Otherwise says that `test` did not run and
/// why: on stderr, and as a file under `target/tmp/not-run/` that `.ci/run` counts in its
/// closing line (such a test passes in cargo's count, and is taken out of it there).
/// For the implementations built from a source tree that a fresh machine may lack.
pub fn built_or_not_run(test: &str, binary: &str, build: &str) -> bool {
    built_or_not_run_at(test, &cache_dir().join("bin").join(binary), build)
}

/// How to build each implementation from its source tree, for [`built_or_not_run`].
pub const BITCOIND_BUILD: &str = "BITCOIN_SRC=<Bitcoin Core source tree> scripts/build-nodes.sh";
pub const CLN_BUILD: &str = "CLN_SRC=<Core Lightning source tree> scripts/build-nodes.sh";
pub const ECLAIR_BUILD: &str =
    "ECLAIR_SRC=<Eclair source tree> scripts/build-nodes.sh, with a JDK >= 21";
pub const LDK_BUILD: &str = "LDK_SERVER_SRC=<ldk-server source tree> scripts/build-nodes.sh";

/// [`built_or_not_run`] for `binary` and for bitcoind, which Core Lightning, Eclair
/// and LDK run on.
pub fn built_on_bitcoind(test: &str, binary: &str, build: &str) -> bool {
    built_or_not_run(test, binary, build) && built_or_not_run(test, "bitcoind", BITCOIND_BUILD)
}

/// [`built_or_not_run`] for a binary anywhere in the build cache (`path`).
pub fn built_or_not_run_at(test: &str, path: &Path, build: &str) -> bool {
    if path.exists() {
        return true;
    }
    let binary = path.file_name().unwrap_or_default().to_string_lossy();
    record_not_run(test, &format!("{binary} not built ({build})"));
    false
}

/// Says that `test` did not run and why, on stderr and under `target/tmp/not-run/`.
pub fn record_not_run(test: &str, reason: &str) {
    eprintln!("NOT RUN: {test}: {reason}");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("not-run");
    std::fs::create_dir_all(&dir).expect("not-run directory");
    std::fs::write(dir.join(test), format!("{reason}\n")).expect("not-run record");
}

/// Checks that report.json has `count` nodes, each with a resource sample of CPU and one
/// of memory above 0.
pub fn assert_cpu_and_memory_of_every_node(report: &serde_json::Value, count: usize) {
    let nodes = report["nodes"].as_array().expect("nodes");
    assert_eq!(nodes.len(), count);
    for node in nodes {
        let name = node["name"].as_str().unwrap();
        let samples = node["resources"]["samples"]
            .as_array()
            .unwrap_or_else(|| panic!("node {name} has no resources.samples: {node:#}"));
        let positive = |key: &str| {
            samples
                .iter()
                .any(|s| s[key].as_f64().is_some_and(|v| v > 0.0))
        };
        assert!(
            positive("cpu_pct"),
            "node {name}: no CPU above 0: {samples:?}"
        );
        assert!(
            positive("mem_bytes"),
            "node {name}: no memory above 0: {samples:?}"
        );
    }
}

/// Every process on the machine whose command line carries an RPC password flag
/// (`--rpcpass`, `--btcd.rpcpass`, `-rpcpassword`, ...), as `(pid, cmdline)`. The tool
/// gives passwords to the daemons in 0600 config files; none may show in `ps`.
pub fn processes_with_passwords() -> Vec<(u32, String)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&raw).replace('\0', " ");
        if cmdline.to_ascii_lowercase().contains("rpcpass") {
            found.push((pid, cmdline));
        }
    }
    found
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

/// The report's reconciliation says every payment is accounted for: zero mismatches,
/// every node's ledger read, each sender's ledger shows the successes the tool counted
/// (plus the indeterminate ones it resolved to ok), and the receivers settled as many.
pub fn assert_reconciled(report: &serde_json::Value) {
    let r = &report["reconciliation"];
    assert_eq!(r["mismatches"], 0, "reconciliation: {r:#}");
    assert!(r.get("unread").is_none(), "nodes not read: {r:#}");
    let count = |v: &serde_json::Value| {
        v.as_u64()
            .unwrap_or_else(|| panic!("not a count: {v} in {r:#}"))
    };
    let mut sent_ok = 0;
    for s in r["senders"].as_array().expect("senders") {
        let tool = count(&s["tool_ok"]) + count(&s["resolved_ok"]);
        assert_eq!(count(&s["node_succeeded"]), tool, "sender: {s:#}");
        sent_ok += tool;
    }
    let received: u64 = (r["receivers"].as_array().expect("receivers").iter())
        .map(|x| count(&x["node_received"]))
        .sum();
    assert!(sent_ok > 0, "no payment reconciled: {r:#}");
    assert_eq!(received, sent_ok, "tool ok vs receivers settled: {r:#}");
    eprintln!(
        "reconciled: {sent_ok} ok by the tool and the senders, {received} settled by the \
         receivers, fees {} msat",
        r["fees_paid_msat"]
    );
}

/// Validates a report against the JSON Schema published in the repository.
pub fn assert_matches_schema(report: &serde_json::Value) {
    assert_matches_schema_file(report, "docs/report.schema.json");
}

/// Validates `report` against the JSON Schema in `schema` (a repository path).
pub fn assert_matches_schema_file(report: &serde_json::Value, schema: &str) {
    let schema_text = std::fs::read_to_string(repo_file(schema))
        .unwrap_or_else(|e| panic!("{schema} exists: {e}"));
    let schema: serde_json::Value = serde_json::from_str(&schema_text).expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(report)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{schema}: the report does not match:\n{}",
        errors.join("\n")
    );
}

/// Opens `html` in headless Chromium (Debian's package, installed by
/// `scripts/setup.sh --dev`): returns the DOM as Chromium built it, and writes a
/// screenshot to `png`. Chromium runs with its network features off: the page must
/// need nothing from outside.
pub fn chromium_render(html: &Path, png: &Path) -> String {
    let profile = tempfile::tempdir().expect("temp dir");
    let run = |extra: &[String]| {
        let mut args = vec!["--hide-scrollbars".into(), "--window-size=1200,2400".into()];
        args.extend_from_slice(extra);
        let out = chromium(profile.path(), &args, html)
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

/// Headless Chromium with its network features off and its profile in `profile`,
/// opening `html` with the `extra` arguments.
fn chromium(profile: &Path, extra: &[String], html: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new("chromium");
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .arg(format!("file://{}", html.display()));
    cmd
}

/// What the page wrote to the browser console while headless Chromium loaded it
/// (Chromium logs each console message to stderr as `...:CONSOLE:...] "text"`).
/// Report pages have no script, so any message means something went wrong.
pub fn chromium_console(html: &Path) -> Vec<String> {
    let profile = tempfile::tempdir().expect("temp dir");
    let args = ["--enable-logging=stderr", "--v=0", "--dump-dom"].map(String::from);
    let out = chromium(profile.path(), &args, html)
        .output()
        .expect("chromium runs (scripts/setup.sh --dev installs it)");
    assert!(out.status.success(), "chromium failed");
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect()
}

/// A plan paying from `sender` to an instant fake `bob` by keysend.
pub fn fake_plan(
    sender: lnbench_tui::node::fake::FakeNode,
    load: lnbench_tui::scenario::Load,
    stop: lnbench_tui::scenario::StopCondition,
) -> lnbench_tui::engine::Plan {
    use lnbench_tui::node::fake::{FakeConfig, FakeNode};
    let receiver = FakeNode::new(FakeConfig::instant("bob"));
    lnbench_tui::engine::Plan {
        routes: vec![lnbench_tui::engine::Route {
            receiver_pubkey: receiver.pubkey().to_string(),
            sender: std::sync::Arc::new(sender),
            receiver: std::sync::Arc::new(receiver),
        }],
        kind: lnbench_tui::scenario::PaymentKind::Keysend,
        amount_msat: 1000,
        load,
        stop,
        payment_timeout: std::time::Duration::from_secs(5),
        ledger: None,
        stream: None,
        max_parts: None,
        attack: None,
        rebalance: None,
    }
}

/// Runs `plan` with the real engine to its end (no commands) and returns the summary.
pub async fn run_fake(plan: lnbench_tui::engine::Plan) -> lnbench_tui::metrics::Summary {
    let (recorder, _snapshots) = lnbench_tui::metrics::Recorder::new();
    let (_tx, rx) = tokio::sync::mpsc::unbounded_channel();
    lnbench_tui::engine::run(
        plan,
        recorder,
        rx,
        tokio_util::sync::CancellationToken::new(),
    )
    .await
    .expect("engine runs")
    .summary
}

/// A complete report around `results`, with fixed facts (host aside) and the given
/// scenario text.
pub fn sample_report(
    text: &str,
    results: lnbench_tui::metrics::Summary,
) -> lnbench_tui::report::Report {
    use lnbench_tui::report;
    report::Report {
        schema_version: report::SCHEMA_VERSION,
        // A release build, as the committed snapshots were taken: a test build would add
        // "(debug build)" to every tool line.
        tool: report::Tool {
            build: "release".into(),
            ..report::Tool::this()
        },
        complete: true,
        interrupted_by: None,
        started_at: "2026-11-22T10:00:00Z".into(),
        finished_at: "2026-11-22T10:01:00Z".into(),
        scenario: report::ScenarioText {
            name: "sample".into(),
            description: "fake nodes".into(),
            path: "scenarios/sample.yaml".into(),
            text: text.into(),
        },
        runtime: "local".into(),
        host: report::Host::detect(),
        chain: report::ChainInfo {
            implementation: "btcd".into(),
            version: "btcd version 0.24.2-beta".into(),
            resources: Default::default(),
        },
        nodes: vec![report::NodeReport {
            name: "alice".into(),
            group: "alice".into(),
            implementation: "lnd".into(),
            version: "0.21.1-beta".into(),
            pubkey: format!("02{}", "ab".repeat(32)),
            role: "sender".into(),
            binary: "lnd".into(),
            database: "bbolt".into(),
            completion: Some(lnbench_tui::node::Completion::exact(
                lnbench_tui::node::completion::Method::Stream,
                "SendPaymentV2",
            )),
            ready_s: None,
            resources: Default::default(),
            restart: None,
        }],
        services: Vec::new(),
        workload: report::WorkloadReport {
            kind: "keysend".into(),
            amount_msat: 1000,
            load_model: "closed".into(),
            concurrency: Some(4),
            senders: vec!["alice".into()],
            receivers: vec!["bob".into()],
            stop_after_payments: Some(200),
            stop_after_seconds: None,
            payment_timeout_seconds: 5.0,
        },
        setup: vec![lnbench_tui::setup::StepTiming {
            step: "chain up".into(),
            seconds: 1.5,
        }],
        results,
        thresholds: Vec::new(),
        tool_resources: None,
        snapshot: None,
        history: None,
        profiling: None,
        links: Vec::new(),
        faults: Vec::new(),
        channel_health: Vec::new(),
        reconciliation: None,
        mainnet_caps: None,
        network: None,
        point: None,
    }
}
