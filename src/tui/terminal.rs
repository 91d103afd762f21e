//! Raw mode and the alternate screen, entered once and always left: on return, on
//! error (the guard's `Drop`) and on panic (a hook that restores before the panic
//! message is printed, so it is readable).

use crossterm::cursor::{Hide, Show};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::io::{self, Stdout};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether the terminal is in raw mode on the alternate screen now.
static ACTIVE: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

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
