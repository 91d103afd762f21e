//! How the tool ends: its exit codes, and errors told on one line. A leaf: every
//! layer may use it, and it uses none.

/// Exit codes (see README).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The run completed (and every threshold passed).
    Ok = 0,
    /// A threshold failed.
    ThresholdFailed = 1,
    /// Bad input: a scenario or a flag is wrong.
    BadInput = 2,
    /// The environment failed: a binary is missing, a node did not start, an RPC failed.
    Environment = 3,
    /// Stopped by SIGINT (Ctrl-C); the partial report is written and everything torn down.
    Interrupted = 130,
    /// Stopped by SIGTERM; as [`Exit::Interrupted`], with the shell's code for that
    /// signal (128 + 15), so a supervisor can tell its own stop from an operator's Ctrl-C.
    Terminated = 143,
    /// Stopped by SIGHUP (the terminal or SSH session went away); handled as SIGTERM,
    /// with that signal's code (128 + 1).
    HungUp = 129,
}

impl Exit {
    /// The exit code for a run stopped by the signal `name` ("SIGINT", "SIGTERM").
    pub fn for_signal(name: &str) -> Exit {
        match name {
            "SIGTERM" => Exit::Terminated,
            "SIGHUP" => Exit::HungUp,
            _ => Exit::Interrupted,
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        std::process::ExitCode::from(e as u8)
    }
}

/// An error with its sources, `outer: inner: innermost`, for one-line messages.
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    use std::fmt::Write;
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let _ = write!(text, ": {s}");
        source = s.source();
    }
    text
}

/// A mistake in how the tool was called (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub &'static str);

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn the_chain_names_every_source_in_order() {
        let e = Outer(std::io::Error::other("inner"));
        assert_eq!(error_chain(&e), "outer: inner");
    }

    #[test]
    fn a_signal_exits_with_128_plus_its_number() {
        assert_eq!(Exit::for_signal("SIGINT") as u8, 130);
        assert_eq!(Exit::for_signal("SIGTERM") as u8, 143);
    }
}
