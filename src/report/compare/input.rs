//! Reading the runs to compare: a report directory or a report.json path each. Only
//! the fields the comparison needs are read, so fields added later do not break it;
//! a different `schema_version` is refused.

use crate::report::SCHEMA_VERSION;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Why an input is not a run this version can compare. Each message names the file
/// and what to give instead.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error(
        "{}: no such file or directory; give a report directory (holding report.json) or a report.json path",
        path.display()
    )]
    Missing { path: PathBuf },
    #[error(
        "{}: directory without report.json; give the directory `lnbench-tui SCENARIO --report DIR` wrote",
        path.display()
    )]
    NoReportInDir { path: PathBuf },
    #[error("{}: cannot read it", path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{}: not a lnbench-tui report.json; give the report.json that `lnbench-tui SCENARIO --report DIR` wrote",
        path.display()
    )]
    NotAReport {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error(
        "{}: report schema_version {found}, this lnbench-tui reads version {SCHEMA_VERSION}; compare it with the lnbench-tui release that wrote it (it says {tool})",
        path.display()
    )]
    SchemaMismatch {
        path: PathBuf,
        found: u64,
        tool: String,
    },
    #[error("{}: {why}", path.display())]
    Repeats { path: PathBuf, why: String },
}

/// One run, with what the comparison shows of it.
#[derive(Debug, Clone, Deserialize)]
pub struct RunReport {
    pub complete: bool,
    pub scenario: Scenario,
    pub nodes: Vec<Node>,
    pub workload: Workload,
    pub results: Results,
    /// The run's profiles (`profile:`), for differential flame graphs.
    #[serde(default)]
    pub profiling: Option<Profiling>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Profiling {
    pub profiles: Vec<ProfileFiles>,
}

/// One profile of a run and its files (relative to its report directory).
#[derive(Debug, Clone, Deserialize)]
pub struct ProfileFiles {
    pub node: String,
    pub kind: String,
    #[serde(default)]
    pub files: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Scenario {
    pub name: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Node {
    pub implementation: String,
    pub version: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Workload {
    pub kind: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Results {
    pub ok: u64,
    pub failed: u64,
    pub warm_up_excluded: u64,
    pub tps_avg: f64,
    pub latency: Latency,
    pub series: Vec<Point>,
    pub tool_cpu_s: Option<f64>,
    /// The host's load beside the run; absent in reports from before it was sampled.
    #[serde(default)]
    pub machine: Option<Machine>,
}

/// What the comparison reads of `results.machine`.
#[derive(Debug, Clone, Deserialize)]
pub struct Machine {
    pub outside_load_pct: f64,
    pub steal_pct: f64,
    pub disturbed: bool,
}

impl Results {
    /// failed / (ok + failed); none when no payment was made.
    pub fn failure_rate(&self) -> Option<f64> {
        let attempted = self.ok + self.failed;
        (attempted > 0).then(|| self.failed as f64 / attempted as f64)
    }

    /// Tool CPU per payment attempted, warm-up included, µs (as report.html shows it).
    pub fn tool_cpu_per_payment_us(&self) -> Option<f64> {
        let payments = self.ok + self.failed + self.warm_up_excluded;
        self.tool_cpu_s
            .filter(|_| payments > 0)
            .map(|cpu| cpu * 1e6 / payments as f64)
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct Latency {
    pub p50_us: u64,
    pub p90_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
    pub max_us: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Point {
    pub at_s: f64,
    pub tps: f64,
    pub ok: u64,
    pub p99_us: u64,
    pub warm_up: bool,
}

/// A run read from disk, with where it came from.
#[derive(Debug, Clone)]
pub struct Input {
    /// The report.json read.
    pub path: PathBuf,
    /// The name of the directory holding it, for labels when scenario and
    /// implementation do not tell runs apart.
    pub dir_name: String,
    pub report: RunReport,
}

/// Reads `arg` (a report directory or a report.json path).
pub fn load(arg: &Path) -> Result<Input, InputError> {
    if !arg.exists() {
        return Err(InputError::Missing { path: arg.into() });
    }
    let path = if arg.is_dir() {
        let json = arg.join(crate::report::json::FILE_NAME);
        if !json.is_file() {
            return Err(InputError::NoReportInDir { path: arg.into() });
        }
        json
    } else {
        arg.to_path_buf()
    };
    let text = read(&path)?;
    from_text(path, &text)
}

/// The text of a file a compared run left (report.json, sweep.json, a flame graph's
/// data): a regular file of bounded size, never a FIFO waited on.
pub fn read(path: &Path) -> Result<String, InputError> {
    crate::files::read_text(path, crate::files::REPORT_MAX_BYTES).map_err(|source| {
        InputError::Unreadable {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// A report read from `path` whose text is `text`.
pub fn from_text(path: PathBuf, text: &str) -> Result<Input, InputError> {
    let report = parse(text).map_err(|e| match e {
        ParseError::Json(source) => InputError::NotAReport {
            path: path.clone(),
            source,
        },
        ParseError::Version { found, tool } => InputError::SchemaMismatch {
            path: path.clone(),
            found,
            tool,
        },
    })?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let dir_name = std::fs::canonicalize(&dir)
        .unwrap_or(dir)
        .file_name()
        .map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
    Ok(Input {
        path,
        dir_name,
        report,
    })
}

enum ParseError {
    Json(serde_json::Error),
    Version { found: u64, tool: String },
}

/// The version is checked before the shape, so an old or newer report gets the
/// version message rather than a missing-field one.
fn parse(text: &str) -> Result<RunReport, ParseError> {
    #[derive(Deserialize)]
    struct Header {
        schema_version: u64,
        tool: HeaderTool,
    }
    #[derive(Deserialize)]
    struct HeaderTool {
        name: String,
        version: String,
    }
    let header: Header = serde_json::from_str(text).map_err(ParseError::Json)?;
    if header.schema_version != u64::from(SCHEMA_VERSION) {
        return Err(ParseError::Version {
            found: header.schema_version,
            tool: format!("{} {}", header.tool.name, header.tool.version),
        });
    }
    serde_json::from_str(text).map_err(ParseError::Json)
}
