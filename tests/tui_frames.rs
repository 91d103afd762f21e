//! Whole frames of the live view, rendered on ratatui's `TestBackend` from fixed
//! snapshots and compared with the committed `tests/snapshots/*.snap` files.
//! Review a changed frame with `cargo insta review`.

use lnbench_tui::metrics::{
    FailureKind, LoadSetting, MachineNow, Percentiles, ResourceReading, SeriesPoint, Snapshot,
    Stage,
};
use lnbench_tui::node::FailureReason;
use lnbench_tui::tui::app::{Action, App};
use lnbench_tui::tui::{self, NodeInfo, Theme, TuiInfo};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::Duration;

fn info() -> TuiInfo {
    let node = |name: &str, role: &str| NodeInfo {
        name: name.into(),
        implementation: "lnd".into(),
        version: "0.21.1-beta commit=v0.21.1-beta".into(),
        role: role.into(),
        channels: Some(10),
    };
    let chain = NodeInfo {
        name: "chain".into(),
        implementation: "btcd".into(),
        version: "0.24.2-beta".into(),
        role: "chain".into(),
        channels: None,
    };
    // The sender read twice; the receiver's first reading (no CPU yet, no data dir
    // walked); the chain not read at all.
    let readings = vec![
        ResourceReading {
            name: "alice".into(),
            cpu_pct: Some(87.4),
            mem_bytes: Some(96 * 1024 * 1024),
            data_dir_bytes: Some(48_500_000),
            ..ResourceReading::default()
        },
        ResourceReading {
            name: "bob".into(),
            cpu_pct: None,
            mem_bytes: Some(1_288_490_189),
            data_dir_bytes: None,
            ..ResourceReading::default()
        },
    ];
    let (_tx, rx) = tokio::sync::watch::channel(readings);
    TuiInfo {
        scenario: "alice-pays-bob".into(),
        runtime: "local".into(),
        nodes: vec![node("alice", "sender"), node("bob", "receiver"), chain],
        resources: Some(rx),
        machine: None,
        report_snapshots: None,
        point: None,
    }
}

/// Two minutes of a closed-loop run near 100 TPS, with a slow spell.
fn running() -> Snapshot {
    let recent: Vec<SeriesPoint> = (1..=120u64)
        .map(|i| {
            let slow = (60..70).contains(&i);
            let tps = if slow { 40.0 } else { 95.0 + (i % 7) as f64 };
            SeriesPoint {
                at_s: i as f64,
                active_s: 1.0,
                tps,
                ok: tps as u64,
                failed: 0,
                p50_us: if slow { 240_000 } else { 95_000 + i * 100 },
                p90_us: 150_000,
                p99_us: if slow {
                    610_000
                } else {
                    180_000 + (i % 5) * 4_000
                },
                max_us: 700_000,
                warm_up: false,
            }
        })
        .collect();
    Snapshot {
        elapsed: Duration::from_secs(120),
        stage: Stage::Closed,
        paused: false,
        ok: 11_234,
        failed: 0,
        warm_up: 0,
        dropped: 0,
        tps_now: 98.0,
        tps_avg: 93.6,
        cumulative: Percentiles {
            count: 11_234,
            p50_us: 101_300,
            p90_us: 152_000,
            p99_us: 243_100,
            p999_us: 598_000,
            max_us: 701_900,
            mean_us: 110_000.0,
        },
        last_interval: Percentiles {
            count: 98,
            p50_us: 107_000,
            p90_us: 149_000,
            p99_us: 196_000,
            p999_us: 199_000,
            max_us: 199_000,
            mean_us: 108_000.0,
        },
        failures: Vec::new(),
        recent,
        load: LoadSetting::Closed { concurrency: 10 },
        faults: Vec::new(),
        live: Default::default(),
    }
}

fn render(width: u16, height: u16, app: &App, snapshot: &Snapshot) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| tui::draw(f, app, snapshot, &info(), &Theme::plain()))
        .unwrap();
    terminal
}

#[test]
fn running_view() {
    let s = running();
    let t = render(100, 30, &App::new(&s), &s);
    insta::assert_snapshot!("running", t.backend());
}

#[test]
fn paused_view_shows_paused_instead_of_the_stage() {
    let s = Snapshot {
        paused: true,
        tps_now: 0.0,
        ..running()
    };
    let t = render(100, 30, &App::new(&s), &s);
    insta::assert_snapshot!("paused", t.backend());
}

#[test]
fn failures_are_listed_by_reason_with_counts() {
    let s = Snapshot {
        failed: 57,
        failures: vec![
            (FailureKind::Node(FailureReason::NoRoute), 41),
            (FailureKind::Node(FailureReason::Timeout), 12),
            (FailureKind::RpcError, 4),
        ],
        stage: Stage::Hold,
        load: LoadSetting::Open { rate: 150.0 },
        ..running()
    };
    let t = render(100, 30, &App::new(&s), &s);
    insta::assert_snapshot!("failures", t.backend());
}

#[test]
fn an_attack_and_a_stream_show_on_the_counts_line() {
    let mut s = running();
    use lnbench_tui::metrics::live::{LiveFigure, LiveFigures};
    let figure = |text: &str, alarm| LiveFigure {
        text: text.to_string(),
        alarm,
    };
    s.live = LiveFigures(vec![
        figure("attack 6/6 slots held", true),
        figure("streams 120 ok · 3 partial · 1 failed", false),
    ]);
    let text = render(140, 30, &App::new(&s), &s).backend().to_string();
    let line = text
        .lines()
        .find(|l| l.contains("failed"))
        .unwrap_or_default();
    assert!(line.contains("attack 6/6 slots held"), "{text}");
    assert!(
        line.contains("streams 120 ok · 3 partial · 1 failed"),
        "{text}"
    );
}

#[test]
fn a_small_terminal_says_what_size_it_needs() {
    let s = running();
    let t = render(60, 12, &App::new(&s), &s);
    insta::assert_snapshot!("too_small", t.backend());
}

#[test]
fn help_overlay_lists_every_key() {
    let s = running();
    let mut app = App::new(&s);
    app.update(Action::ToggleHelp);
    let t = render(100, 30, &app, &s);
    insta::assert_snapshot!("help", t.backend());
}

#[test]
fn a_load_change_shows_before_the_engine_confirms_it() {
    let s = running();
    let mut app = App::new(&s);
    app.update(Action::Increase);
    let t = render(100, 30, &app, &s);
    let text = t.backend().to_string();
    assert!(
        text.contains("load 10 concurrent payers -> 15 concurrent payers"),
        "{text}"
    );
}

#[test]
fn the_view_fits_the_minimum_size_and_a_resize() {
    let s = running();
    let app = App::new(&s);
    let mut t = render(tui::MIN_WIDTH, tui::MIN_HEIGHT, &app, &s);
    let text = t.backend().to_string();
    for part in [
        "alice-pays-bob",
        "TPS",
        "p99.9",
        "Latency over time",
        "bob",
        "Failures",
    ] {
        assert!(text.contains(part), "missing {part:?} in\n{text}");
    }
    t.backend_mut().resize(50, 10);
    t.draw(|f| tui::draw(f, &app, &s, &info(), &Theme::plain()))
        .unwrap();
    assert!(
        t.backend().to_string().contains("terminal too small"),
        "{}",
        t.backend()
    );
}

/// The run view with the machine's figures so far in the header.
fn render_machine(m: MachineNow, theme: &Theme) -> Terminal<TestBackend> {
    let s = running();
    // The sender gone, the receiver keeps the last figures.
    let (_tx, rx) = tokio::sync::watch::channel(Some(m));
    let info = TuiInfo {
        machine: Some(rx),
        ..info()
    };
    let mut t = Terminal::new(TestBackend::new(100, 30)).unwrap();
    t.draw(|f| tui::draw(f, &App::new(&s), &s, &info, theme))
        .unwrap();
    t
}

/// The header's lower border, where the machine's figures stand.
fn header_border(t: &Terminal<TestBackend>) -> String {
    let text = t.backend().to_string();
    text.lines().nth(3).expect("four header rows").to_string()
}

/// The style of the cell where `needle` starts on the header's lower border.
fn style_at(t: &Terminal<TestBackend>, needle: &str) -> ratatui::style::Style {
    let buf = t.backend().buffer();
    let row: String = (0..buf.area.width)
        .map(|x| buf[(x, 3)].symbol().to_string())
        .collect();
    let at = row
        .find(needle)
        .unwrap_or_else(|| panic!("{needle} not in {row}"));
    // Columns, not bytes: the border is drawn with multi-byte characters.
    let x = row[..at].chars().count() as u16;
    buf[(x, 3)].style()
}

const QUIET: MachineNow = MachineNow {
    outside_load_pct: 3.4,
    outside_load_pct_avg: 2.1,
    steal_pct: 0.1,
    disturbed: false,
};

#[test]
fn a_quiet_machine_is_shown_without_alarm() {
    let t = render_machine(QUIET, &Theme::plain());
    let border = header_border(&t);
    assert!(
        border.contains(" machine  outside 3 % of a core (avg 2 %)  steal 0.1 % "),
        "{border}"
    );
    assert!(
        !border.contains("DISTURBED") && !border.contains('>'),
        "{border}"
    );
    let plain = render(100, 30, &App::new(&running()), &running());
    assert!(
        !header_border(&plain).contains("outside"),
        "nothing before the host is sampled"
    );
}

#[test]
fn outside_load_past_the_limit_marks_the_header_disturbed() {
    let busy = MachineNow {
        outside_load_pct: 85.0,
        outside_load_pct_avg: 62.0,
        steal_pct: 0.4,
        disturbed: true,
    };
    let t = render_machine(busy, &Theme::plain());
    let border = header_border(&t);
    assert!(
        border.contains(" DISTURBED  outside 85 % of a core (avg 62 % > 10 %)  steal 0.4 % "),
        "{border}"
    );
    insta::assert_snapshot!("running_disturbed", t.backend());
    // Marked beyond the words: bold without colour, red with it.
    let bold = ratatui::style::Modifier::BOLD;
    assert!(style_at(&t, "DISTURBED").add_modifier.contains(bold));
    assert!(style_at(&t, "62 %").add_modifier.contains(bold));
    assert!(
        !style_at(&t, "0.4 %").add_modifier.contains(bold),
        "steal is within its limit"
    );
    let colored = render_machine(busy, &Theme::colored());
    assert_eq!(style_at(&colored, "DISTURBED").fg, Theme::colored().bad.fg);
}

#[test]
fn the_longest_figures_fit_the_narrowest_view() {
    let worst = MachineNow {
        outside_load_pct: 185.0,
        outside_load_pct_avg: 162.0,
        steal_pct: 12.5,
        disturbed: true,
    };
    let line = tui::widgets::machine_line(&worst, &Theme::plain());
    assert!(line.width() <= usize::from(tui::MIN_WIDTH) - 4, "{line}");
}

#[test]
fn steal_past_its_limit_disturbs_on_its_own() {
    let stolen = MachineNow {
        steal_pct: 3.5,
        disturbed: true,
        ..QUIET
    };
    let t = render_machine(stolen, &Theme::plain());
    let border = header_border(&t);
    assert!(border.contains("DISTURBED"), "{border}");
    assert!(border.contains("steal 3.5 % > 2 % "), "{border}");
    assert!(
        border.contains("(avg 2 %)"),
        "outside load within its limit: {border}"
    );
    let bold = ratatui::style::Modifier::BOLD;
    assert!(style_at(&t, "3.5 %").add_modifier.contains(bold));
}

#[test]
fn a_busy_second_is_marked_before_the_average_passes_the_limit() {
    let burst = MachineNow {
        outside_load_pct: 40.0,
        ..QUIET
    };
    let t = render_machine(burst, &Theme::plain());
    let border = header_border(&t);
    assert!(!border.contains("DISTURBED"), "{border}");
    let reversed = ratatui::style::Modifier::REVERSED;
    assert!(
        style_at(&t, "40 %").add_modifier.contains(reversed),
        "{border}"
    );
    assert!(!style_at(&t, "2 %").add_modifier.contains(reversed));
}

mod event_loop {
    use super::*;
    use crossterm::event::{Event, KeyCode, KeyEvent};
    use lnbench_tui::engine::Command;
    use tokio::sync::{mpsc, watch};
    use tui::TuiExit;

    fn key(c: char) -> std::io::Result<Event> {
        Ok(Event::Key(KeyEvent::from(KeyCode::Char(c))))
    }

    /// The view driven beside `run`, input open and quiet, in the plain theme, until
    /// `run` ends the load (dropping the snapshots' sender): the view ends Finished.
    async fn drive_beside(
        terminal: &mut Terminal<TestBackend>,
        snapshot_rx: watch::Receiver<Snapshot>,
        command_tx: &mpsc::UnboundedSender<Command>,
        info: &TuiInfo,
        run: impl std::future::Future<Output = ()>,
    ) {
        let (_key_tx, key_rx) = futures::channel::mpsc::unbounded::<std::io::Result<Event>>();
        let theme = Theme::plain();
        let (exit, ()) = tokio::join!(
            tui::drive(terminal, key_rx, snapshot_rx, command_tx, info, &theme),
            run
        );
        assert_eq!(exit.unwrap(), TuiExit::Finished);
    }

    #[tokio::test]
    async fn keys_become_engine_commands_and_q_quits() {
        let (_snapshot_tx, snapshot_rx) = watch::channel(running());
        let (command_tx, mut command_rx) = mpsc::unbounded_channel();
        let (key_tx, key_rx) = futures::channel::mpsc::unbounded();
        for c in ['+', 'p', 'x', 'p', 'q', '+'] {
            key_tx.unbounded_send(key(c)).unwrap();
        }
        let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
        let exit = tui::drive(
            &mut terminal,
            key_rx,
            snapshot_rx,
            &command_tx,
            &info(),
            &Theme::plain(),
        )
        .await
        .unwrap();
        assert_eq!(exit, TuiExit::Quit);
        drop(command_tx);
        let mut sent = Vec::new();
        while let Some(c) = command_rx.recv().await {
            sent.push(c);
        }
        // Nothing after `q`.
        assert_eq!(
            sent,
            [
                Command::SetConcurrency(15),
                Command::Pause,
                Command::Resume,
                Command::Stop
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_view_ends_when_the_engine_drops_its_sender() {
        let (snapshot_tx, snapshot_rx) = watch::channel(running());
        let (command_tx, mut command_rx) = mpsc::unbounded_channel();
        let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
        let engine = async move {
            tokio::time::sleep(tui::FRAME_INTERVAL * 3).await;
            snapshot_tx
                .send(Snapshot {
                    stage: Stage::Finished,
                    ..running()
                })
                .unwrap();
            tokio::time::sleep(tui::FRAME_INTERVAL * 3).await;
        };
        drive_beside(&mut terminal, snapshot_rx, &command_tx, &info(), engine).await;
        let text = terminal.backend().to_string();
        assert!(text.contains(" finished "), "{text}");
        drop(command_tx);
        assert_eq!(command_rx.recv().await, None, "no command without a key");
    }

    #[tokio::test(start_paused = true)]
    async fn new_resource_readings_are_drawn_as_they_come() {
        let (snapshot_tx, snapshot_rx) = watch::channel(running());
        let (command_tx, _command_rx) = mpsc::unbounded_channel();
        let (readings_tx, readings_rx) = watch::channel(Vec::new());
        let info = TuiInfo {
            resources: Some(readings_rx),
            report_snapshots: None,
            ..info()
        };
        let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
        let run = async move {
            tokio::time::sleep(tui::FRAME_INTERVAL * 3).await;
            readings_tx.send_replace(vec![ResourceReading {
                name: "chain".into(),
                cpu_pct: Some(3.25),
                mem_bytes: Some(31 * 1024 * 1024),
                data_dir_bytes: Some(5 * 1024 * 1024),
                ..ResourceReading::default()
            }]);
            // The run stops reading before the load ends: the last readings stay.
            drop(readings_tx);
            tokio::time::sleep(tui::FRAME_INTERVAL * 3).await;
            drop(snapshot_tx);
        };
        drive_beside(&mut terminal, snapshot_rx, &command_tx, &info, run).await;
        let text = terminal.backend().to_string();
        let chain_row = text
            .lines()
            .find(|l| l.contains("chain "))
            .expect("a chain row");
        for figure in ["3.2%", "31.0M", "5.0M"] {
            assert!(chain_row.contains(figure), "{figure} not in {chain_row}");
        }
        let alice_row = text.lines().find(|l| l.contains("alice ")).unwrap();
        assert!(!alice_row.contains('%'), "alice not read: {alice_row}");
    }

    /// The header follows the host's figures as the run publishes them, each load
    /// of the view redrawn by the change alone (no new snapshot comes).
    #[tokio::test(start_paused = true)]
    async fn the_machine_in_the_header_follows_the_run() {
        let (command_tx, _command_rx) = mpsc::unbounded_channel();
        let (machine_tx, machine_rx) = watch::channel(None);
        let info = TuiInfo {
            machine: Some(machine_rx),
            ..info()
        };
        let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
        let busy = MachineNow {
            outside_load_pct: 95.0,
            outside_load_pct_avg: 30.0,
            steal_pct: 0.0,
            disturbed: true,
        };
        for (figures, expected) in [(QUIET, "avg 2 %"), (busy, "DISTURBED")] {
            let (snapshot_tx, snapshot_rx) = watch::channel(running());
            let run = async {
                // The first frame is drawn before the figures change.
                tokio::time::sleep(tui::FRAME_INTERVAL * 3).await;
                machine_tx.send_replace(Some(figures));
                tokio::time::sleep(tui::FRAME_INTERVAL * 3).await;
                drop(snapshot_tx);
            };
            drive_beside(&mut terminal, snapshot_rx, &command_tx, &info, run).await;
            let border = super::header_border(&terminal);
            assert!(border.contains(expected), "{expected} not in {border}");
        }
        let border = super::header_border(&terminal);
        assert!(border.contains("outside 95 %"), "{border}");
    }

    #[tokio::test]
    async fn closed_input_stops_the_run() {
        let (_snapshot_tx, snapshot_rx) = watch::channel(running());
        let (command_tx, mut command_rx) = mpsc::unbounded_channel();
        let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
        let exit = tui::drive(
            &mut terminal,
            futures::stream::empty(),
            snapshot_rx,
            &command_tx,
            &info(),
            &Theme::plain(),
        )
        .await
        .unwrap();
        assert_eq!(exit, TuiExit::Quit);
        assert_eq!(command_rx.recv().await, Some(Command::Stop));
    }
}

#[test]
fn a_sweep_point_is_named_in_the_header() {
    let s = running();
    let app = App::new(&s);
    let info = TuiInfo {
        point: Some("point 2/4: concurrency=4".into()),
        ..info()
    };
    let mut t = Terminal::new(TestBackend::new(110, 30)).unwrap();
    t.draw(|f| tui::draw(f, &app, &s, &info, &Theme::plain()))
        .unwrap();
    let text = t.backend().to_string();
    let header: Vec<&str> = text.lines().take(4).collect();
    assert!(
        header
            .iter()
            .any(|l| l.contains("point 2/4: concurrency=4")),
        "{}",
        header.join("\n")
    );
    let plain = render(110, 30, &app, &s).backend().to_string();
    assert!(!plain.contains("point "), "no point outside a sweep");
}
