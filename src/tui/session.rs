//! The live view over a whole run: the setup steps first, then the run view while the
//! load goes, then the steps of stopping and tearing down, and only then the terminal
//! restored. While the view owns the terminal, nothing else writes to it: the run
//! publishes its steps as [`Progress`] instead of printing them.

use super::{Theme, TuiExit, TuiInfo, drive, terminal, widgets};
use crate::engine::Command;
use crate::metrics::Snapshot;
use crate::progress::{Progress, Step, StepState};
use anyhow::{Context, Result};
use crossterm::event::{Event, EventStream, KeyCode, KeyEvent, KeyModifiers};
use futures::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::Backend;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

/// How often the step view is redrawn (its spinner and the running step's time move).
const STEP_FRAME: Duration = Duration::from_millis(250);

/// What the run view needs once the load starts.
pub struct LoadView {
    pub snapshots: watch::Receiver<Snapshot>,
    pub commands: mpsc::UnboundedSender<Command>,
    pub info: TuiInfo,
}

/// A live view running beside a network of the run. Hand it each load with
/// [`Session::load`] (a sweep's points in turn), and end it with [`Session::finish`]
/// once teardown is done.
pub struct Session {
    progress: watch::Sender<Progress>,
    load: mpsc::UnboundedSender<LoadView>,
    quit: Arc<AtomicBool>,
    done: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<Option<TuiExit>>>,
}

impl Session {
    /// Takes over the terminal and shows the setup steps. A `q` or Ctrl-C before the
    /// load starts cancels `cancel` (in raw mode Ctrl-C is a key, not a signal).
    pub fn start(info: TuiInfo, cancel: CancellationToken) -> Result<Session> {
        let theme = Theme::from_env();
        let mut guard = terminal::enter().context("cannot switch the terminal to the live view")?;
        let (progress, progress_rx) = watch::channel(Progress::new("setting up"));
        let (load, load_rx) = mpsc::unbounded_channel();
        let (done, done_rx) = oneshot::channel();
        let quit = Arc::new(AtomicBool::new(false));
        let quit_progress = progress.clone();
        let quit_flag = quit.clone();
        let task = tokio::spawn(async move {
            let exit = drive_session(
                &mut guard.terminal,
                EventStream::new(),
                Channels {
                    progress: progress_rx,
                    progress_tx: quit_progress,
                    load: load_rx,
                    done: done_rx,
                    quit: quit_flag,
                },
                cancel,
                &info,
                &theme,
            )
            .await;
            drop(guard);
            exit
        });
        Ok(Session {
            progress,
            load,
            quit,
            done,
            task,
        })
    }

    /// Where the run publishes its steps (a [`crate::setup::StepLog::for_view`]).
    pub fn progress(&self) -> watch::Sender<Progress> {
        self.progress.clone()
    }

    /// Switches to the run view of a load; when it ends, the steps show again until
    /// the next load. After the operator quit, a load is not shown.
    pub fn load(&mut self, view: LoadView) {
        let _ = self.load.send(view);
    }

    /// True once the operator quit a load's view (`q`): the run stops after it.
    pub fn quit(&self) -> bool {
        self.quit.load(Ordering::Relaxed)
    }

    /// Ends the view and restores the terminal. Returns how the run view ended, if
    /// it was shown.
    pub async fn finish(self) -> Result<Option<TuiExit>> {
        let _ = self.done.send(());
        self.task.await.context("the live view panicked")?
    }
}

/// The channels a session listens on.
pub struct Channels {
    pub progress: watch::Receiver<Progress>,
    /// For the session's own "stopping" step after `q`.
    pub progress_tx: watch::Sender<Progress>,
    /// The loads, in turn (a sweep's points share one view).
    pub load: mpsc::UnboundedReceiver<LoadView>,
    pub done: oneshot::Receiver<()>,
    /// Set when the operator quits a load's view.
    pub quit: Arc<AtomicBool>,
}

/// The session's loop on any backend and event stream, so tests can drive it: steps
/// until a load view arrives, the run view until the load ends, steps again until the
/// next load or `done`.
pub async fn drive_session<B, E>(
    terminal: &mut Terminal<B>,
    mut events: E,
    mut ch: Channels,
    cancel: CancellationToken,
    info: &TuiInfo,
    theme: &Theme,
) -> Result<Option<TuiExit>>
where
    B: Backend,
    B::Error: std::error::Error + Send + Sync + 'static,
    E: Stream<Item = std::io::Result<Event>> + Unpin,
{
    let mut exit = None;
    let mut loads_open = true;
    let mut frames = tokio::time::interval(STEP_FRAME);
    frames.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut input_open = true;
    loop {
        tokio::select! {
            _ = frames.tick() => draw_steps(terminal, &ch.progress.borrow(), info, theme)?,
            _ = ch.progress.changed() => {
                draw_steps(terminal, &ch.progress.borrow_and_update(), info, theme)?;
            }
            _ = &mut ch.done => return Ok(exit),
            view = ch.load.recv(), if loads_open && exit != Some(TuiExit::Quit) => {
                let Some(view) = view else {
                    // No further load will come: the steps show until `done`.
                    loads_open = false;
                    continue;
                };
                let ended = drive(
                    terminal,
                    &mut events,
                    view.snapshots,
                    &view.commands,
                    &view.info,
                    theme,
                )
                .await?;
                if ended == TuiExit::Quit {
                    ch.quit.store(true, Ordering::Relaxed);
                    // Payments in flight finish (up to their timeout) before teardown.
                    ch.progress_tx.send_replace(stopping(Instant::now()));
                }
                exit = Some(ended);
            }
            event = events.next(), if input_open => match event {
                Some(Ok(Event::Key(key))) if exit != Some(TuiExit::Quit) && is_stop(key) => {
                    cancel.cancel();
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e).context("reading terminal input"),
                None => input_open = false,
            },
        }
    }
}

/// `q`, Esc or Ctrl-C: stop the run while it is being set up.
fn is_stop(key: KeyEvent) -> bool {
    match key.code {
        KeyCode::Char('q') | KeyCode::Esc => true,
        KeyCode::Char('c') => key.modifiers.contains(KeyModifiers::CONTROL),
        _ => false,
    }
}

fn stopping(now: Instant) -> Progress {
    Progress {
        title: "stopping".into(),
        steps: vec![Step {
            name: "payments in flight finish".into(),
            state: StepState::Running { since: now },
            detail: None,
        }],
        failure: None,
    }
}

fn draw_steps<B>(
    terminal: &mut Terminal<B>,
    progress: &Progress,
    info: &TuiInfo,
    theme: &Theme,
) -> Result<()>
where
    B: Backend,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let now = Instant::now();
    terminal
        .draw(|frame| {
            frame.render_widget(
                widgets::SetupView {
                    progress,
                    info,
                    now,
                    theme,
                },
                frame.area(),
            );
        })
        .context("drawing the live view")?;
    Ok(())
}
