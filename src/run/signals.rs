//! SIGINT, SIGTERM and SIGHUP (an SSH session that dropped): they cancel the run's
//! token, and the run says which came. A second one while the run stops (a teardown
//! that hangs) ends the tool without waiting, once the load's partial report is
//! written if it was not yet (`Signals::on_forced_exit`): the local runtime's processes die with it
//! (their parent-death signal); what a docker run leaves is said, for
//! `lnbench-tui down`.

use crate::lines::errln;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use tokio_util::sync::CancellationToken;

/// The run's cancellation token, cancelled by SIGINT, SIGTERM or SIGHUP, and which came.
pub(crate) struct Signals {
    pub cancel: CancellationToken,
    which: Arc<OnceLock<&'static str>>,
    /// A live view owns the terminal: a signal is shown there, not as a line.
    live_view: Arc<AtomicBool>,
    last_words: LastWords,
    task: Option<tokio::task::JoinHandle<()>>,
}

/// What a forced exit (a second signal) still does before the tool ends: write the
/// partial report of the load in progress, when one is not written yet.
type LastWords = Arc<Mutex<Option<ForcedExit>>>;

/// Called with the first signal's name.
pub(crate) type ForcedExit = Box<dyn FnOnce(&str) + Send>;

/// Keeps [`Signals::on_forced_exit`]'s work registered until dropped.
pub(crate) struct LastWordsGuard(LastWords);

impl Drop for LastWordsGuard {
    fn drop(&mut self) {
        take(&self.0);
    }
}

fn take(words: &LastWords) -> Option<ForcedExit> {
    words.lock().unwrap_or_else(PoisonError::into_inner).take()
}

impl Signals {
    /// Watches for SIGINT, SIGTERM and SIGHUP, which cancel the run.
    ///
    /// The handlers are in place when this returns (not once the watcher's task first
    /// runs): a signal from then on cancels the run rather than ending the tool.
    pub fn watch() -> Signals {
        use tokio::signal::unix::{SignalKind, signal};
        let mut signals = Signals::manual();
        let (Ok(int), Ok(term), Ok(hup)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) else {
            return signals;
        };
        signals.task = Some(tokio::spawn(watch_signals(
            [int, term, hup],
            signals.cancel.clone(),
            signals.which.clone(),
            signals.live_view.clone(),
            signals.last_words.clone(),
        )));
        signals
    }

    /// Signals that only [`Signals::raiser`] raises (tests), none from the OS.
    pub fn manual() -> Signals {
        Signals {
            cancel: CancellationToken::new(),
            which: Arc::new(OnceLock::new()),
            live_view: Arc::new(AtomicBool::new(false)),
            last_words: Arc::default(),
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

    /// Registers what a forced exit does first (until the guard is dropped): the load's
    /// partial report, so that a second signal before the report is written does not
    /// lose what the load recorded.
    pub fn on_forced_exit(&self, words: ForcedExit) -> LastWordsGuard {
        *self
            .last_words
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(words);
        LastWordsGuard(self.last_words.clone())
    }

    /// Does what a second signal after `first` does before the tool exits (tests).
    #[cfg(test)]
    pub fn forcer(&self, first: &'static str) -> impl Fn() + Send + Sync + 'static {
        let words = self.last_words.clone();
        move || {
            if let Some(words) = take(&words) {
                words(first);
            }
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
            errln!("interrupted by {sig}");
        }
    }
}

/// Cancels the run on SIGINT, SIGTERM or SIGHUP and records which one came.
///
/// The run is cancelled before anything is printed, and every line ignores write
/// errors: when the terminal's reader is gone (a pipe to `tee` that the same Ctrl-C
/// killed, an SSH session that dropped), a print must neither keep the load going
/// nor end this task, which a second signal still needs.
async fn watch_signals(
    [mut int, mut term, mut hup]: [tokio::signal::unix::Signal; 3],
    cancel: CancellationToken,
    which: Arc<OnceLock<&'static str>>,
    live_view: Arc<AtomicBool>,
    last_words: LastWords,
) {
    let mut next = async || {
        tokio::select! {
            _ = int.recv() => "SIGINT",
            _ = term.recv() => "SIGTERM",
            _ = hup.recv() => "SIGHUP",
        }
    };
    let name = next().await;
    let _ = which.set(name);
    cancel.cancel();
    if !live_view.load(Ordering::Relaxed) {
        errln!("\n{name} received: stopping the load, then tearing down (again to force)");
    }
    let again = next().await;
    if live_view.load(Ordering::Relaxed) {
        crate::tui::terminal::restore();
    }
    errln!(
        "\nsecond signal ({again}): exiting now without waiting for teardown; local nodes \
         stop with the tool, and `lnbench-tui down` removes any container left"
    );
    if let Some(words) = take(&last_words) {
        words(name);
    }
    std::process::exit(crate::exit::Exit::for_signal(again) as i32);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real SIGHUP (an SSH session that dropped) sent to this process: without a
    /// handler it would end the test process; with one it cancels the run and is
    /// recorded, as SIGTERM is.
    #[tokio::test]
    async fn sighup_cancels_the_run_and_is_recorded() {
        let signals = Signals::watch();
        nix::sys::signal::raise(nix::sys::signal::Signal::SIGHUP).unwrap();
        tokio::time::timeout(
            std::time::Duration::from_secs(5),
            signals.cancel.cancelled(),
        )
        .await
        .expect("SIGHUP did not cancel the run");
        assert_eq!(signals.received(), Some("SIGHUP"));
        signals.stop();
    }
}
