//! A run, start to end. A run is a plan of points on networks, in the shape hyperfine
//! uses: expand first, then one loop runs the list. A scenario without `sweep:` is
//! one network with one point; with `sweep:`, each network is brought up once for
//! the points that share it, and a combined report follows.
//!
//! - `plan`: the points and networks, and what cannot run here, before anything starts;
//! - `network`: one network (run id and directory, runtime, live view, bring-up, its
//!   points, teardown);
//! - `bring_up`: setting a network up; `point`: one load and its report; `load`: the
//!   engine and the processes watched beside it;
//! - `sweep`: how the points ended, the exit code, and the combined report.

use crate::exit::Exit;
use crate::scenario::Scenario;
use anyhow::Result;
use std::path::PathBuf;
use std::time::SystemTime;

mod activity;
mod bring_up;
mod choose;
mod external;
mod history;
mod load;
pub(crate) mod metrics_endpoint;
mod model;
mod network;
mod output;
mod plan;
mod point;
mod reconcile;
mod run_dir;
mod signals;
mod snapshot;
mod sweep;
#[cfg(test)]
mod tests;

pub use bring_up::{Network, RunFacts, bring_up};
pub(crate) use choose::Choose;
#[cfg(test)]
use choose::Chosen;
pub(crate) use plan::skips_here;
pub(crate) use signals::Signals;
pub(crate) use snapshot::save as save_snapshot;

/// Options of one run that do not come from the scenario.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub report_dir: Option<PathBuf>,
    pub keep: bool,
    pub run_dir_parent: Option<PathBuf>,
    /// Follow the run in the live terminal view instead of progress lines.
    pub tui: bool,
    /// `--metrics-listen`: serve Prometheus / OpenMetrics here during the run.
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// `--junit FILE`: the threshold verdicts as JUnit XML, written at the end.
    pub junit: Option<PathBuf>,
    /// `--snapshot`: the snapshot directory the network is restored from.
    pub snapshot: Option<PathBuf>,
    /// `--upgrade`: nodes saved with other versions are restored, and migrate.
    pub upgrade: bool,
}

/// Runs `scenario` to the end and returns the exit code.
pub async fn execute(scenario: Scenario, opts: RunOptions) -> Result<Exit> {
    execute_with(scenario, &opts, &choose::Runtimes, Signals::watch()).await
}

/// What every network of a run shares.
struct Ctx<'a> {
    plan: &'a plan::Plan,
    opts: &'a RunOptions,
    signals: &'a Signals,
    exporter: Option<&'a crate::metrics::export::Exporter>,
    runtimes: &'a dyn Choose,
    started_at: SystemTime,
    /// The random part of the run's id, shared by its networks.
    run_token: String,
    /// How many networks have a point to run.
    networks: usize,
    /// Mainnet caps: what every load of the run spent, against the caps.
    ledger: Option<std::sync::Arc<crate::engine::ledger::SpendLedger>>,
}

/// [`execute`] with the runtimes and the signals given (the tests' fake runtime and
/// raised signals).
pub(crate) async fn execute_with(
    scenario: Scenario,
    opts: &RunOptions,
    runtimes: &dyn Choose,
    signals: Signals,
) -> Result<Exit> {
    crate::tls::install_crypto_provider();
    let plan = plan::Plan::new(scenario)?;
    let exporter = metrics_endpoint::start(opts.metrics_listen, &plan.scenario.name).await?;
    let networks = plan.networks();
    plan.announce(networks.len());
    let ctx = Ctx {
        plan: &plan,
        opts,
        signals: &signals,
        exporter: exporter.as_ref(),
        runtimes,
        started_at: SystemTime::now(),
        run_token: run_dir::run_token(),
        networks: networks.len(),
        ledger: spend_ledger(&plan.scenario),
    };
    let mut tally = sweep::Tally::new(plan.len());
    for (position, points) in networks.iter().enumerate() {
        if tally.stopped() {
            break;
        }
        network::run(&ctx, position, points, &mut tally).await?;
    }
    let started_at = ctx.started_at;
    tally.finish(&plan, opts, signals, started_at)
}

/// One ledger for the whole run when mainnet is allowed (every point and repeat
/// spends against the same caps); None otherwise.
fn spend_ledger(scenario: &Scenario) -> Option<std::sync::Arc<crate::engine::ledger::SpendLedger>> {
    let settings = scenario.external.as_ref().filter(|e| e.allow_mainnet)?;
    Some(std::sync::Arc::new(
        crate::engine::ledger::SpendLedger::new(
            settings.max_payment_msat.unwrap_or(0),
            settings.max_total_msat.unwrap_or(0),
        ),
    ))
}
