use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = lnbench_tui::cli::Cli::parse();
    match lnbench_tui::run(cli) {
        Ok(code) => code.into(),
        Err(err) => {
            eprintln!("Error: {err:#}");
            lnbench_tui::exit_code_for(&err).into()
        }
    }
}
