//! The live terminal UI: the other front end beside `headless`. It reads
//! [`Snapshot`]s from the engine's watch channel, sends [`Command`]s back, and owns
//! nothing of the run: quitting asks the engine to stop and returns, so the caller
//! writes the report and tears down as in headless mode.
//!
//! State ([`app::App`]) is kept apart from the view ([`draw`] and [`widgets`]); keys
//! become [`app::Action`]s ([`action::action_for`]) applied by the pure
//! [`app::App::update`].

pub mod action;
pub mod app;
pub mod session;
pub mod terminal;
pub mod theme;
pub mod widgets;

pub use theme::Theme;

use crate::engine::Command;
use crate::metrics::{MachineNow, ResourceReading, Snapshot};
use anyhow::{Context, Result};
use app::App;
use crossterm::event::{Event, EventStream};
use futures::{Stream, StreamExt};
use ratatui::backend::Backend;
use ratatui::layout::{Constraint, Layout};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::{Frame, Terminal};
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// Smallest terminal the run view fits in.
pub const MIN_WIDTH: u16 = 80;
pub const MIN_HEIGHT: u16 = 24;

/// Frames are drawn at most this often, and only when something changed.
pub const FRAME_INTERVAL: Duration = Duration::from_millis(100);

/// What the TUI shows that snapshots do not carry.
#[derive(Debug, Clone, Default)]
pub struct TuiInfo {
    pub scenario: String,
    /// `local` or `docker`.
    pub runtime: String,
    pub nodes: Vec<NodeInfo>,
    /// The latest resource reading of each node, as the run publishes them about
    /// once a second; `None` when nothing reads resources.
    pub resources: Option<watch::Receiver<Vec<ResourceReading>>>,
    /// The machine's load from outside the run so far, as the run samples it about
    /// once a second (`None` inside before the first interval); `None` when nothing
    /// samples the host.
    pub machine: Option<watch::Receiver<Option<MachineNow>>>,
    /// Where `r` asks the run for a report snapshot; `None` where nothing writes one.
    pub report_snapshots: Option<SnapshotChannel>,
    /// In a sweep: which point runs and how many there are, `point 2/4: concurrency=4`.
    pub point: Option<String>,
}

/// `r` sends a request; the run answers with a note for the footer (where the
/// snapshot went, or why none was written).
#[derive(Debug, Clone)]
pub struct SnapshotChannel {
    pub requests: mpsc::UnboundedSender<()>,
    pub notes: watch::Receiver<String>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeInfo {
    pub name: String,
    pub implementation: String,
    pub version: String,
    /// `sender`, `receiver`, `router`, or `chain` for the chain backend.
    pub role: String,
    /// Channels the scenario opens with this node; `None` for the chain.
    pub channels: Option<u32>,
}

/// Why the TUI returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TuiExit {
    /// The engine finished (the snapshot sender was dropped).
    Finished,
    /// The operator quit; [`Command::Stop`] was sent.
    Quit,
}

/// Draws the run view until the engine finishes or the operator quits. The terminal
/// is restored before this returns, whatever happened.
pub async fn run(
    snapshots: watch::Receiver<Snapshot>,
    commands: mpsc::UnboundedSender<Command>,
    info: TuiInfo,
) -> Result<TuiExit> {
    let theme = Theme::from_env();
    let mut guard = terminal::enter().context("cannot switch the terminal to the live view")?;
    let exit = drive(
        &mut guard.terminal,
        EventStream::new(),
        snapshots,
        &commands,
        &info,
        &theme,
    )
    .await;
    drop(guard);
    exit
}

/// The loop of [`run`] on any backend and event stream, so tests can drive it:
/// terminal events, snapshot changes and a frame tick that draws only when
/// something changed, at most every [`FRAME_INTERVAL`].
pub async fn drive<B, E>(
    terminal: &mut Terminal<B>,
    mut events: E,
    mut snapshots: watch::Receiver<Snapshot>,
    commands: &mpsc::UnboundedSender<Command>,
    info: &TuiInfo,
    theme: &Theme,
) -> Result<TuiExit>
where
    B: Backend,
    B::Error: std::error::Error + Send + Sync + 'static,
    E: Stream<Item = std::io::Result<Event>> + Unpin,
{
    let mut snapshot = snapshots.borrow_and_update().clone();
    let mut readings = info.resources.clone();
    let mut machine = info.machine.clone();
    let mut notes = info.report_snapshots.as_ref().map(|c| c.notes.clone());
    let mut app = App::new(&snapshot);
    let mut frames = tokio::time::interval(FRAME_INTERVAL);
    frames.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut dirty = true;
    loop {
        tokio::select! {
            _ = frames.tick(), if dirty => {
                terminal
                    .draw(|frame| draw(frame, &app, &snapshot, info, theme))
                    .context("drawing the live view")?;
                dirty = false;
            }
            changed = snapshots.changed() => {
                if changed.is_err() {
                    return Ok(TuiExit::Finished);
                }
                snapshot = snapshots.borrow_and_update().clone();
                app.observe(&snapshot);
                dirty = true;
            }
            changed = async { notes.as_mut().expect("guarded").changed().await }, if notes.is_some() => {
                match changed {
                    Ok(()) => {
                        let note = notes.as_mut().expect("guarded").borrow_and_update().clone();
                        app.message = Some(note);
                        dirty = true;
                    }
                    Err(_) => notes = None,
                }
            }
            changed = async { readings.as_mut().expect("guarded").changed().await }, if readings.is_some() => {
                if changed.is_err() {
                    // The run stopped reading; the last readings stay on screen.
                    readings = None;
                }
                dirty = true;
            }
            changed = async { machine.as_mut().expect("guarded").changed().await }, if machine.is_some() => {
                if changed.is_err() {
                    // The load ended; its last figures stay in the header.
                    machine = None;
                }
                dirty = true;
            }
            event = events.next() => match event {
                Some(Ok(Event::Key(key))) => {
                    if let Some(action) = action::action_for(key) {
                        if let Some(command) = app.update(action) {
                            // The engine gone means the run is ending anyway.
                            let _ = commands.send(command);
                        }
                        if action == app::Action::ReportSnapshot {
                            app.message = Some(match &info.report_snapshots {
                                Some(c) if c.requests.send(()).is_ok() => {
                                    "writing a report snapshot ...".to_string()
                                }
                                _ => "report snapshot: not available in this run".to_string(),
                            });
                        }
                        if app.quit {
                            return Ok(TuiExit::Quit);
                        }
                        dirty = true;
                    }
                }
                Some(Ok(Event::Resize(..))) => dirty = true,
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e).context("reading terminal input"),
                // No more input: nobody can quit by key, so stop as `q` would.
                None => {
                    let _ = commands.send(Command::Stop);
                    return Ok(TuiExit::Quit);
                }
            },
        }
    }
}

/// The whole run view for one snapshot. Reads only; all figures come computed.
pub fn draw(frame: &mut Frame, app: &App, snapshot: &Snapshot, info: &TuiInfo, theme: &Theme) {
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let text = vec![
            Line::raw(format!(
                "terminal too small: need at least {MIN_WIDTH}x{MIN_HEIGHT}"
            )),
            Line::raw(format!("(now {}x{})", area.width, area.height)),
            Line::raw("q quits"),
        ];
        frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), area);
        return;
    }
    let node_rows = (info.nodes.len() as u16).clamp(1, 8) + 3;
    let failure_rows = (snapshot.failures.len() as u16).clamp(1, 8) + 2;
    // The other panes need 19 rows: on a short terminal the tables show what fits.
    let bottom_rows = node_rows.max(failure_rows).min(area.height - 19);
    let [header, top, chart, bottom, footer] = Layout::vertical([
        Constraint::Length(4),
        Constraint::Length(8),
        Constraint::Min(6),
        Constraint::Length(bottom_rows),
        Constraint::Length(1),
    ])
    .areas(area);
    let [tps, latency] =
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(top);
    let [nodes, failures] =
        Layout::horizontal([Constraint::Percentage(65), Constraint::Percentage(35)]).areas(bottom);

    let s = snapshot;
    let machine = (info.machine.as_ref()).and_then(|rx| *rx.borrow());
    frame.render_widget(
        widgets::Header {
            snapshot: s,
            info,
            app,
            machine,
            theme,
        },
        header,
    );
    frame.render_widget(widgets::TpsSparkline { snapshot: s, theme }, tps);
    frame.render_widget(widgets::LatencyTable { snapshot: s, theme }, latency);
    frame.render_widget(widgets::LatencyChart { snapshot: s, theme }, chart);
    let readings = info
        .resources
        .as_ref()
        .map(|rx| rx.borrow().clone())
        .unwrap_or_default();
    frame.render_widget(
        widgets::NodeTable {
            info,
            readings: &readings,
            theme,
        },
        nodes,
    );
    frame.render_widget(widgets::Failures { snapshot: s, theme }, failures);
    frame.render_widget(widgets::Footer { app, theme }, footer);
    if app.help {
        frame.render_widget(widgets::HelpOverlay { theme }, area);
    }
}
