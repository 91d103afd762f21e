//! Snapshots around a run (local and docker runtimes): `snapshot save` sets a network
//! up as a run does, stops it and keeps its data dirs (a container's `/data`); a run
//! with `--snapshot` copies them into its own directory (into each container) before
//! the chain and nodes start, and setup then skips funding
//! and channel opening (see `bring_up.rs`) and waits for the channels to come back.

use super::bring_up::{RunFacts, bring_up};
use super::{RunOptions, Signals, choose::Choose};
use crate::exit::Exit;
use crate::runtime::Snapshots;
use crate::scenario::Scenario;
use crate::setup::StepLog;
use crate::snapshot::{self, Manifest, SnapshotError};
use anyhow::{Context, Result};
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

mod ladder;

/// How long a node being saved may take to exit on SIGTERM (LND after 50,000
/// payments took about 30 s here); one that needs longer is killed and not saved.
const NODE_STOP_LIMIT: Duration = crate::runtime::RESTART_STOP_DEADLINE;

/// The snapshots of the run's runtime (`described`, as the run names it), or the
/// refusal where it keeps no data on this machine.
fn keeper(
    scenario: &Scenario,
    offered: Option<&'static dyn Snapshots>,
    described: &str,
) -> Result<&'static dyn Snapshots, SnapshotError> {
    offered.ok_or_else(|| SnapshotError::Refused {
        at: snapshot::locate_in_file(&scenario.source, &scenario.path, "runtime:"),
        detail: format!(
            "snapshots are kept for the local and docker runtimes only, this run is on \
             {described}: write `runtime: local` or `runtime: docker`"
        ),
    })
}

/// Before setup of a run with `--snapshot`: checks the snapshot against the scenario
/// and this machine's binaries, and copies its data dirs into `run_dir`.
pub(super) async fn restore(
    opts: &RunOptions,
    scenario: &Scenario,
    (run_dir, offered): (&Path, Option<&'static dyn Snapshots>),
    log: &mut StepLog,
    facts: &mut RunFacts,
) -> Result<()> {
    // `--snapshot`, else the scenario's `snapshot:` (its refusals say where it is).
    let (dir, field) = match (&opts.snapshot, &scenario.snapshot) {
        (Some(dir), _) => (dir.clone(), None),
        (None, Some(f)) => (snapshot::resolve_field(&scenario.path, &f.value), Some(f)),
        (None, None) => return Ok(()),
    };
    let at_field = |e: SnapshotError| match field {
        Some(f) => anyhow::Error::new(e).context(format!("{}: snapshot: {}", f.at, f.value)),
        None => e.into(),
    };
    let kept = keeper(scenario, offered, &facts.runtime)?;
    log.begin("snapshot restored");
    let started = Instant::now();
    let versions = kept.versions(scenario).await?;
    let (manifest, migrations) =
        snapshot::check(&dir, scenario, &versions, opts.upgrade).map_err(at_field)?;
    let root = kept.data_root(run_dir);
    let bytes = snapshot::restore(&dir, &manifest, &root).map_err(at_field)?;
    let blocks = root
        .join(crate::chain::CHAIN_NAME)
        .join(snapshot::CHAIN_BLOCKS);
    let text = crate::files::read_text(&blocks, crate::files::REPORT_MAX_BYTES)
        .map_err(SnapshotError::io(&blocks))?;
    facts.blocks = text.lines().map(str::to_string).collect();
    let restore_s = started.elapsed().as_secs_f64();
    let name = dir.file_name().map_or_else(
        || dir.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    log.progress(&format!(
        "{} files, {:.1} MB from {name}, saved {}",
        manifest.files.len(),
        bytes as f64 / 1e6,
        manifest.saved_at
    ));
    crate::lines::errln!(
        "snapshot {name} (saved {}, setup then took {:.1} s): restored in {restore_s:.1} s",
        manifest.saved_at,
        manifest.setup_s
    );
    facts.snapshot = Some(crate::report::SnapshotRef {
        name,
        saved_at: manifest.saved_at,
        saved_setup_s: manifest.setup_s,
        restore_s,
        payments: manifest.payments,
        migrations: (migrations.into_iter())
            .map(|m| {
                crate::lines::errln!(
                    "    {} was saved on {} and migrates to {} as it starts",
                    m.node,
                    m.from,
                    m.to
                );
                crate::report::SnapshotMigration {
                    node: m.node,
                    from: m.from,
                    to: m.to,
                    ready_s: 0.0,
                    logged: Vec::new(),
                }
            })
            .collect(),
    });
    Ok(())
}

/// `lnbench-tui snapshot save`: one snapshot, or one per step of a history ladder.
pub(crate) async fn save(scenario: Scenario, opts: RunOptions, to: &Path) -> Result<Exit> {
    match &scenario.sweep {
        Some(sweep) if ladder::is_ladder(sweep) => ladder::save(sweep, opts, to).await,
        Some(_) => Err(SnapshotError::Refused {
            at: scenario.path.display().to_string(),
            detail: "`snapshot save` keeps one network: take `sweep:` out, or sweep the \
                     history alone (`sweep: { history: [10000, 50000] }`), which saves \
                     each step"
                .into(),
        }
        .into()),
        None => save_one(scenario, opts, to).await,
    }
}

/// Sets the scenario's network up (or restores `--from`'s snapshot, `opts.snapshot`),
/// pays its `history:`, stops it cleanly and keeps it in `to`. The run directory is
/// removed after (unless `--keep`); nothing is left running however it ends.
async fn save_one(scenario: Scenario, opts: RunOptions, to: &Path) -> Result<Exit> {
    if let Some(refused) = snapshot::refusal(&scenario) {
        return Err(refused.into());
    }
    snapshot::check_target(to)?;
    let signals = Signals::watch();
    let chosen = super::choose::Runtimes.choose(&scenario).await?;
    let started_at = SystemTime::now();
    let run_id = format!("{}-snapshot-{}", scenario.name, super::run_dir::run_token());
    let run_dir = super::run_dir::make_run_dir(&opts, &run_id)?;
    let mut runtime = chosen.create(&crate::runtime::Place {
        run_id: &run_id,
        scenario: &scenario.name,
        run_dir: &run_dir,
        keep: true,
    });
    let mut facts = RunFacts::on(runtime.as_ref());
    crate::lines::errln!("snapshot of {} on {}", scenario.name, facts.runtime);
    let mut log = StepLog::default();
    let setup_started = Instant::now();
    let offered = runtime.snapshots();
    let (kept, up) = match keeper(&scenario, offered, &facts.runtime) {
        Err(e) => (None, Err(e.into())),
        Ok(kept) => (
            Some(kept),
            tokio::select! {
                r = async {
                    restore(&opts, &scenario, (&run_dir, offered), &mut log, &mut facts).await?;
                    bring_up(&scenario, runtime.as_mut(), &mut log, &mut facts).await
                } => r.map(Some),
                () = signals.cancel.cancelled() => Ok(None),
            },
        ),
    };
    // A network restored from a snapshot keeps that one's setup time: what setting
    // such a network up costs, which a restore of this one saves.
    let setup_s = (facts.snapshot.as_ref()).map_or_else(
        || setup_started.elapsed().as_secs_f64(),
        |s| s.saved_setup_s,
    );
    log.end();
    // `history:`'s payments (on top of a restored snapshot's), then the chain's
    // blocks, read while it runs.
    let mut made = facts.snapshot.as_ref().map_or(0, |s| s.payments);
    let up = match up {
        Ok(Some(network)) => {
            let mut log = StepLog::default();
            match super::history::top_up(&scenario, &network, &mut made, &signals.cancel, &mut log)
                .await
            {
                Err(e) => Err(e),
                Ok(_) if signals.cancel.is_cancelled() => Ok(None),
                Ok(_) => chain_blocks(&network).await.map(Some),
            }
        }
        other => other.map(|_| None),
    };
    // The nodes and chain stop before their files are read.
    let mut teardown = StepLog::default();
    teardown.begin("nodes and chain stopped");
    let down = match runtime.patient_down() {
        Some(p) => p.down_for_snapshot(NODE_STOP_LIMIT).await,
        None => runtime.down().await.map(|()| Vec::new()),
    };
    teardown.end();
    let saved = match (up, down) {
        (Err(e), _) => Err(e),
        (Ok(None), _) => Ok(None),
        (Ok(Some(_)), Err(e)) => Err(anyhow::Error::new(e).context("stopping the network")),
        (Ok(Some(_)), Ok(killed)) if !killed.is_empty() => Err(anyhow::anyhow!(
            "{} did not stop within {} s of SIGTERM and had to be killed: the snapshot \
             would keep a killed node's files, so nothing was saved; try again, or look \
             in the node's log (`--keep` keeps the run directory) for what held it",
            killed.join(", "),
            NODE_STOP_LIMIT.as_secs()
        )),
        (Ok(Some(blocks)), Ok(_)) => {
            let kept = kept.context("internal: a network up without snapshots")?;
            let saving = Saving {
                blocks: &blocks,
                started_at,
                setup_s,
                payments: made,
            };
            keep(&scenario, &kept.data_root(&run_dir), to, saving, kept)
                .await
                .map(Some)
        }
    };
    if opts.keep {
        crate::leftovers::release(&run_dir);
        crate::lines::errln!("    kept run directory {}", run_dir.display());
    } else if let Err(e) = std::fs::remove_dir_all(&run_dir) {
        crate::lines::errln!("    run directory {} not removed: {e}", run_dir.display());
    }
    match saved? {
        Some(()) => Ok(Exit::Ok),
        None => Ok(Exit::for_signal(signals.received().unwrap_or("SIGINT"))),
    }
}

async fn chain_blocks(network: &super::Network) -> Result<Vec<String>> {
    let chain = (network.chain.as_ref()).context("the network has no chain to save")?;
    Ok(chain.raw_blocks().await?)
}

/// What the manifest of a snapshot being saved records besides its files.
struct Saving<'a> {
    /// The chain's raw blocks.
    blocks: &'a [String],
    started_at: SystemTime,
    setup_s: f64,
    /// Payments made on the network (`history:`).
    payments: u64,
}

/// Copies the stopped network's data dirs (under `root`) into the snapshot, with the
/// chain's `blocks` and the manifest.
async fn keep(
    scenario: &Scenario,
    root: &Path,
    to: &Path,
    saving: Saving<'_>,
    kept: &dyn Snapshots,
) -> Result<()> {
    let Saving {
        blocks,
        started_at,
        setup_s,
        payments,
    } = saving;
    let path = root
        .join(crate::chain::CHAIN_NAME)
        .join(snapshot::CHAIN_BLOCKS);
    let mut text = blocks.join("\n");
    text.push('\n');
    std::fs::write(&path, text).map_err(SnapshotError::io(&path))?;
    let versions = kept.versions(scenario).await?;
    let saved_at = humantime::format_rfc3339_seconds(started_at).to_string();
    let mut manifest = Manifest::new(scenario, versions, saved_at, setup_s);
    manifest.payments = payments;
    let names: Vec<String> = std::iter::once(crate::chain::CHAIN_NAME.to_string())
        .chain(scenario.nodes.iter().map(|n| n.name.clone()))
        .collect();
    let started = Instant::now();
    let leave_out = kept.written_at_start(scenario);
    let saved = snapshot::save(root, &names, &leave_out, to, manifest, &scenario.source)?;
    let history = match payments {
        0 => String::new(),
        n => format!(" and {n} payments"),
    };
    crate::lines::errln!(
        "snapshot saved: {} ({} files, {:.1} MB) in {:.1} s after a setup of {setup_s:.1} s{history}",
        to.display(),
        saved.files,
        saved.bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
