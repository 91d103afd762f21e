//! Raw mode and the alternate screen, entered once and always left: on return, on
//! error (the guard's `Drop`) and on panic (a hook that restores before the panic
//! message is printed, so it is readable).
//!
//! Log lines (`tracing`, written through [`LogWriter`]) would tear the live view: while
//! it owns the screen they are held, and printed to stderr once it is left.

use crossterm::cursor::{Hide, Show};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::io::{self, Stdout, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};

/// Whether the terminal is in raw mode on the alternate screen now.
static ACTIVE: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();
/// Log output written while the live view owns the screen.
static HELD: Mutex<Vec<u8>> = Mutex::new(Vec::new());
/// Past this, held log output is dropped (a log loop must not grow memory unbounded).
const MAX_HELD: usize = 1 << 20;

/// The terminal in TUI mode; restored when dropped.
pub struct TerminalGuard {
    pub terminal: Terminal<CrosstermBackend<Stdout>>,
}

/// Enters raw mode and the alternate screen.
pub fn enter() -> io::Result<TerminalGuard> {
    install_panic_hook();
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let guard = |e: io::Error| {
        restore();
        e
    };
    execute!(io::stdout(), EnterAlternateScreen, Hide).map_err(guard)?;
    let terminal = Terminal::new(CrosstermBackend::new(io::stdout())).map_err(guard)?;
    Ok(TerminalGuard { terminal })
}

/// Leaves raw mode and the alternate screen, if the TUI entered them; idempotent.
pub fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let _ = disable_raw_mode();
        let _ = execute!(io::stdout(), LeaveAlternateScreen, Show);
        // After ACTIVE is false, so a line written meanwhile is either held here or
        // goes straight to stderr: HELD's lock orders the two.
        let held = std::mem::take(&mut *held());
        let _ = io::stderr().write_all(&held);
    }
}

fn held() -> std::sync::MutexGuard<'static, Vec<u8>> {
    HELD.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Where log lines go: stderr, or held while the live view owns the screen.
pub struct LogWriter;

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut held = held();
        if ACTIVE.load(Ordering::SeqCst) {
            if held.len() + buf.len() <= MAX_HELD {
                held.extend_from_slice(buf);
            }
            return Ok(buf.len());
        }
        drop(held);
        io::stderr().write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stderr().flush()
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}
