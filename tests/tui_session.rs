//! The live view around a run: setup steps, then the run view, then teardown steps.
//! Frames are rendered on ratatui's `TestBackend` (`tests/snapshots/*.snap`).

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use lnbench_tui::metrics::Snapshot;
use lnbench_tui::progress::Progress;
use lnbench_tui::setup::StepLog;
use lnbench_tui::tui::session::{Channels, LoadView, drive_session};
use lnbench_tui::tui::{Theme, TuiExit, TuiInfo, widgets};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

fn info() -> TuiInfo {
    TuiInfo {
        scenario: "alice-pays-bob".into(),
        runtime: "local".into(),
        nodes: Vec::new(),
        resources: None,
        machine: None,
        report_snapshots: None,
        point: None,
    }
}

fn render(progress: &Progress, now: Instant) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(90, 20)).unwrap();
    terminal
        .draw(|f| {
            f.render_widget(
                widgets::SetupView {
                    progress,
                    info: &info(),
                    now,
                    theme: &Theme::plain(),
                },
                f.area(),
            )
        })
        .unwrap();
    terminal
}

/// Three steps done, the fourth running for 2.6 s with a progress line.
fn in_progress(t0: Instant) -> Progress {
    let mut p = Progress::new("setting up");
    p.begin("chain up", t0);
    p.detail("mining past segwit activation");
    p.begin("nodes up", t0 + Duration::from_millis(2_400));
    p.detail("bob ready (0.21.1-beta)");
    p.begin("wallets funded", t0 + Duration::from_millis(7_100));
    p.begin("peers connected", t0 + Duration::from_millis(9_000));
    p
}

#[test]
fn setup_in_progress() {
    let t0 = Instant::now();
    let p = in_progress(t0);
    let t = render(&p, t0 + Duration::from_millis(11_600));
    insta::assert_snapshot!("setup_in_progress", t.backend());
}

#[test]
fn setup_failed_shows_the_reason_and_log_lines() {
    let t0 = Instant::now();
    let mut p = in_progress(t0);
    p.fail(
        "lnd bob did not become ready; last lines of its log:\n\
         2026-11-22 [ERR] LTND: unable to start server: address already in use\n\
         2026-11-22 [INF] LTND: Shutdown complete",
        t0 + Duration::from_millis(12_000),
    );
    let t = render(&p, t0 + Duration::from_millis(12_500));
    let text = t.backend().to_string();
    assert!(text.contains("FAILED"), "{text}");
    assert!(text.contains("address already in use"), "{text}");
    insta::assert_snapshot!("setup_failed", t.backend());
}

struct Harness {
    log: StepLog,
    progress_tx: watch::Sender<Progress>,
    load_tx: Option<mpsc::UnboundedSender<LoadView>>,
    done_tx: oneshot::Sender<()>,
    channels: Channels,
}

fn harness() -> Harness {
    let (progress_tx, progress_rx) = watch::channel(Progress::new("setting up"));
    let (load_tx, load_rx) = mpsc::unbounded_channel();
    let (done_tx, done_rx) = oneshot::channel();
    Harness {
        log: StepLog::for_view(progress_tx.clone(), "setting up"),
        progress_tx: progress_tx.clone(),
        load_tx: Some(load_tx),
        done_tx,
        channels: Channels {
            progress: progress_rx,
            progress_tx,
            load: load_rx,
            done: done_rx,
            quit: Default::default(),
        },
    }
}

fn key(code: KeyCode, modifiers: KeyModifiers) -> std::io::Result<Event> {
    Ok(Event::Key(KeyEvent::new(code, modifiers)))
}

#[tokio::test(start_paused = true)]
async fn steps_then_run_view_then_teardown_steps() {
    let mut h = harness();
    let (snapshot_tx, snapshot_rx) = watch::channel(Snapshot::default());
    let (command_tx, _command_rx) = mpsc::unbounded_channel();
    let (_key_tx, key_rx) = futures::channel::mpsc::unbounded::<std::io::Result<Event>>();
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    let cancel = CancellationToken::new();
    let (info, theme) = (info(), Theme::plain());

    let run = async {
        h.log.begin("chain up");
        tokio::time::sleep(Duration::from_secs(1)).await;
        h.log.begin("nodes up");
        tokio::time::sleep(Duration::from_secs(1)).await;
        h.log.end();
        h.load_tx
            .take()
            .unwrap()
            .send(LoadView {
                snapshots: snapshot_rx,
                commands: command_tx,
                info: info.clone(),
            })
            .ok()
            .unwrap();
        tokio::time::sleep(Duration::from_secs(1)).await;
        drop(snapshot_tx); // the load ends
        let mut teardown = StepLog::for_view(h.progress_tx.clone(), "tearing down");
        teardown.begin("report written");
        tokio::time::sleep(Duration::from_secs(1)).await;
        teardown.begin("nodes and chain stopped");
        tokio::time::sleep(Duration::from_secs(1)).await;
        h.done_tx.send(()).unwrap();
    };
    let session = async {
        drive_session(
            &mut terminal,
            key_rx,
            h.channels,
            cancel.clone(),
            &info,
            &theme,
        )
        .await
    };
    let (exit, ()) = tokio::join!(session, run);
    assert_eq!(exit.unwrap(), Some(TuiExit::Finished));
    assert!(!cancel.is_cancelled());
    let text = terminal.backend().to_string();
    assert!(text.contains("tearing down"), "{text}");
    assert!(text.contains("nodes and chain stopped"), "{text}");
}

#[tokio::test(start_paused = true)]
async fn q_during_setup_cancels_the_run() {
    let h = harness();
    let (key_tx, key_rx) = futures::channel::mpsc::unbounded();
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    let cancel = CancellationToken::new();
    let (info, theme) = (info(), Theme::plain());
    let done_tx = h.done_tx;
    let driver = async {
        key_tx
            .unbounded_send(key(KeyCode::Char('x'), KeyModifiers::NONE))
            .unwrap();
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(!cancel.is_cancelled(), "other keys do nothing");
        key_tx
            .unbounded_send(key(KeyCode::Char('c'), KeyModifiers::CONTROL))
            .unwrap();
        cancel.cancelled().await;
        done_tx.send(()).unwrap();
    };
    let (exit, ()) = tokio::join!(
        drive_session(
            &mut terminal,
            key_rx,
            h.channels,
            cancel.clone(),
            &info,
            &theme
        ),
        driver
    );
    assert_eq!(exit.unwrap(), None, "the run view never showed");
}

#[tokio::test(start_paused = true)]
async fn a_sweeps_points_share_one_view_and_q_in_a_load_is_known_at_once() {
    let mut h = harness();
    let quit = h.channels.quit.clone();
    let load_tx = h.load_tx.take().unwrap();
    let (key_tx, key_rx) = futures::channel::mpsc::unbounded();
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    let cancel = CancellationToken::new();
    let (theme, base) = (Theme::plain(), info());
    let point = |n: u32| TuiInfo {
        point: Some(format!("point {n}/2: concurrency={n}")),
        ..info()
    };
    let (commands, _command_rx) = mpsc::unbounded_channel();
    let (first_tx, first_rx) = watch::channel(Snapshot::default());
    let (_second_tx, second_rx) = watch::channel(Snapshot::default());
    let run = async {
        h.log.begin("chain up");
        h.log.end();
        let load = |snapshots, info| LoadView {
            snapshots,
            commands: commands.clone(),
            info,
        };
        load_tx.send(load(first_rx, point(1))).ok().unwrap();
        tokio::time::sleep(Duration::from_secs(1)).await;
        drop(first_tx); // the first point's load ends
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(!quit.load(std::sync::atomic::Ordering::Relaxed));
        load_tx.send(load(second_rx, point(2))).ok().unwrap();
        tokio::time::sleep(Duration::from_secs(1)).await;
        key_tx
            .unbounded_send(key(KeyCode::Char('q'), KeyModifiers::NONE))
            .unwrap();
        tokio::time::sleep(Duration::from_secs(1)).await;
        // The run learns of the quit before the view ends, to start no further point.
        assert!(quit.load(std::sync::atomic::Ordering::Relaxed));
        h.done_tx.send(()).unwrap();
    };
    let (exit, ()) = tokio::join!(
        drive_session(&mut terminal, key_rx, h.channels, cancel, &base, &theme),
        run
    );
    assert_eq!(exit.unwrap(), Some(TuiExit::Quit));
    let text = terminal.backend().to_string();
    assert!(text.contains("stopping"), "{text}");
}
