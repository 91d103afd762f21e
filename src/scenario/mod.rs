//! Scenario files: YAML -> raw serde model -> semantic validation -> [`Scenario`].
//!
//! The types in this file are the validated scenario the rest of the tool uses.

mod activity;
mod attack;
#[cfg(test)]
pub(crate) mod attack_tests;
mod capabilities;
mod caps;
mod db_backend;
mod dist;
mod duration;
mod error;
pub mod external;
mod faults;
mod graph_import;
mod groups;
mod history;
#[cfg(test)]
mod history_tests;
mod kube;
#[cfg(test)]
mod network_tests;
mod overrides;
mod parts;
#[cfg(test)]
#[path = "parts/tests.rs"]
mod parts_tests;
mod paths;
mod profile;
mod raw;
mod rebalance;
#[cfg(test)]
mod rebalance_tests;
mod repeat;
mod resources;
mod stream;
#[cfg(test)]
mod stream_tests;
mod sweep;
#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) use tests::parse_error;
mod thresholds;
mod topology;
mod validate;
mod workload;

pub use activity::Activity;
pub use attack::{Attack, MAX_SLOTS};
pub use capabilities::{Capabilities, Runtimes, Support};
pub use db_backend::DbBackend;
pub use dist::Dist;
pub use error::{Position, ScenarioError};
pub use faults::{
    EVERY as LINK_EVERY, Fault, FaultAction, FaultTrigger, LinkChange, LinkEnd, LinkPair,
    LinkShape, LinkSpec,
};
pub use history::{History, MAX_PAYMENTS as MAX_HISTORY_PAYMENTS};
pub use kube::{KubeSettings, object_name_ok};
pub use overrides::{Overrides, duration_flag, payments_flag};
pub use profile::{CHAIN as PROFILE_CHAIN, ProfileSpec};
pub use rebalance::Rebalance;
pub use repeat::{Judge, MAX_REPEATS, Repeat};
pub use resources::{Envelope, Resources, cpuset_cpus};
pub use stream::{Split, Stream, split_amounts};
pub use sweep::{MAX_POINTS, Sweep, SweepParam, SweepPoint, SweepValue};
pub use thresholds::{LatencyStat, PhaseThreshold, Threshold};
pub use topology::{Shape, Topology};

pub use crate::node::Database;
use crate::node::Implementation;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The largest scenario file read: far above any real one (the shipped ones are under
/// 10 KiB), far below what would exhaust memory.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

fn read(path: &Path) -> Result<String, ScenarioError> {
    crate::files::read_text(path, MAX_FILE_BYTES).map_err(|error| ScenarioError::Unreadable {
        path: path.to_path_buf(),
        error,
    })
}

/// Reads and validates a scenario file for the registered `runtimes`. An unreadable
/// file is an error naming the path.
pub fn load(path: &Path, runtimes: Runtimes) -> Result<Scenario, ScenarioError> {
    let text = read(path)?;
    parse(path, &text, runtimes)
}

/// [`load`], with `--repeat N` in place of the file's repeat count.
pub fn load_with_repeat(
    path: &Path,
    repeat: Option<u32>,
    runtimes: Runtimes,
) -> Result<Scenario, ScenarioError> {
    let text = read(path)?;
    parse_with_repeat(path, &text, repeat, runtimes)
}

/// Parses and validates scenario `text` for the registered `runtimes`; `path` is only
/// used in messages and kept in the result.
pub fn parse(path: &Path, text: &str, runtimes: Runtimes) -> Result<Scenario, ScenarioError> {
    parse_with_repeat(path, text, None, runtimes)
}

pub(crate) fn parse_with_repeat(
    path: &Path,
    text: &str,
    repeat_count: Option<u32>,
    runtimes: Runtimes,
) -> Result<Scenario, ScenarioError> {
    let mut raw: raw::RawScenario =
        serde_saphyr::from_str(text).map_err(|e| ScenarioError::from_yaml(path, text, &e))?;
    let ctx = error::Ctx { path, source: text };
    caps::check_uncapped_workloads(&ctx, &raw)?;
    let raw_repeat = raw.repeat.take();
    let repeat = repeat::validate(&ctx, raw_repeat.as_ref(), repeat_count)?;
    // Where a repeat error points: `repeat:`, else the sweep, else the name.
    let at = (raw_repeat.as_ref().map(|r| r.referenced))
        .or(raw.sweep.as_ref().map(|s| s.referenced))
        .unwrap_or(raw.name.referenced);
    let total_at = (raw.external.as_ref())
        .and_then(|e| e.value.max_total_msat.as_ref())
        .map(|t| t.referenced);
    let mut scenario = match raw.sweep.is_some() {
        // Each point is the file with the point's values put in, validated on its own.
        true => sweep::expand(path, text, raw, runtimes)?,
        false => validate::validate(path, text, raw, runtimes)?,
    };
    scenario.repeat = repeat;
    repeat::check_drain(&ctx, &scenario, &at)?;
    let scenario = repeat::expand(&ctx, scenario, &at)?;
    caps::check_run_total(&ctx, &scenario, total_at)?;
    Ok(scenario)
}

/// Members `etcd: { members: N }` may ask for: a quorum needs an odd count. The
/// runtimes that start etcd follow this limit.
pub const ETCD_MEMBER_COUNTS: &[u32] = &[1, 3, 5];

/// Where a scenario runs its nodes.
/// The file names it (`runtime: docker`); the runtimes register under it
/// (`runtime::registration`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuntimeKind {
    /// Docker when an engine answers (and no `binary:` is set), else local: the
    /// runtime of a file that names none.
    #[default]
    Auto,
    /// One container per node and for the chain, on a network of the run's own.
    Docker,
    /// Processes of this machine.
    Local,
    /// Nodes that already run elsewhere: nothing is started, funded or stopped.
    External,
    /// A pod per node and for the chain, in a namespace of the run's own, on the
    /// cluster a kubeconfig names.
    Kubernetes,
}

impl RuntimeKind {
    /// Every kind, in the order messages list them.
    pub const ALL: [RuntimeKind; 5] = [
        RuntimeKind::Auto,
        RuntimeKind::Local,
        RuntimeKind::Docker,
        RuntimeKind::Kubernetes,
        RuntimeKind::External,
    ];
}

/// When the docker runtime pulls an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PullPolicy {
    /// Pull only images that are not present locally.
    #[default]
    IfMissing,
    /// Pull every image before the run, even if present.
    Always,
    /// Never pull: every image must be present (e.g. built by scripts/build-images.sh).
    Never,
}

/// The chain backend.
pub use crate::chain::ChainKind;

#[derive(Debug, Clone, PartialEq)]
pub struct ChainSpec {
    pub kind: ChainKind,
    /// Explicit binary path; `None` means: look in the build cache, then PATH.
    pub binary: Option<PathBuf>,
    /// Docker image for the docker runtime; `None` means the locally built one.
    pub image: Option<String>,
    pub args: Vec<String>,
}

/// One node instance (replicas are already expanded: `alice` with 3 replicas gives
/// `alice-1`, `alice-2`, `alice-3`; a single replica keeps the plain name).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeSpec {
    /// Instance name, unique in the run.
    pub name: String,
    /// The name under `nodes:` this instance came from.
    pub group: String,
    pub implementation: Implementation,
    /// Version the user asked for (informational for `local`; image tag for docker).
    pub version: Option<String>,
    pub binary: Option<PathBuf>,
    /// Docker image for the docker runtime; `None` means the default for the
    /// implementation and version.
    pub image: Option<String>,
    /// `runtime: external`: how to reach the node (None for nodes the runtime starts).
    pub external: Option<external::ExternalNode>,
    /// Where the node keeps its state: its implementation's default, or a database on
    /// the PostgreSQL server the runtime starts.
    pub database: Database,
    /// Core Lightning: the command that pays invoices (`payment_engine:`).
    pub payment_engine: crate::node::PaymentEngine,
    /// Extra command-line arguments, appended after the tool's own.
    pub args: Vec<String>,
    /// Its share of the machine (`resources:`); None: not limited.
    pub resources: Option<Envelope>,
}

/// Channels between two node instances (expanded from groups).
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelSpec {
    /// Instance name of the opener (and funder).
    pub from: String,
    pub to: String,
    pub capacity_sat: u64,
    /// How many parallel channels between this pair.
    pub count: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PaymentKind {
    /// Spontaneous payment, no invoice.
    Keysend,
    /// The receiver creates an invoice, the sender pays it; creation is timed as part
    /// of the payment (DG Lab's method).
    Invoice,
    /// Invoices created before the timed phase; only paying them is timed.
    InvoicePregenerated,
    /// One tick pays its total split across recipients, a keysend each with the
    /// podcast record ([`Workload::stream`]).
    Stream,
}

/// One open-loop phase: the rate goes linearly from `from_rate` to `to_rate`
/// (payments per second) over `duration`.
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    pub kind: PhaseKind,
    pub from_rate: f64,
    pub to_rate: f64,
    pub duration: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PhaseKind {
    /// Payments are made but not counted in the results.
    WarmUp,
    Ramp,
    Hold,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Load {
    /// `concurrency` workers, each pays, waits for the result, pays again.
    Closed { concurrency: u32 },
    /// Payments scheduled at a rate, phase after phase (warm-up, ramp, hold);
    /// latency counts from the intended start time.
    Open { phases: Vec<Phase> },
}

/// When the timed load stops: whichever comes first. At least one is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StopCondition {
    pub payments: Option<u64>,
    pub duration: Option<Duration>,
    /// Draining channels: stop once this many payments failed for lack of liquidity
    /// (no route, insufficient balance).
    pub liquidity_failures: Option<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    pub kind: PaymentKind,
    /// Instance names of the paying nodes.
    pub senders: Vec<String>,
    /// Instance names of the receiving nodes (senders pay them round-robin).
    pub receivers: Vec<String>,
    pub amount_msat: u64,
    pub load: Load,
    pub stop: StopCondition,
    /// How long one payment may take before it counts as a timeout.
    pub payment_timeout: Duration,
    /// `kind: stream`: each tick's splits (the receivers are its recipients).
    pub stream: Option<Stream>,
    /// Invoice payments: the most parts the sender may split one into (multi-part
    /// payments); None leaves the node's default.
    pub max_parts: Option<u32>,
    /// `attack:`: jamming beside the honest load (None: no attack).
    pub attack: Option<Attack>,
    /// `rebalance:`: circular rebalancing beside the load (None: none).
    pub rebalance: Option<Rebalance>,
}

/// A validated scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub runtime: RuntimeKind,
    /// When the docker runtime pulls images.
    pub pull: PullPolicy,
    pub chain: ChainSpec,
    pub nodes: Vec<NodeSpec>,
    pub channels: Vec<ChannelSpec>,
    pub workload: Workload,
    /// Pass / fail criteria checked at the end (empty when the file has none).
    pub thresholds: Vec<Threshold>,
    /// Thresholds on one open-loop phase each (`phase: hold`), in file order.
    pub phase_thresholds: Vec<PhaseThreshold>,
    /// The file it came from and its text as written, for the report.
    pub path: PathBuf,
    pub source: String,
    /// `sweep:`: the points to run in turn (each a complete scenario without a sweep).
    pub sweep: Option<Sweep>,
    /// `repeat:` (count 1 when absent). With a count above 1 the repeats are already
    /// points of `sweep` (`repeat=K`).
    pub repeat: Repeat,
    /// `after_load: { restart: ... }`: instance names to stop and start again, one
    /// after the other, once the load has ended (timed into the report). Empty: none.
    pub restart: Vec<String>,
    /// Members of the etcd the runtime starts for nodes on `--db.backend=etcd`
    /// (`etcd: { members: N }`; 1 when absent).
    pub etcd_members: u32,
    /// `runtime: external`'s settings (None for other runtimes).
    pub external: Option<external::ExternalSettings>,
    /// `profile:` (or `--profile`): CPU profiles of these nodes during the load.
    pub profile: Option<ProfileSpec>,
    /// `links:`: shapes of peer links from setup on (through the fault proxy).
    pub links: Vec<LinkSpec>,
    /// `faults:`: what happens to nodes, links and the chain during the load.
    pub faults: Vec<Fault>,
    /// `mining: { every }`: a block mined this often during the load (until a
    /// `mining: stop` fault). None: no background mining.
    pub mining: Option<std::time::Duration>,
    /// `topology:`: the generated graph (its nodes and channels are in `nodes` and
    /// `channels` like written ones).
    pub topology: Option<Topology>,
    /// `workload: activity:`: random peers across the network (`workload.senders`
    /// are its senders, `workload.receivers` every node).
    pub activity: Option<Activity>,
    /// `runtime: kubernetes`'s settings (None for other runtimes).
    pub kubernetes: Option<KubeSettings>,
    /// `resources:` of the chain and the database servers (the nodes' are in `nodes`).
    pub resources: Resources,
    /// `snapshot:`: the saved network to start from (`--snapshot` overrides it).
    pub snapshot: Option<SnapshotField>,
    /// `history:`: payments the network has made before the measured load (None:
    /// the load starts on the network as setup left it).
    pub history: Option<History>,
}

/// `snapshot: NAME` (a snapshot in the cache) or `snapshot: ./DIR` (relative to the
/// scenario file), as written, with where (`file:line:column`) for its refusals.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotField {
    pub value: String,
    pub at: String,
}

impl Scenario {
    /// True when peer connections go through the fault proxy: the scenario shapes
    /// links or has link faults.
    pub fn proxied_links(&self) -> bool {
        !self.links.is_empty() || self.faults.iter().any(Fault::is_link)
    }
}
