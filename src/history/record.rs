//! What the store keeps of a run: the scenario (name, and a hash of its text), the
//! host, and per point (a single run has one; a sweep or repeated run one per point
//! and repeat) the nodes with their versions and source commits, the envelope, the
//! outside load and the figures. Read from report.json as JSON values, so reports
//! from before a field existed import with that field empty.

use bitcoin::hashes::{Hash, sha256};
use serde_json::Value;

/// One run: a report directory.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    pub scenario: String,
    /// SHA-256 of the scenario file's text as the report holds it.
    pub scenario_hash: String,
    pub started_at: String,
    pub finished_at: String,
    pub runtime: String,
    pub tool_version: String,
    pub complete: bool,
    /// The report directory (canonical path) it was read from.
    pub source: String,
    pub host: HostRecord,
    pub points: Vec<PointRecord>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct HostRecord {
    pub cpu_model: String,
    pub cores: u64,
    pub memory_bytes: u64,
    pub os: String,
    pub kernel: String,
}

impl HostRecord {
    /// Runs compared with each other must come from the same class of machine: the
    /// CPU model, the cores and the memory (GiB, rounded).
    pub fn class(&self) -> String {
        let gib = (self.memory_bytes as f64 / (1u64 << 30) as f64).round();
        format!("{}, {} cores, {gib} GiB", self.cpu_model, self.cores)
    }
}

/// One measured load: the run itself, or one point (or repeat) of a sweep.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PointRecord {
    /// The point's label (`concurrency=4,repeat=2`); empty for a single run.
    pub label: String,
    /// The label without `repeat=`: the repeats of one point share it.
    pub group: String,
    pub repeat: Option<u32>,
    /// The point's report.json.
    pub report: String,
    pub complete: bool,
    /// The load as run (kind, amount, model, concurrency, stop): runs whose load
    /// differs (`--payments`, `--duration`) are not compared.
    pub load: String,
    /// The CPU and memory limits of each node and the chain, `none` without.
    pub envelope: String,
    pub outside_load_pct: Option<f64>,
    pub steal_pct: Option<f64>,
    pub disturbed: Option<bool>,
    pub ok: u64,
    pub failed: u64,
    pub tps: f64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p99_us: u64,
    /// The nodes' CPU over the load, summed (percent of one core); `None` when the
    /// runtime read none.
    pub cpu_pct: Option<f64>,
    /// The nodes' data-dir growth over the load per successful payment, summed;
    /// `None` when no node's was read (or the store's run predates schema 2).
    pub bytes_per_payment: Option<f64>,
    /// Payments the network had made before the measured load: `history:`'s count,
    /// or a restored snapshot's; `None` for a fresh network (or a store's run that
    /// predates schema 3).
    pub made_before: Option<u64>,
    pub nodes: Vec<NodeRecord>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeRecord {
    pub name: String,
    pub implementation: String,
    pub version: String,
    /// The source commit, where the version names one (`commit=...`).
    pub commit: Option<String>,
    pub database: Option<String>,
    pub cpu_pct: Option<f64>,
    pub bytes_per_payment: Option<f64>,
}

/// Why a report cannot be recorded.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {why}")]
pub struct NotRecordable {
    pub path: String,
    pub why: String,
}

fn str_of(v: &Value, pointer: &str) -> String {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The run-level fields of a report.json or sweep.json (`doc`), read from `path`.
pub fn run_of(doc: &Value, path: &str) -> Result<RunRecord, NotRecordable> {
    let missing = |what: &str| NotRecordable {
        path: path.to_string(),
        why: format!("no {what}: not a report of lnbench-tui"),
    };
    let scenario = doc
        .pointer("/scenario/name")
        .and_then(Value::as_str)
        .ok_or_else(|| missing("scenario.name"))?;
    let text = doc
        .pointer("/scenario/text")
        .and_then(Value::as_str)
        .ok_or_else(|| missing("scenario.text"))?;
    let started_at = doc
        .get("started_at")
        .and_then(Value::as_str)
        .ok_or_else(|| missing("started_at"))?;
    let host = doc.get("host").cloned().unwrap_or(Value::Null);
    Ok(RunRecord {
        scenario: scenario.to_string(),
        scenario_hash: sha256::Hash::hash(text.as_bytes()).to_string(),
        started_at: started_at.to_string(),
        finished_at: str_of(doc, "/finished_at"),
        runtime: str_of(doc, "/runtime"),
        tool_version: str_of(doc, "/tool/version"),
        complete: doc
            .get("complete")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        source: String::new(),
        host: HostRecord {
            cpu_model: str_of(&host, "/cpu_model"),
            cores: host.get("cores").and_then(Value::as_u64).unwrap_or(0),
            memory_bytes: host
                .get("memory_bytes")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            os: str_of(&host, "/os"),
            kernel: str_of(&host, "/kernel"),
        },
        points: Vec::new(),
    })
}

/// One point's record from its report.json (`doc`), labelled `label`.
pub fn point_of(doc: &Value, label: &str, report: &str) -> Result<PointRecord, NotRecordable> {
    let results = doc.get("results").ok_or_else(|| NotRecordable {
        path: report.to_string(),
        why: "no results: not a report of lnbench-tui".into(),
    })?;
    let u = |p: &str| results.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    let machine = results.get("machine");
    let nodes: Vec<NodeRecord> = (doc.get("nodes").and_then(Value::as_array))
        .map(|nodes| nodes.iter().map(node_of).collect())
        .unwrap_or_default();
    let cpus: Vec<f64> = nodes.iter().filter_map(|n| n.cpu_pct).collect();
    let bytes: Vec<f64> = nodes.iter().filter_map(|n| n.bytes_per_payment).collect();
    let parts: Vec<&str> = label
        .split(',')
        .filter(|p| !p.is_empty() && !p.starts_with("repeat="))
        .collect();
    let made_before = made_before(doc);
    let repeat = (label.split(',')).find_map(|p| p.strip_prefix("repeat=")?.parse().ok());
    Ok(PointRecord {
        label: label.to_string(),
        group: parts.join(","),
        repeat,
        report: report.to_string(),
        complete: doc
            .get("complete")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        load: load_of(doc.get("workload"), made_before),
        envelope: envelope_of(doc),
        outside_load_pct: machine.and_then(|m| m.get("outside_load_pct")?.as_f64()),
        steal_pct: machine.and_then(|m| m.get("steal_pct")?.as_f64()),
        disturbed: machine.and_then(|m| m.get("disturbed")?.as_bool()),
        ok: u("/ok"),
        failed: u("/failed"),
        tps: results
            .get("tps_avg")
            .and_then(Value::as_f64)
            .unwrap_or(0.0),
        p50_us: u("/latency/p50_us"),
        p90_us: u("/latency/p90_us"),
        p99_us: u("/latency/p99_us"),
        cpu_pct: (!cpus.is_empty()).then(|| cpus.iter().sum()),
        bytes_per_payment: (!bytes.is_empty()).then(|| bytes.iter().sum()),
        made_before,
        nodes,
    })
}

/// The payments made before the load: the history phase's count (which includes a
/// restored snapshot's), else the snapshot's; `None` when neither made any.
fn made_before(doc: &Value) -> Option<u64> {
    let history = doc.get("history").filter(|h| !h.is_null()).map(|h| {
        let n = |k: &str| h.get(k).and_then(Value::as_u64).unwrap_or(0);
        n("before") + n("paid")
    });
    let snapshot = doc.pointer("/snapshot/payments").and_then(Value::as_u64);
    history.or(snapshot).filter(|n| *n > 0)
}

fn node_of(n: &Value) -> NodeRecord {
    let version = str_of(n, "/version");
    NodeRecord {
        name: str_of(n, "/name"),
        implementation: str_of(n, "/implementation"),
        commit: commit_in(&version),
        version,
        database: n
            .get("database")
            .and_then(Value::as_str)
            .map(str::to_string),
        cpu_pct: n.pointer("/resources/cpu_pct_avg").and_then(Value::as_f64),
        bytes_per_payment: (n.pointer("/resources/bytes_per_payment")).and_then(Value::as_f64),
    }
}

/// The commit a version string names: LND's `0.21.1-beta commit=v0.21.1-beta-12-gabc`,
/// or a `git describe` suffix (`v24.08-12-gabc1234`).
pub fn commit_in(version: &str) -> Option<String> {
    if let Some(c) = version
        .split_whitespace()
        .find_map(|w| w.strip_prefix("commit="))
    {
        return Some(c.to_string()).filter(|c| !c.is_empty());
    }
    let last = version.split_whitespace().next()?.rsplit('-').next()?;
    let hex = last.strip_prefix('g')?;
    (hex.len() >= 7 && hex.chars().all(|c| c.is_ascii_hexdigit())).then(|| hex.to_string())
}

/// The load as one line, the same for the same workload on a network with the same
/// history: a load after N payments made is not compared with one on a fresh network.
fn load_of(w: Option<&Value>, made_before: Option<u64>) -> String {
    let Some(w) = w else {
        return String::new();
    };
    let keys = [
        "kind",
        "amount_msat",
        "load_model",
        "concurrency",
        "stop_after_payments",
        "stop_after_seconds",
    ];
    let mut parts: Vec<String> = (keys.iter())
        .map(|k| format!("{k}={}", w.get(*k).unwrap_or(&Value::Null)))
        .collect();
    parts.extend(made_before.map(|n| format!("made_before={n}")));
    parts.join(" ")
}

/// Each node's and the chain's envelope (`alice cpus=0.7 memory=1073741824`), by
/// name; `none` when nothing was held to one.
fn envelope_of(doc: &Value) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut one = |name: &str, r: Option<&Value>| {
        if let Some(e) = r.and_then(|r| r.pointer("/resources/envelope")) {
            let field = |k: &str| match e.get(k) {
                Some(Value::Null) | None => "-".to_string(),
                Some(Value::String(s)) => s.clone(),
                Some(v) => v.to_string(),
            };
            parts.push(format!(
                "{name} cpus={} memory={} cpuset={}",
                field("cpus"),
                field("memory_bytes"),
                field("cpuset")
            ));
        }
    };
    for n in doc
        .get("nodes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        one(&str_of(n, "/name"), Some(n));
    }
    one("chain", doc.get("chain"));
    parts.sort();
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join("; ")
    }
}
