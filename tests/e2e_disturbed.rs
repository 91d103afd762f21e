//! End to end through the real binary: the same short load of alice-pays-bob (two real
//! LND nodes on btcd, local runtime, 15 s) twice, one at a time: alone, and with a
//! bounded CPU hog beside it (threads of this test hashing zeros, at most 60 s). The
//! hogged run's report must call the run disturbed; the one alone must not.
//!
//! The run alone needs a quiet machine: when the host is already busier than half the
//! outside-load limit before it starts (another build, other tests), it is not run and
//! says so (`NOT RUN`, counted by `.ci/run`), rather than fail for what the test
//! cannot control. The hogged run runs whatever the machine.

mod common;

use common::running::Running;
use common::*;
use lnbench_tui::metrics::host::{OUTSIDE_LOAD_LIMIT_PCT, STEAL_LIMIT_PCT};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The longest a hog thread runs, whatever happens to the test.
const HOG_LIMIT: Duration = Duration::from_secs(60);

/// CPU hog threads hashing a buffer of zeros: loopback-only work. They stop when
/// dropped (also while a failed assertion unwinds), and on their own after
/// [`HOG_LIMIT`].
struct Hog {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Hog {
    fn start(threads: usize) -> Hog {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..threads)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let started = Instant::now();
                    let zeros = [0u8; 64 * 1024];
                    while !stop.load(Ordering::Relaxed) && started.elapsed() < HOG_LIMIT {
                        let mut h = std::collections::hash_map::DefaultHasher::new();
                        std::hint::black_box(&zeros).hash(&mut h);
                        std::hint::black_box(h.finish());
                    }
                })
            })
            .collect();
        Hog { stop, threads }
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// A running lnbench-tui that is killed if the test fails before it exits.
struct Run(Running);

impl Drop for Run {
    fn drop(&mut self) {
        if let Ok(None) = self.0.child.try_wait() {
            let _ = self.0.child.kill();
            let _ = self.0.child.wait();
        }
    }
}

/// How busy the host's CPUs were over `span`, in percent of one core (`/proc/stat`:
/// user, nice, system, irq, softirq; jiffies are 1/100 s).
fn host_busy_pct(span: Duration) -> Option<f64> {
    let busy = || -> Option<u64> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let line = stat.lines().find(|l| l.starts_with("cpu "))?;
        let f: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .map(|v| v.parse().ok())
            .collect::<Option<_>>()?;
        Some([0, 1, 2, 5, 6].iter().filter_map(|&i| f.get(i)).sum())
    };
    let (a, t0) = (busy()?, Instant::now());
    std::thread::sleep(span);
    let (b, dt) = (busy()?, t0.elapsed().as_secs_f64());
    Some(b.saturating_sub(a) as f64 / dt)
}

/// Runs the short load, with `hog_threads` threads beside it from the moment the load starts;
/// returns `results.machine` of its report.
fn short_load(hog_threads: usize) -> serde_json::Value {
    let work = tempfile::tempdir().expect("temp dir");
    let (run_dir, report_dir) = (work.path().join("runs"), work.path().join("report"));
    std::fs::create_dir_all(&run_dir).unwrap();
    let mut cmd = lnbench_command();
    cmd.arg(repo_file(
        "tests/fixtures/scenarios/valid/alice-pays-bob.yaml",
    ))
    .args(["--duration", "15s", "--report"])
    .arg(&report_dir)
    .arg("--run-dir")
    .arg(&run_dir);
    let mut run = Run(Running::spawn(cmd));
    run.0
        .wait_for("the load's start", 1, |l| l.starts_with("==> load"));
    let hog = (hog_threads > 0).then(|| Hog::start(hog_threads));
    let (status, stderr) = run.0.wait_exit(Duration::from_secs(300));
    drop(hog);
    assert!(status.success(), "{status}:\n{stderr}");
    let text = std::fs::read_to_string(report_dir.join("report.json")).expect("report.json");
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_matches_schema(&report);
    let machine = report["results"]["machine"].clone();
    assert!(
        machine.is_object(),
        "no results.machine: {:#}",
        report["results"]
    );
    eprintln!("{hog_threads} hog thread(s): {machine}");
    machine
}

fn outside(machine: &serde_json::Value) -> f64 {
    machine["outside_load_pct"]
        .as_f64()
        .expect("outside_load_pct")
}

/// One load at a time: the two tests of this file would otherwise run side by side,
/// and each would be the other's outside load. The run alone usually goes first (tests
/// start in name order), but either order holds: the hog stops, and the run it
/// disturbed has exited, before the lock is released.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    // A failed test poisons the lock; the other may still run.
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn a_load_alone_on_a_quiet_machine_is_not_disturbed() {
    require_node_binaries();
    let _serial = one_at_a_time();
    let before = host_busy_pct(Duration::from_secs(3)).expect("/proc/stat readable");
    if before >= OUTSIDE_LOAD_LIMIT_PCT / 2.0 {
        record_not_run(
            "a_load_alone_on_a_quiet_machine_is_not_disturbed",
            &format!(
                "the machine was busy before the test ({before:.0} % of a core), so no run \
                 on it can be quiet"
            ),
        );
        return;
    }
    let m = short_load(0);
    // The run's own work never reads as outside load, whatever the hypervisor did.
    assert!(outside(&m) <= OUTSIDE_LOAD_LIMIT_PCT, "{m:#}");
    // Time the hypervisor gave to other machines (steal) makes this one not quiet,
    // and the tool must say so: then there is no quiet run to check.
    let steal = m["steal_pct"].as_f64().expect("steal_pct");
    if steal > STEAL_LIMIT_PCT {
        assert_eq!(
            m["disturbed"], true,
            "steal above its limit went unseen: {m:#}"
        );
        record_not_run(
            "a_load_alone_on_a_quiet_machine_is_not_disturbed",
            &format!(
                "the hypervisor took {steal:.1} % of the cores during the run (steal, limit \
                 {STEAL_LIMIT_PCT} %), so the machine was not quiet"
            ),
        );
        return;
    }
    assert_eq!(
        m["disturbed"], false,
        "a quiet machine called disturbed: {m:#}"
    );
    assert!(m["verdict"].as_str().unwrap().starts_with("quiet"), "{m:#}");
}

#[test]
fn the_same_load_beside_a_cpu_hog_is_disturbed() {
    require_node_binaries();
    let _serial = one_at_a_time();
    let hogged = short_load(2);
    assert_eq!(hogged["disturbed"], true, "the hog went unseen: {hogged:#}");
    let verdict = hogged["verdict"].as_str().unwrap();
    assert!(verdict.starts_with("DISTURBED"), "{verdict}");
    assert!(outside(&hogged) > OUTSIDE_LOAD_LIMIT_PCT, "{hogged:#}");
}
