//! End to end in a real terminal (tmux) against real LND nodes: the live view comes
//! up, `+` raises the load, `p` pauses and resumes, `q` stops the run cleanly; a
//! sweep's view names the point running.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn tmux(args: &[&str]) -> String {
    let out = Command::new("tmux")
        .args(args)
        .output()
        .expect("tmux runs (scripts/setup.sh installs it)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn screen(session: &str) -> String {
    tmux(&["capture-pane", "-p", "-t", session])
}

/// Waits until the screen shows `text`; panics with the screen after `secs`.
fn wait_for_screen(session: &str, text: &str, secs: u64) -> String {
    wait_until(session, &format!("showed {text:?}"), secs, |s| {
        s.contains(text)
    })
}

/// One view at a time, as when these tests were a binary of their own: two live views
/// at once were never tried. Each test has its own tmux session (named with its
/// process id) and waits 10-300 s for what its screen must show, so another test's
/// network beside it only slows it. The `tui` test group of `.config/nextest.toml`
/// does the same under nextest.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

struct Session(String);

impl Drop for Session {
    fn drop(&mut self) {
        tmux(&["kill-session", "-t", &self.0]);
    }
}

/// Where a run started by [`start_in_tmux`] writes.
struct Paths {
    run_dir: PathBuf,
    report_dir: PathBuf,
    /// The run's exit code, written by the pane's shell when it ends.
    exit_file: PathBuf,
}

/// Starts `lnbench-tui scenario --payments N` in a detached 120x40 tmux session named
/// after `tag`, its files under `work`; the session ends when the guard drops.
fn start_in_tmux(work: &Path, tag: &str, scenario: &Path, payments: u64) -> (Paths, Session) {
    let paths = Paths {
        run_dir: work.join("runs"),
        report_dir: work.join("report"),
        exit_file: work.join("exit-code"),
    };
    std::fs::create_dir_all(&paths.run_dir).unwrap();
    let session = format!("lnbench-e2e-{tag}-{}", std::process::id());
    let command = format!(
        "{} {} --payments {payments} --run-dir {} --report {}; echo $? > {}; sleep 600",
        lnbench().display(),
        scenario.display(),
        paths.run_dir.display(),
        paths.report_dir.display(),
        paths.exit_file.display(),
    );
    tmux(&[
        "new-session",
        "-d",
        "-s",
        &session,
        "-x",
        "120",
        "-y",
        "40",
        &command,
    ]);
    (paths, Session(session))
}

#[test]
fn live_view_ramps_pauses_and_quits_cleanly() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    require_node_binaries();
    let work = tempfile::tempdir().unwrap();
    let scenario = repo_file("tests/fixtures/scenarios/valid/alice-pays-bob.yaml");
    let (paths, _guard) = start_in_tmux(work.path(), "view", &scenario, 1_000_000);
    let Paths {
        run_dir,
        report_dir,
        exit_file,
    } = paths;
    let session = _guard.0.clone();

    // Setup shows its steps in the view before the load starts.
    let setup = wait_for_screen(&session, "setting up", 120);
    assert!(setup.contains("chain up"), "{setup}");
    wait_for_screen(&session, "10 concurrent payers", 300);
    wait_for_screen(&session, "closed-loop", 30);

    // The node table shows the runtime's readings live (CPU needs two of them).
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let s = screen(&session);
        let row = |name: &str| {
            s.lines()
                .find(|l| l.contains(&format!("│{name} ")))
                .map(str::to_owned)
        };
        if [row("alice"), row("chain")]
            .iter()
            .all(|r| r.as_deref().is_some_and(|r| r.contains('%')))
        {
            // Shown with --nocapture, to see the view as it was.
            eprintln!("{s}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no CPU figures in the node table:\n{s}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }

    // The header's lower border: the machine's load from outside the run, each second.
    let s = wait_for_screen(&session, "% of a core (avg ", 10);
    assert!(s.contains("steal "), "{s}");

    tmux(&["send-keys", "-t", &session, "+"]);
    wait_for_screen(&session, "15 concurrent payers", 10);

    tmux(&["send-keys", "-t", &session, "p"]);
    let paused = wait_for_screen(&session, "paused", 10);
    let ok_while_paused = ok_count(&paused);
    std::thread::sleep(Duration::from_secs(3));
    // In-flight payments may still finish after the pause, but no new ones start.
    let later = ok_count(&screen(&session));
    assert!(
        later <= ok_while_paused + 15,
        "payments kept starting while paused: {ok_while_paused} -> {later}"
    );

    tmux(&["send-keys", "-t", &session, "p"]);
    wait_for_screen(&session, "closed-loop", 10);

    // `r`: the report so far, written while the run goes on.
    tmux(&["send-keys", "-t", &session, "r"]);
    wait_for_screen(&session, "report snapshot written", 30);

    tmux(&["send-keys", "-t", &session, "q"]);
    let code = wait_for_file(&exit_file, 120);
    let after = screen(&session);
    assert_eq!(code.trim(), "0", "exit code after q:\n{after}");
    assert!(
        after.contains("Payments"),
        "summary table not printed after the view closed:\n{after}"
    );

    // The tmux server and the shell in the pane mention the run dir too; end them
    // first. A node leaked by the run would outlive them and still be found.
    drop(_guard);
    std::thread::sleep(Duration::from_millis(500));
    let left = processes_mentioning(&run_dir);
    assert!(
        left.is_empty(),
        "processes of the run still alive: {left:?}"
    );

    let snapshot = std::fs::read_dir(report_dir.join("snapshots"))
        .expect("snapshots dir")
        .next()
        .expect("one snapshot")
        .unwrap()
        .path();
    let snap: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(snapshot.join("report.json")).unwrap())
            .unwrap();
    assert_matches_schema(&snap);
    assert_eq!(snap["complete"], false);
    assert!(snap["results"]["ok"].as_u64().unwrap() > 0);

    // The report records the ramp, the pause and its end, and the stop, in order.
    let text = std::fs::read_to_string(report_dir.join("report.json")).expect("report.json");
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_matches_schema(&report);
    let kinds: Vec<&str> = report["results"]["events"]
        .as_array()
        .expect("results.events")
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["concurrency_changed", "paused", "resumed", "stop_requested"],
        "events: {:#}",
        report["results"]["events"]
    );
    assert_eq!(report["results"]["events"][0]["to"], 15);
    assert!(report["results"]["paused_s"].as_f64().unwrap() >= 2.0);
}

/// The `ok N` count in the header.
/// A partition during the load: the header's fault line names it while it lasts and
/// is gone once it is lifted; `q` then ends the run cleanly.
#[test]
fn the_live_view_shows_a_fault_while_it_lasts() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    require_node_binaries();
    let work = tempfile::tempdir().unwrap();
    let fixture = repo_file("tests/fixtures/scenarios/valid/alice-pays-bob.yaml");
    let text = std::fs::read_to_string(fixture).unwrap();
    let text = text.replace("duration: 45s", "duration: 5m")
        + "faults:\n  - at: 8s\n    link: [alice, bob]\n    down: true\n    for: 8s\n";
    let scenario = work.path().join("partition.yaml");
    std::fs::write(&scenario, text).unwrap();
    let (paths, guard) = start_in_tmux(work.path(), "fault", &scenario, 1_000_000);
    let session = guard.0.clone();
    wait_for_screen(&session, "10 concurrent payers", 300);
    let during = wait_for_screen(&session, "fault partition alice", 30);
    eprintln!("{during}");
    let header = (during.lines())
        .find(|l| l.contains("fault partition alice"))
        .unwrap();
    assert!(header.contains("bob"), "{header}");
    let lifted = wait_until(&session, "the fault line gone", 30, |s| {
        !s.contains("fault partition") && s.contains("concurrent payers")
    });
    assert!(lifted.contains("ok "), "{lifted}");
    tmux(&["send-keys", "-t", &session, "q"]);
    let code = wait_for_file(&paths.exit_file, 120);
    assert_eq!(code.trim(), "0", "exit code after q:\n{}", screen(&session));
    drop(guard);
    std::thread::sleep(Duration::from_millis(500));
    let left = processes_mentioning(&paths.run_dir);
    assert!(
        left.is_empty(),
        "processes of the run still alive: {left:?}"
    );
}

fn ok_count(screen: &str) -> u64 {
    let at = screen
        .find("ok ")
        .unwrap_or_else(|| panic!("no ok count on screen:\n{screen}"));
    screen[at + 3..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap_or_else(|_| panic!("ok count unreadable:\n{screen}"))
}

fn wait_for_file(path: &Path, secs: u64) -> String {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Ok(s) = std::fs::read_to_string(path)
            && !s.trim().is_empty()
        {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "{} not written within {secs} s",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Waits until `pred` holds for the screen; panics with `what` and the screen after `secs`.
fn wait_until(session: &str, what: &str, secs: u64, pred: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let s = screen(session);
        if pred(&s) {
            return s;
        }
        assert!(Instant::now() < deadline, "never {what}:\n{s}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_sweep_shows_each_point_in_the_live_view() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    require_node_binaries();
    let work = tempfile::tempdir().unwrap();
    let scenario = work.path().join("sweep.yaml");
    let text = std::fs::read_to_string(repo_file(
        "tests/fixtures/scenarios/valid/alice-pays-bob.yaml",
    ))
    .unwrap();
    std::fs::write(&scenario, format!("{text}sweep:\n  concurrency: [1, 4]\n")).unwrap();
    let (paths, _guard) = start_in_tmux(work.path(), "sweep", &scenario, 100);
    let Paths {
        run_dir,
        report_dir,
        exit_file,
    } = paths;
    let session = _guard.0.clone();

    // The run view's header names the point running and how many there are; the
    // stage label only exists in the view, so the lines printed between points do not count.
    let in_view = |s: &str, point: &str| s.contains(point) && s.contains("closed-loop");
    wait_until(&session, "showed point 1/2 in the view", 300, |s| {
        in_view(s, "point 1/2: concurrency=1")
    });
    wait_until(&session, "showed point 2/2 in the view", 120, |s| {
        in_view(s, "point 2/2: concurrency=4")
    });
    let code = wait_for_file(&exit_file, 120);
    let after = screen(&session);
    assert_eq!(code.trim(), "0", "exit code of the sweep:\n{after}");

    drop(_guard);
    std::thread::sleep(Duration::from_millis(500));
    let left = processes_mentioning(&run_dir);
    assert!(
        left.is_empty(),
        "processes of the sweep still alive: {left:?}"
    );
    let sweep: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(report_dir.join("sweep.json")).expect("sweep.json"),
    )
    .unwrap();
    assert_eq!(sweep["complete"], true, "{sweep:#}");
    for point in sweep["points"].as_array().unwrap() {
        assert_eq!(point["results"]["ok"], 100, "{point:#}");
    }
}
