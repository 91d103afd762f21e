//! SIGINT and SIGTERM: they cancel the run's token, and the run says which came. A
//! second one while the run stops (a teardown that hangs) ends the tool at once: the
//! local runtime's processes die with it (their parent-death signal); what a docker run
//! leaves is said, for `lnbench-tui down`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use tokio_util::sync::CancellationToken;

/// The run's cancellation token, cancelled by SIGINT or SIGTERM, and which came.
pub(crate) struct Signals {
    pub cancel: CancellationToken,
    which: Arc<OnceLock<&'static str>>,
    /// A live view owns the terminal: a signal is shown there, not as a line.
    live_view: Arc<AtomicBool>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Signals {
    /// Watches for SIGINT and SIGTERM, which cancel the run.
    pub fn watch() -> Signals {
        let mut signals = Signals::manual();
        signals.task = Some(tokio::spawn(watch_signals(
            signals.cancel.clone(),
            signals.which.clone(),
            signals.live_view.clone(),
        )));
        signals
    }

    /// Signals that only [`Signals::raiser`] raises (tests), none from the OS.
    pub fn manual() -> Signals {
        Signals {
            cancel: CancellationToken::new(),
            which: Arc::new(OnceLock::new()),
            live_view: Arc::new(AtomicBool::new(false)),
            task: None,
        }
    }

    /// Raises `name` as if it had come: records it and cancels the run.
    #[cfg(test)]
    pub fn raiser(&self, name: &'static str) -> impl Fn() + Send + Sync + 'static {
        let (which, cancel) = (self.which.clone(), self.cancel.clone());
        move || {
            let _ = which.set(name);
            cancel.cancel();
        }
    }

    /// Whether a live view owns the terminal now.
    pub fn set_live_view(&self, on: bool) {
        self.live_view.store(on, Ordering::Relaxed);
    }

    /// The signal that interrupted the run, if one did.
    pub fn received(&self) -> Option<&'static str> {
        self.which.get().copied()
    }

    /// Stops watching and says what interrupted the run, if anything.
    pub fn stop(self) {
        if let Some(task) = &self.task {
            task.abort();
        }
        if let Some(sig) = self.received() {
            eprintln!("interrupted by {sig}");
        }
    }
}

/// Cancels the run on SIGINT or SIGTERM and records which one came.
pub(super) async fn watch_signals(
    cancel: CancellationToken,
    which: Arc<OnceLock<&'static str>>,
    live_view: Arc<AtomicBool>,
) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return;
    };
    let name = tokio::select! {
        _ = int.recv() => "SIGINT",
        _ = term.recv() => "SIGTERM",
    };
    let _ = which.set(name);
    if !live_view.load(Ordering::Relaxed) {
        eprintln!("\n{name} received: stopping the load, then tearing down (again to force)");
    }
    cancel.cancel();
    let again = tokio::select! {
        _ = int.recv() => "SIGINT",
        _ = term.recv() => "SIGTERM",
    };
    if live_view.load(Ordering::Relaxed) {
        crate::tui::terminal::restore();
    }
    eprintln!(
        "\nsecond signal ({again}): exiting now without waiting for teardown; local nodes \
         stop with the tool, and `lnbench-tui down` removes any container left"
    );
    std::process::exit(crate::exit::Exit::for_signal(again) as i32);
}
