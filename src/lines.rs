//! Lines for the terminal on the paths that must finish: the signal watcher, the
//! summary and threshold verdicts, report paths, teardown, a sweep's table. Each is
//! written to the locked stream and a write error is ignored: when the reader went
//! away (`lnbench-tui ... 2>&1 | tee run.log`, and Ctrl-C killed `tee` too),
//! `println!` would panic, and the run would neither stop its load nor write its
//! report. A line lost is fine; the run going on is not. A leaf: it uses nothing of
//! the crate.

use std::fmt::Display;
#[cfg(not(test))]
use std::io::Write;

/// One line to standard output; lost if nobody reads it.
#[allow(clippy::print_stdout, clippy::print_stderr)] // test builds only
pub(crate) fn out(line: impl Display) {
    #[cfg(not(test))]
    let _ = writeln!(std::io::stdout().lock(), "{line}");
    // The test harness captures only the print macros; a test's output is never a
    // closed pipe, and the binary's own tests (tests/cli.rs) cover the real path.
    #[cfg(test)]
    println!("{line}");
}

/// Text as it is (its own line ends) to standard output; lost if nobody reads it.
#[allow(clippy::print_stdout, clippy::print_stderr)] // test builds only
pub(crate) fn out_text(text: &str) {
    #[cfg(not(test))]
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    #[cfg(test)]
    print!("{text}");
}

/// One line to standard error; lost if nobody reads it.
#[allow(clippy::print_stdout, clippy::print_stderr)] // test builds only
pub(crate) fn err(line: impl Display) {
    #[cfg(not(test))]
    let _ = writeln!(std::io::stderr().lock(), "{line}");
    #[cfg(test)]
    eprintln!("{line}");
}

/// `println!` that cannot panic: [`out`] with `format!` arguments.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::lines::out(format_args!($($arg)*))
    };
}

/// `eprintln!` that cannot panic: [`err`] with `format!` arguments.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::lines::err(format_args!($($arg)*))
    };
}

pub(crate) use {errln, outln};
