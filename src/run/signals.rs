//! SIGINT and SIGTERM: they cancel the run's token, and the run says which came. A
//! second one while the run stops (a teardown that hangs) ends the tool at once: the
//! local runtime's processes die with it (their parent-death signal); what a docker run
//! leaves is said, for `lnbench-tui down`.

use std::sync::{Arc, OnceLock};
use tokio_util::sync::CancellationToken;

/// The run's cancellation token, cancelled by SIGINT or SIGTERM, and which came.
pub(crate) struct Signals {
    pub cancel: CancellationToken,
    which: Arc<OnceLock<&'static str>>,
    task: tokio::task::JoinHandle<()>,
}

impl Signals {
    pub fn watch() -> Signals {
        Signals::watch_with(CancellationToken::new(), false)
    }

    /// Watches for signals that cancel `cancel`; with a live view on the terminal,
    /// quietly (the view shows the run stopping).
    pub fn watch_with(cancel: CancellationToken, live_view: bool) -> Signals {
        let which = Arc::new(OnceLock::new());
        let task = tokio::spawn(watch_signals(cancel.clone(), which.clone(), live_view));
        Signals {
            cancel,
            which,
            task,
        }
    }

    /// The signal that interrupted the run, if one did.
    pub fn received(&self) -> Option<&'static str> {
        self.which.get().copied()
    }

    /// Stops watching and says what interrupted the run, if anything.
    pub fn stop(self) {
        self.task.abort();
        if let Some(sig) = self.received() {
            eprintln!("interrupted by {sig}");
        }
    }
}

/// Cancels the run on SIGINT or SIGTERM and records which one came.
pub(super) async fn watch_signals(
    cancel: CancellationToken,
    which: Arc<OnceLock<&'static str>>,
    live_view: bool,
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
    if !live_view {
        eprintln!("\n{name} received: stopping the load, then tearing down (again to force)");
    }
    cancel.cancel();
    let again = tokio::select! {
        _ = int.recv() => "SIGINT",
        _ = term.recv() => "SIGTERM",
    };
    if live_view {
        crate::tui::terminal::restore();
    }
    eprintln!(
        "\nsecond signal ({again}): exiting now without waiting for teardown; local nodes \
         stop with the tool, and `lnbench-tui down` removes any container left"
    );
    std::process::exit(130);
}
