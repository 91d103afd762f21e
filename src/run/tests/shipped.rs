//! Every scenario the project ships, run end to end on the fake runtime with a short
//! load: its topology set up step by step, each workload's bookkeeping, sweeps,
//! matrices, faults and reports, in seconds. What the fake cannot stand in for is
//! named here with why; the end-to-end tests run those on real nodes.

use super::*;
use crate::scenario::{Overrides, RuntimeKind};

/// The shipped scenarios the fake runtime cannot run, with why.
const NOT_ON_THE_FAKE: [(&str, &str); 3] = [
    (
        "migration-native.yaml",
        "it restores a snapshot: the fake keeps no data",
    ),
    (
        "polar-alice-pays-bob.yaml",
        "its nodes are external: nothing is started",
    ),
    (
        "wan.yaml",
        "its links go through the fault proxy, which the fake starts none of",
    ),
];

fn shipped() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<_> = (std::fs::read_dir(dir).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

/// Open-loop phases (warm-ups, ramps) of at most 300 ms, no settling between repeats,
/// a hundredth of each history (the ladder still climbs): the bookkeeping is the same,
/// the wall time a fraction.
fn shorten(s: &mut Scenario) {
    // A runtime with no checks before the start (binaries, images): the fake stands in
    // for whichever the file names.
    s.runtime = RuntimeKind::Kubernetes;
    s.repeat.settle = Duration::ZERO;
    if let Some(history) = &mut s.history {
        history.payments /= 100;
    }
    if let crate::scenario::Load::Open { phases } = &mut s.workload.load {
        for phase in phases {
            phase.duration = phase.duration.min(Duration::from_millis(300));
        }
    }
}

/// Runs the scenario at `path` with a short load on fake runtimes; its name, exit and
/// top report (`report.json`, or `sweep.json` for a sweep).
async fn run_shipped(path: std::path::PathBuf) -> (String, Result<Exit>, serde_json::Value) {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let text = std::fs::read_to_string(&path).unwrap();
    let mut s = parse(&path, &text, crate::runtime::capabilities).unwrap();
    s.apply_overrides(&Overrides {
        payments: Some(20),
        duration: Some(Duration::from_secs(1)),
        ..Overrides::default()
    });
    shorten(&mut s);
    for point in s.sweep.iter_mut().flat_map(|sweep| &mut sweep.points) {
        shorten(&mut point.scenario);
    }
    let dirs = Dirs::new();
    let exit = execute_with(s, &dirs.opts, &fakes(|_| Ok(quick())), Signals::manual()).await;
    let dir = dirs.opts.report_dir.as_ref().unwrap();
    let report = ["report.json", "sweep.json"]
        .iter()
        .find_map(|f| std::fs::read_to_string(dir.join(f)).ok())
        .map_or(serde_json::Value::Null, |t| {
            serde_json::from_str(&t).unwrap()
        });
    (name, exit, report)
}

#[tokio::test]
async fn every_shipped_scenario_runs_on_the_fake_runtime() {
    let files = shipped();
    assert!(files.len() >= 30, "only {} shipped scenarios", files.len());
    let runnable = (files.into_iter())
        .filter(|p| !NOT_ON_THE_FAKE.iter().any(|(n, _)| p.ends_with(n)))
        .map(run_shipped);
    let mut failed = Vec::new();
    // All at once: the fake runs wait on timers, not on the cores.
    for (name, exit, report) in futures::future::join_all(runnable).await {
        match exit {
            Ok(Exit::Ok) if report["complete"] == true => {}
            other => failed.push(format!(
                "{name}: {other:?}, complete: {}",
                report["complete"]
            )),
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
