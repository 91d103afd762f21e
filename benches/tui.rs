//! The live view's own cost: renders the whole run view from a realistic snapshot
//! (five minutes of series, failures, four nodes) many times and prints the time per
//! frame and the CPU share that implies at the frame cap (10 fps). Frames alternate
//! between two snapshots so every frame changes cells, as a new second does.
//!
//! Two backends: `TestBackend` (layout, widgets and the buffer diff) and crossterm
//! writing escape sequences into a sink (adds the encoding a real terminal gets).
//!
//!     cargo bench --bench tui

use lnbench_tui::metrics::{FailureKind, LoadSetting, Percentiles, SeriesPoint, Snapshot, Stage};
use lnbench_tui::node::FailureReason;
use lnbench_tui::tui::app::App;
use lnbench_tui::tui::{self, NodeInfo, Theme, TuiInfo};
use ratatui::backend::{Backend, CrosstermBackend, TestBackend};
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};
use std::hint::black_box;
use std::time::{Duration, Instant};

const WIDTH: u16 = 160;
const HEIGHT: u16 = 48;
const FRAMES: u32 = 2_000;
const FPS: f64 = 10.0;

fn snapshot(second: u64) -> Snapshot {
    let recent: Vec<SeriesPoint> = (second.saturating_sub(299)..=second)
        .map(|i| SeriesPoint {
            at_s: i as f64,
            active_s: 1.0,
            tps: 90.0 + (i * 7919 % 23) as f64,
            ok: 90 + i * 7919 % 23,
            failed: i % 3,
            p50_us: 90_000 + i * 7919 % 20_000,
            p90_us: 150_000,
            p99_us: 180_000 + i * 104_729 % 90_000,
            max_us: 400_000,
            warm_up: false,
        })
        .collect();
    let p = |base: u64| Percentiles {
        count: 30_000,
        p50_us: base,
        p90_us: base * 3 / 2,
        p99_us: base * 2,
        p999_us: base * 4,
        max_us: base * 6,
        mean_us: base as f64,
    };
    Snapshot {
        elapsed: Duration::from_secs(second),
        stage: Stage::Closed,
        paused: false,
        ok: 30_000 + second * 100,
        failed: 123,
        warm_up: 0,
        dropped: 0,
        tps_now: 101.0,
        tps_avg: 99.2,
        cumulative: p(101_000),
        last_interval: p(97_000 + second),
        failures: vec![
            (FailureKind::Node(FailureReason::NoRoute), 100),
            (FailureKind::Node(FailureReason::Timeout), 20),
            (FailureKind::RpcError, 3),
        ],
        recent,
        load: LoadSetting::Closed { concurrency: 50 },
        faults: Vec::new(),
        live: Default::default(),
    }
}

fn info() -> TuiInfo {
    let names = ["alice", "bob", "carol", "dave"];
    // Every frame also looks up each node's latest resource reading.
    let readings = names
        .iter()
        .map(|name| lnbench_tui::metrics::ResourceReading {
            name: name.to_string(),
            cpu_pct: Some(42.0),
            mem_bytes: Some(120_000_000),
            data_dir_bytes: Some(60_000_000),
            ..Default::default()
        })
        .collect();
    let (_tx, rx) = tokio::sync::watch::channel(readings);
    TuiInfo {
        scenario: "four-node-ring".into(),
        runtime: "local".into(),
        nodes: names
            .iter()
            .enumerate()
            .map(|(i, name)| NodeInfo {
                name: name.to_string(),
                implementation: "lnd".into(),
                version: "0.21.1-beta".into(),
                role: ["sender", "router", "router", "receiver"][i].into(),
                channels: Some(2),
            })
            .collect(),
        resources: Some(rx),
        machine: None,
        report_snapshots: None,
        point: None,
    }
}

/// Nanoseconds this process has run on a CPU (Linux), so a busy machine does not
/// inflate the figure the way wall time does.
fn cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

/// Mean wall and CPU microseconds per frame.
fn measure<B: Backend>(terminal: &mut Terminal<B>) -> (f64, Option<f64>) {
    let snapshots = [snapshot(600), snapshot(601)];
    let apps = snapshots.each_ref().map(App::new);
    let (info, theme) = (info(), Theme::colored());
    let mut draw = |i: usize| {
        let (s, app) = (&snapshots[i % 2], &apps[i % 2]);
        terminal
            .draw(|f| tui::draw(f, black_box(app), black_box(s), &info, &theme))
            .map(|_| ())
            .map_err(|_| "draw failed")
            .unwrap();
    };
    for i in 0..50 {
        draw(i);
    }
    let (start, cpu_start) = (Instant::now(), cpu_ns());
    for i in 0..FRAMES as usize {
        draw(i);
    }
    let wall_us = start.elapsed().as_secs_f64() * 1e6 / f64::from(FRAMES);
    let cpu_us = cpu_start
        .zip(cpu_ns())
        .map(|(a, b)| (b - a) as f64 / 1e3 / f64::from(FRAMES));
    (wall_us, cpu_us)
}

fn report(name: &str, (wall_us, cpu_us): (f64, Option<f64>)) {
    let us = cpu_us.unwrap_or(wall_us);
    let share = us * FPS / 1e6 * 100.0;
    println!(
        "{name:<20} {wall_us:>7.1} µs/frame wall  {} CPU  -> {share:.2} % of a core at {FPS:.0} fps",
        cpu_us.map_or("unknown".to_string(), |c| format!("{c:>7.1} µs/frame")),
    );
}

fn main() {
    println!("TUI frame cost, {WIDTH}x{HEIGHT}, {FRAMES} frames");
    let mut test = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).expect("test backend");
    report("TestBackend", measure(&mut test));
    let mut crossterm = Terminal::with_options(
        CrosstermBackend::new(std::io::sink()),
        TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, WIDTH, HEIGHT)),
        },
    )
    .expect("crossterm backend");
    report("crossterm -> sink", measure(&mut crossterm));
}
