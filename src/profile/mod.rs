//! CPU profiles of the nodes during the load (`profile:` in the scenario, or
//! `--profile`): LND through its own pprof listener (bound to loopback), native nodes
//! and the chain through `perf record`; each profile folded into stacks and drawn as a
//! flame graph for the report (`flame.rs`). Eclair (a JVM) is not profiled.
//!
//! `run.rs` asks [`listener_args`] for LND's flag before the nodes start, [`plan`]s
//! the targets once the network is up, [`start`]s the captures beside the load and
//! [`Running::finish`]es them after it (LND's heap profile is taken then).

pub mod flame;
pub mod perf;
pub mod pprof;
#[cfg(test)]
mod tests;

use crate::node::Implementation;
use crate::runtime::Runtime;
use crate::scenario::{NodeSpec, ProfileSpec, Scenario};
use anyhow::{Context, Result, anyhow};
use flame::{Folded, TopFunction};
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// LND's flag for its HTTP profiling listener (`/debug/pprof/`).
pub const PPROF_FLAG: &str = "--pprof.profile";
/// Rows of the top-functions tables.
pub const TOP_FUNCTIONS: usize = 15;
/// The profiler's cost measured on this project's reference load (docs/reports.md).
pub const MEASURED_OVERHEAD: &str = "measured on the project's reference load: below the \
     run-to-run noise (perf about 3 % of one core; see docs/reports.md, Profiles)";

/// The profiles of one run, for the report.
#[derive(Debug, Clone, Serialize)]
pub struct ProfilingReport {
    /// When the CPU profiles started, seconds into the load, and for how long.
    pub start_s: f64,
    pub seconds: f64,
    /// Successful payments per second in the profiled window, and after it (absent
    /// when either has no full second): what the profilers cost this run.
    pub tps_in_window: Option<f64>,
    pub tps_after_window: Option<f64>,
    pub profiles: Vec<ProfileReport>,
}

/// One profile (a node's CPU or heap), or why a node was not profiled.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileReport {
    /// Instance name, or `chain`.
    pub node: String,
    pub implementation: String,
    /// `cpu` or `heap` (in-use bytes at the end of the load).
    pub kind: String,
    /// `pprof`, `perf`, or `none`.
    pub profiler: String,
    /// Why there is no profile (the node's runtime, a JVM, a failed capture).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_profiled: Option<String>,
    /// What to know when reading it (frames perf could not name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Seconds into the load, and the length actually captured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// The sum over all stacks, in `unit` (`samples`, `nanoseconds`, `bytes`).
    pub total: u64,
    pub unit: String,
    /// Files in the report directory: the raw profile, the folded stacks, the SVG.
    pub files: Vec<String>,
    pub top_functions: Vec<TopFunction>,
    /// The flame graph (also in `files`), for report.html.
    #[serde(skip)]
    pub svg: Option<String>,
}

impl ProfileReport {
    fn none(node: &Target, kind: &str, why: String) -> ProfileReport {
        ProfileReport {
            node: node.name.clone(),
            implementation: node.implementation.clone(),
            kind: kind.into(),
            profiler: "none".into(),
            not_profiled: Some(crate::redact::redact_text(&why)),
            note: None,
            start_s: None,
            seconds: None,
            total: 0,
            unit: String::new(),
            files: Vec::new(),
            top_functions: Vec::new(),
            svg: None,
        }
    }

    /// The folded stacks file, if this profile has one.
    pub fn folded_file(&self) -> Option<&str> {
        self.files
            .iter()
            .map(String::as_str)
            .find(|f| f.ends_with(".folded"))
    }
}

/// Adds LND's profiling listener (127.0.0.1, a free port) to the profiled LND nodes
/// when the runtime shares this host's loopback. Returns the specs to start and each
/// listener's address by node name.
pub fn listener_args(
    scenario: &Scenario,
    runtime: &mut dyn Runtime,
) -> (Vec<NodeSpec>, HashMap<String, String>) {
    let mut nodes = scenario.nodes.clone();
    let mut listeners = HashMap::new();
    let Some(spec) = &scenario.profile else {
        return (nodes, listeners);
    };
    for node in &mut nodes {
        if node.implementation != Implementation::Lnd || !spec.nodes.contains(&node.name) {
            continue;
        }
        // The user's own listener wins.
        if node
            .args
            .iter()
            .any(|a| a.starts_with(PPROF_FLAG) || a.starts_with("--profile"))
        {
            continue;
        }
        let Some(port) = runtime.profiling().and_then(|p| p.loopback_port()) else {
            continue;
        };
        let addr = format!("127.0.0.1:{port}");
        node.args.push(format!("{PPROF_FLAG}={addr}"));
        listeners.insert(node.name.clone(), addr);
    }
    (nodes, listeners)
}

/// How one node is profiled.
#[derive(Debug, Clone)]
enum Method {
    Pprof { addr: String },
    Perf { perf: PathBuf, pid: u32 },
    Skip(String),
}

/// One node (or the chain) to profile.
#[derive(Debug, Clone)]
pub struct Target {
    name: String,
    implementation: String,
    method: Method,
}

/// Decides how each node of `spec` is profiled.
pub async fn plan(
    spec: &ProfileSpec,
    scenario: &Scenario,
    listeners: &HashMap<String, String>,
    runtime: &mut dyn Runtime,
) -> Vec<Target> {
    let perf = perf::binary();
    let mut targets = Vec::new();
    for name in &spec.nodes {
        let (implementation, lnd, jvm) = if name == crate::scenario::PROFILE_CHAIN {
            (scenario.chain.kind.to_string(), false, false)
        } else {
            let Some(node) = scenario.nodes.iter().find(|n| &n.name == name) else {
                continue;
            };
            (
                node.implementation.to_string(),
                node.implementation == Implementation::Lnd,
                node.implementation == Implementation::Eclair,
            )
        };
        let method = if jvm {
            Method::Skip(
                "Eclair runs on the JVM, whose JIT-compiled frames perf cannot name; \
                 not profiled"
                    .into(),
            )
        } else if let (true, Some(addr)) = (lnd, listeners.get(name)) {
            Method::Pprof { addr: addr.clone() }
        } else {
            let pid = match runtime.profiling() {
                Some(p) => p.host_pid(name).await,
                None => None,
            };
            match (&perf, pid) {
                (None, _) => Method::Skip("perf is not installed (or not on PATH)".into()),
                (_, None) => Method::Skip(format!(
                    "the runtime ({}) does not say which host process the node is",
                    runtime.describe()
                )),
                (Some(perf), Some(pid)) => Method::Perf {
                    perf: perf.clone(),
                    pid,
                },
            }
        };
        targets.push(Target {
            name: name.clone(),
            implementation,
            method,
        });
    }
    targets
}

/// A CPU profile taken.
struct Captured {
    raw_file: String,
    folded: Folded,
    unit: String,
    start_s: f64,
    seconds: f64,
}

/// Captures running beside the load.
pub struct Running {
    spec: ProfileSpec,
    dir: PathBuf,
    load_done: CancellationToken,
    tasks: Vec<(Target, tokio::task::JoinHandle<Result<Captured>>)>,
}

/// Starts each target's CPU capture: `spec.start` into the load, for `spec.duration`
/// (perf stops early when the load ends). `abort` (the run's cancellation) gives up
/// a capture under way. Raw files go into `dir`.
pub fn start(
    spec: &ProfileSpec,
    targets: Vec<Target>,
    dir: &Path,
    abort: CancellationToken,
) -> Running {
    let load_done = abort.child_token();
    let tasks = targets
        .into_iter()
        .map(|t| {
            let (spec, dir) = (spec.clone(), dir.to_path_buf());
            let (done, abort) = (load_done.clone(), abort.clone());
            let target = t.clone();
            let task = async move {
                tokio::select! {
                    r = capture_cpu(&target, &spec, &dir, &done) => r,
                    () = abort.cancelled() => Err(anyhow!("the run was stopped during the capture")),
                }
            };
            (t, tokio::spawn(task))
        })
        .collect();
    Running {
        spec: spec.clone(),
        dir: dir.to_path_buf(),
        load_done,
        tasks,
    }
}

fn file_stem(node: &str, kind: &str) -> String {
    format!("profile-{node}-{kind}")
}

async fn capture_cpu(
    t: &Target,
    spec: &ProfileSpec,
    dir: &Path,
    done: &CancellationToken,
) -> Result<Captured> {
    if let Method::Skip(why) = &t.method {
        return Err(anyhow!("{why}"));
    }
    let began = std::time::Instant::now();
    tokio::select! {
        () = tokio::time::sleep(spec.start) => {}
        () = done.cancelled() => {
            return Err(anyhow!("the load ended before the profile's start ({:?} in)", spec.start));
        }
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let start_s = began.elapsed().as_secs_f64();
    let stem = file_stem(&t.name, "cpu");
    match &t.method {
        Method::Pprof { addr } => {
            let secs = spec.duration.as_secs().max(1);
            let url = format!("http://{addr}/debug/pprof/profile?seconds={secs}");
            let started = std::time::Instant::now();
            let bytes = fetch(&url, Duration::from_secs(secs + 30)).await?;
            let seconds = started.elapsed().as_secs_f64();
            let raw_file = format!("{stem}.pb.gz");
            crate::files::write_bytes(dir, &raw_file, &bytes)?;
            let profile = pprof::parse(&bytes).context("LND's CPU profile")?;
            let index = profile
                .value_index(&["cpu"])
                .context("the profile has no values")?;
            Ok(Captured {
                raw_file,
                folded: profile.fold(index),
                unit: "nanoseconds".into(),
                start_s,
                seconds,
            })
        }
        Method::Perf { perf, pid } => {
            let raw_file = format!("{stem}.perf.data");
            let data = dir.join(&raw_file);
            let recorded = perf::record(perf, *pid, spec.duration, &data, done).await?;
            let folded = perf::fold(perf, &data).await?;
            Ok(Captured {
                raw_file,
                folded,
                // perf weighs each sample by its period: cpu-clock nanoseconds.
                unit: "nanoseconds".into(),
                start_s,
                seconds: recorded.as_secs_f64(),
            })
        }
        Method::Skip(_) => unreachable!("returned above"),
    }
}

/// GETs `url` from a loopback listener (plain HTTP).
async fn fetch(url: &str, timeout: Duration) -> Result<Vec<u8>> {
    let client = reqwest::Client::builder()
        .timeout(timeout)
        .no_proxy()
        .build()
        .context("building the HTTP client")?;
    let response = client
        .get(url)
        .send()
        .await
        .with_context(|| format!("GET {url}"))?;
    let status = response.status();
    if !status.is_success() {
        return Err(anyhow!("GET {url}: {status}"));
    }
    Ok(response
        .bytes()
        .await
        .with_context(|| format!("reading {url}"))?
        .to_vec())
}

impl Running {
    /// Ends the captures (the load is over), takes LND's heap profiles, folds and draws
    /// everything, and writes the files into the report directory.
    pub async fn finish(mut self, summary: &crate::metrics::Summary) -> ProfilingReport {
        self.load_done.cancel();
        let mut profiles = Vec::new();
        for (target, task) in std::mem::take(&mut self.tasks) {
            let cpu = match task.await {
                Ok(r) => r,
                Err(e) => Err(anyhow!("the capture task failed: {e}")),
            };
            profiles.push(match cpu {
                Ok(c) => self.written(&target, "cpu", c).await,
                Err(e) => ProfileReport::none(&target, "cpu", format!("{e:#}")),
            });
            if let Method::Pprof { addr } = &target.method {
                let heap = self.heap(&target, addr).await;
                profiles.push(match heap {
                    Ok(c) => self.written(&target, "heap", c).await,
                    Err(e) => ProfileReport::none(&target, "heap", format!("{e:#}")),
                });
            }
        }
        let (start, secs) = (
            self.spec.start.as_secs_f64(),
            self.spec.duration.as_secs_f64(),
        );
        let (tps_in_window, tps_after_window) = window_tps(summary, start, start + secs);
        ProfilingReport {
            start_s: start,
            seconds: secs,
            tps_in_window,
            tps_after_window,
            profiles,
        }
    }

    async fn heap(&self, t: &Target, addr: &str) -> Result<Captured> {
        let bytes = fetch(
            &format!("http://{addr}/debug/pprof/heap"),
            Duration::from_secs(30),
        )
        .await?;
        let raw_file = format!("{}.pb.gz", file_stem(&t.name, "heap"));
        crate::files::write_bytes(&self.dir, &raw_file, &bytes)?;
        let profile = pprof::parse(&bytes).context("LND's heap profile")?;
        let index = profile
            .value_index(&["inuse_space"])
            .context("the profile has no values")?;
        Ok(Captured {
            raw_file,
            folded: profile.fold(index),
            unit: "bytes".into(),
            start_s: 0.0,
            seconds: 0.0,
        })
    }

    /// Folded file and flame graph of a capture, written beside the raw file.
    async fn written(&self, t: &Target, kind: &str, c: Captured) -> ProfileReport {
        let stem = file_stem(&t.name, kind);
        let folded_file = format!("{stem}.folded");
        let svg_file = format!("flamegraph-{}-{kind}.svg", t.name);
        let profiler = match t.method {
            Method::Pprof { .. } => "pprof",
            _ => "perf",
        };
        let title = match kind {
            "heap" => format!(
                "{} ({}): memory in use at the end of the load",
                t.name, t.implementation
            ),
            _ => format!(
                "{} ({}): CPU, {:.0} s from {:.0} s into the load",
                t.name, t.implementation, c.seconds, c.start_s
            ),
        };
        let subtitle = format!(
            "{profiler}; width = share of {}; hover a frame for its figures",
            c.unit
        );
        let folded_for_note = unnamed_share(&c.folded);
        let (folded, unit) = (c.folded, c.unit.clone());
        let dir = self.dir.clone();
        let (ff, sf) = (folded_file.clone(), svg_file.clone());
        let drawn =
            tokio::task::spawn_blocking(move || -> Result<(String, Vec<TopFunction>, u64)> {
                if folded.is_empty() {
                    return Err(anyhow!("the profile holds no stacks"));
                }
                let svg = flame::render(&folded, &title, &subtitle, &unit)?;
                crate::files::write_file(&dir, &ff, &flame::folded_text(&folded))?;
                crate::files::write_file(&dir, &sf, &svg)?;
                Ok((
                    svg,
                    flame::top_functions(&folded, TOP_FUNCTIONS),
                    folded.values().sum(),
                ))
            })
            .await
            .map_err(|e| anyhow!("drawing failed: {e}"))
            .and_then(|r| r);
        match drawn {
            Ok((svg, top, total)) => ProfileReport {
                node: t.name.clone(),
                implementation: t.implementation.clone(),
                kind: kind.into(),
                profiler: profiler.into(),
                not_profiled: None,
                note: unnamed_note(&folded_for_note, &t.implementation),
                start_s: (kind == "cpu").then_some(c.start_s),
                seconds: (kind == "cpu").then_some(c.seconds),
                total,
                unit: c.unit,
                files: vec![c.raw_file, folded_file, svg_file],
                top_functions: top,
                svg: Some(svg),
            },
            Err(e) => ProfileReport::none(t, kind, format!("{e:#}")),
        }
    }
}

/// The share of samples whose running frame perf could not name (`[binary]`).
fn unnamed_share(folded: &Folded) -> f64 {
    let all: u64 = folded.values().sum();
    let unnamed: u64 = (folded.iter())
        .filter(|(stack, _)| {
            stack
                .rsplit(';')
                .next()
                .is_some_and(|leaf| leaf.starts_with('[') && leaf.ends_with(']'))
        })
        .map(|(_, n)| n)
        .sum();
    if all == 0 {
        0.0
    } else {
        unnamed as f64 / all as f64
    }
}

fn unnamed_note(share: &f64, implementation: &str) -> Option<String> {
    (*share > 0.3).then(|| {
        format!(
            "{:.0} % of the samples ran in frames perf could not name (shown as [binary]): \
             this {implementation} binary is stripped of its symbol table; a build with \
             symbols shows function names",
            share * 100.0
        )
    })
}

/// One line for the terminal about a profile.
pub fn describe(p: &ProfileReport) -> String {
    match (&p.not_profiled, p.files.last()) {
        (Some(why), _) => format!("profile {} {}: none ({why})", p.node, p.kind),
        (None, Some(svg)) => format!("profile {} {} ({}): {svg}", p.node, p.kind, p.profiler),
        (None, None) => format!("profile {} {}: no files", p.node, p.kind),
    }
}

/// Mean TPS of the series points inside `[from, to]` seconds of the load, and of
/// those after it (the load's start, slower while gossip and first payments settle,
/// is in neither).
pub fn window_tps(
    summary: &crate::metrics::Summary,
    from: f64,
    to: f64,
) -> (Option<f64>, Option<f64>) {
    let (mut inside, mut after) = ((0.0, 0.0), (0.0, 0.0));
    let step = f64::from(summary.series_resolution_s.max(1));
    for p in &summary.series {
        let begin = p.at_s - step;
        let acc = if begin >= from - 0.5 && p.at_s <= to + 0.5 {
            &mut inside
        } else if begin >= to - 0.5 {
            &mut after
        } else {
            continue;
        };
        acc.0 += p.tps * p.active_s;
        acc.1 += p.active_s;
    }
    let mean = |(ok, s): (f64, f64)| (s >= 1.0).then(|| ok / s);
    (mean(inside), mean(after))
}
