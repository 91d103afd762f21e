use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let cli = lnbench_tui::cli::Cli::parse_checked();
    if cli.no_color {
        lnbench_tui::tui::theme::disable_color();
    }
    lnbench_tui::headless::set_verbosity(cli.verbose);
    install_log(cli.verbose);
    let result = lnbench_tui::run(cli);
    // A clean end: the owner lock's file goes, unless a teardown left something.
    lnbench_tui::leftovers::lock::let_go();
    match result {
        Ok(code) => code.into(),
        Err(err) => {
            // Ignoring a write error: a reader that went away must not turn the exit
            // code into a panic's.
            let _ = writeln!(
                std::io::stderr().lock(),
                "{}",
                lnbench_tui::error_message(&err)
            );
            lnbench_tui::exit_code_for(&err).into()
        }
    }
}

/// Log lines (`tracing`) go to stderr, filtered by `RUST_LOG`; without it, this
/// crate's warnings only (a node killed because it did not stop, a fault that failed),
/// more with `-v` / `-vv`. The live view holds them until it leaves the screen.
fn install_log(verbosity: u8) {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(lnbench_tui::headless::log_filter(verbosity)));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| lnbench_tui::tui::terminal::LogWriter)
        .with_ansi(std::io::stderr().is_terminal() && lnbench_tui::tui::theme::color_wanted())
        .init();
}
