//! Secrets never appear in a report. The chain's RPC password and the nodes'
//! macaroons stay in the run directory: the report model has no field that could
//! carry them (checked on the model and on the published schema). The one way in is
//! the scenario text, copied as written: a user may put a password in `args:`, so
//! the text is redacted before it is copied, and no report file holds the secret.

mod common;

use lnbench_tui::metrics::Summary;
use lnbench_tui::node::fake::{FakeConfig, FakeNode};
use lnbench_tui::report::redact::{REDACTED, redact_scenario_text};
use lnbench_tui::report::{self};
use lnbench_tui::scenario::{Load, StopCondition};

const RPC_PASS: &str = "hunter2";
/// The start of a real LND admin macaroon in hex (a serialized macaroon always
/// begins `0201036c6e64` = version 2, location "lnd"), with made-up bytes after.
const MACAROON_HEX: &str = "0201036c6e6402f801030a10c5e6b1d2a1f0e9d8c7b6a5f4e3d2c1b0";
const RUNE: &str = "tU-RLjMiDpY2U0o3W1oFowar36RFGpWloPbW9-RuZdo9MyZpZD0wMjRiOWE";

/// A scenario as a user might write it, with credentials in every place `args:`
/// allows them.
fn scenario_text() -> String {
    format!(
        "name: secrets\n\
         chain:\n  args: [\"--rpcpass={RPC_PASS}\", \"--debuglevel=info\"]\n\
         nodes:\n  - name: alice\n    implementation: lnd\n    args:\n      - --btcd.rpcpass={RPC_PASS}\n      - --macaroon-hex\n      - {MACAROON_HEX}\n\
         \x20 - name: bob\n    implementation: lnd\n    args: [\"--clnrest-rune\", \"{RUNE}\"]\n\
         workload:\n  kind: keysend\n"
    )
}

async fn fake_results() -> Summary {
    let stop = StopCondition {
        payments: Some(20),
        duration: None,
        liquidity_failures: None,
    };
    let alice = FakeNode::new(FakeConfig::instant("alice"));
    common::run_fake(common::fake_plan(
        alice,
        Load::Closed { concurrency: 2 },
        stop,
    ))
    .await
}

/// Words of a field name (split at `_`, `-`, `.`) that would mean it holds a
/// credential. Whole words, so `passed` (of a threshold) or `pubkey` do not match.
const CREDENTIAL_WORDS: [&str; 18] = [
    "macaroon",
    "macaroons",
    "pass",
    "password",
    "passwd",
    "passphrase",
    "rpcpass",
    "rune",
    "secret",
    "token",
    "auth",
    "rpcauth",
    "credential",
    "credentials",
    "cert",
    "seed",
    "mnemonic",
    "privkey",
];

fn credential_like(name: &str) -> bool {
    name.to_ascii_lowercase()
        .split(['_', '-', '.'])
        .any(|word| CREDENTIAL_WORDS.contains(&word))
}

/// Every object key in `value`, recursively.
fn keys(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                out.push(k.clone());
                keys(v, out);
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| keys(v, out)),
        _ => {}
    }
}

#[tokio::test]
async fn the_report_model_has_no_field_for_credentials() {
    let json = serde_json::to_value(common::sample_report(
        "name: secrets\n",
        fake_results().await,
    ))
    .unwrap();
    let mut model = Vec::new();
    keys(&json, &mut model);
    assert!(
        model.contains(&"pubkey".to_string()),
        "the walk sees nested fields"
    );
    let bad: Vec<&String> = model.iter().filter(|k| credential_like(k)).collect();
    assert!(
        bad.is_empty(),
        "report fields that look like credentials: {bad:?}"
    );

    // The schema names optional fields the model above may leave out.
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(common::repo_file("docs/report.schema.json")).unwrap(),
    )
    .unwrap();
    let mut properties = Vec::new();
    collect_properties(&schema, &mut properties);
    assert!(properties.contains(&"tool_cpu_s".to_string()));
    let bad: Vec<&String> = properties.iter().filter(|k| credential_like(k)).collect();
    assert!(
        bad.is_empty(),
        "schema properties that look like credentials: {bad:?}"
    );
}

/// The names under every `properties` of a JSON Schema.
fn collect_properties(schema: &serde_json::Value, out: &mut Vec<String>) {
    match schema {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                if k == "properties"
                    && let Some(props) = v.as_object()
                {
                    out.extend(props.keys().cloned());
                }
                collect_properties(v, out);
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| collect_properties(v, out)),
        _ => {}
    }
}

#[test]
fn the_check_recognises_credential_names() {
    for name in [
        "rpc_pass",
        "admin_macaroon",
        "rune",
        "tls_cert",
        "auth",
        "wallet-password",
    ] {
        assert!(credential_like(name), "{name}");
    }
    for name in ["pubkey", "p99_us", "binary", "text", "passed", "runtime"] {
        assert!(!credential_like(name), "{name}");
    }
}

#[tokio::test]
async fn no_report_file_holds_a_secret_written_in_the_scenario() {
    let raw = scenario_text();
    for secret in [RPC_PASS, MACAROON_HEX, RUNE] {
        assert!(raw.contains(secret), "the test plants {secret}");
    }
    let dir = tempfile::tempdir().unwrap();
    let text = redact_scenario_text(&raw);
    let written = report::write_all(
        &common::sample_report(&text, fake_results().await),
        dir.path(),
    )
    .unwrap();
    assert!(written.len() >= 3, "{written:?}");

    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        files.push((path.clone(), std::fs::read(&path).unwrap()));
    }
    assert_eq!(files.len(), written.len(), "only the files write_all names");
    for (path, bytes) in &files {
        let text = String::from_utf8_lossy(bytes);
        for secret in [RPC_PASS, MACAROON_HEX, RUNE] {
            assert!(!text.contains(secret), "{} holds {secret}", path.display());
        }
    }

    // The scenario is still copied as written, apart from the secret values.
    let json = std::fs::read_to_string(dir.path().join("report.json")).unwrap();
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    for expected in [
        format!("--btcd.rpcpass={REDACTED}"),
        format!("--rpcpass={REDACTED}"),
        "--debuglevel=info".to_string(),
        "--macaroon-hex".to_string(),
    ] {
        assert!(json.contains(&expected), "report.json lacks {expected}");
        assert!(html.contains(&expected), "report.html lacks {expected}");
    }
    assert_eq!(json.matches(REDACTED).count(), 4, "{json}");
}

/// Strings the tool did not write itself reach report.json redacted, whatever field
/// they sit in: a node's log quoted in `interrupted_by`, a DSN with a password.
#[tokio::test]
async fn report_json_redacts_every_string_field() {
    let dir = tempfile::tempdir().unwrap();
    let mut sample = common::sample_report("name: t\n", fake_results().await);
    sample.interrupted_by = Some(format!(
        "bob exited during the load; last lines of its log:\n\
         [INF] config: rpcpassword={RPC_PASS}\n\
         [ERR] cannot reach postgres://lnd:{RPC_PASS}@127.0.0.1/bob"
    ));
    report::json::write(&sample, dir.path()).unwrap();
    let json = std::fs::read_to_string(dir.path().join("report.json")).unwrap();
    assert!(!json.contains(RPC_PASS), "{json}");
    assert!(json.contains("postgres://lnd:[REDACTED]@127.0.0.1/bob"));
    assert!(json.contains("bob exited during the load"));
}

/// A secret the run registered (a generated RPC password, an API key) is replaced
/// wherever a report quotes it, in every format: here in a fault's error and a
/// node's channel-health error that quote its log, under no secret-looking name,
/// and in the reason the run was interrupted. The shapes are redacted in report.html
/// and summary.md too, not only in report.json.
#[tokio::test]
async fn registered_secrets_and_secret_shapes_are_redacted_in_every_format() {
    const REGISTERED: &str = "5f3c9a0e7b1d4f2a8c6e0b9d3a7f1e5c";
    const BASIC: &str = "OjVmM2M5YTBlN2IxZDRmMmE4YzZlMGI5ZDNhN2YxZTVj";
    const SHAPED: &str = "hunter2hunter2";
    lnbench_tui::redact::register_secret(REGISTERED);
    let tail = format!(
        "bob did not come back; last lines of its log:\n\
         2026-11-26 [DBG] dialing bitcoind with {REGISTERED}\n\
         > Authorization: Basic {BASIC}\n\
         eclair.api.password = \"{SHAPED}\""
    );
    let mut sample = common::sample_report("name: t\n", fake_results().await);
    sample.complete = false;
    sample.interrupted_by = Some(tail.clone());
    sample.faults = vec![lnbench_tui::faults::FaultRecord {
        label: "kill bob".into(),
        kind: "kill".into(),
        target: "bob".into(),
        began_s: Some(1.0),
        ended_s: Some(2.0),
        links: None,
        node_back: None,
        chain_back: None,
        chain_height: None,
        error: Some(tail.clone()),
        windows: Default::default(),
    }];
    sample.channel_health = vec![lnbench_tui::faults::NodeHealth {
        node: "bob".into(),
        health: None,
        error: Some(tail),
    }];
    let dir = tempfile::tempdir().unwrap();
    report::write_all(&sample, dir.path()).unwrap();
    for file in ["report.json", "report.html", "summary.md"] {
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
        assert!(
            text.contains("bob did not come back"),
            "{file} quotes the error"
        );
        for secret in [REGISTERED, BASIC, SHAPED] {
            assert!(!text.contains(secret), "{file} holds {secret}");
        }
    }
}
