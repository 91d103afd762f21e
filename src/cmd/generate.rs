//! Files generated from the command line's definition, so they cannot drift from it:
//! shell completions and the man page.

use crate::cli::Cli;
use crate::exit::Exit;
use clap::CommandFactory;
use std::io::Write;

/// The program's name as installed, which completions are registered under.
const BIN: &str = "lnbench-tui";

/// Writes the completion script for `shell` (e.g. `source <(lnbench-tui completions bash)`).
pub(crate) fn completions(shell: clap_complete::Shell, out: &mut dyn Write) -> std::io::Result<()> {
    // clap_complete panics when its writer fails: it writes to memory, and a closed
    // pipe (`| head`) is then an error of ours.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), BIN, &mut script);
    if shell == clap_complete::Shell::Bash {
        script = bash_arms_named_as_the_loop_names_them(&script);
    }
    out.write_all(&script)?;
    out.flush()
}

/// clap_complete's bash script names the state of a subcommand in two ways when the
/// program's name has a hyphen (clap issues 6421 and 6529, open): the loop over the
/// words reaches `lnbench__tui__subcmd__compare`, while the arms that list the
/// subcommand's options are labelled `lnbench__subcmd__tui__subcmd__compare`, so
/// nothing after the first word ever completed. The arms are renamed to the loop's
/// spelling; zsh and fish keep the name as it is and need nothing.
fn bash_arms_named_as_the_loop_names_them(script: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(script);
    let arm = BIN.replace('-', "__subcmd__");
    let state = BIN.replace('-', "__");
    text.replace(&format!("{arm}__subcmd__"), &format!("{state}__subcmd__"))
        .into_bytes()
}

/// What each exit code means, for the man page (the README has the same table).
const EXIT_STATUS: [(Exit, &str); 7] = [
    (Exit::Ok, "the run completed (and every threshold passed)"),
    (Exit::ThresholdFailed, "a threshold failed"),
    (Exit::BadInput, "bad input: a scenario or a flag is wrong"),
    (
        Exit::Environment,
        "the environment failed: a binary is missing, a node did not start, an RPC failed",
    ),
    (
        Exit::Interrupted,
        "interrupted by SIGINT (Ctrl-C): the partial report is written, everything torn down",
    ),
    (
        Exit::HungUp,
        "stopped by SIGHUP (the session went away): as for 130",
    ),
    (Exit::Terminated, "stopped by SIGTERM: as for 130"),
];

/// Writes the man page (roff, section 1): clap_mangen's sections, with an EXIT STATUS
/// section of ours before VERSION, where man pages keep it.
pub(crate) fn man(out: &mut dyn Write) -> std::io::Result<()> {
    let page = clap_mangen::Man::new(Cli::command());
    page.render_title(out)?;
    page.render_name_section(out)?;
    page.render_synopsis_section(out)?;
    page.render_description_section(out)?;
    page.render_options_section(out)?;
    page.render_subcommands_section(out)?;
    writeln!(out, ".SH \"EXIT STATUS\"")?;
    for (code, meaning) in EXIT_STATUS {
        writeln!(out, ".TP\n{}\n{}", code as u8, roff_text(meaning))?;
    }
    page.render_version_section(out)?;
    out.flush()
}

/// Text as roff reads it literally: backslashes and hyphens escaped, and a line that
/// would start with a control character guarded.
fn roff_text(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with(['.', '\'']) {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn man_page() -> String {
        let mut out = Vec::new();
        man(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_man_page_has_a_title_the_options_and_every_exit_code() {
        let page = man_page();
        assert!(page.contains(".TH lnbench-tui 1"), "{page}");
        for flag in ["report", "no\\-tui", "no\\-color", "metrics\\-listen"] {
            assert!(page.contains(&format!("\\-\\-{flag}")), "--{flag} missing");
        }
        for sub in ["validate", "compare", "down", "completions", "man"] {
            assert!(
                page.contains(&format!("lnbench\\-tui\\-{sub}")),
                "{sub} missing"
            );
        }
        for code in [0, 1, 2, 3, 130, 143] {
            assert!(
                page.contains(&format!(".TP\n{code}\n")),
                "exit {code} missing"
            );
        }
    }

    #[test]
    fn text_is_escaped_for_roff() {
        assert_eq!(roff_text("a-b"), "a\\-b");
        assert_eq!(roff_text(".x"), "\\&.x");
        assert_eq!(roff_text("a\\b"), "a\\eb");
    }

    #[test]
    fn every_shell_gets_a_script_naming_the_program() {
        for shell in [
            clap_complete::Shell::Bash,
            clap_complete::Shell::Zsh,
            clap_complete::Shell::Fish,
        ] {
            let mut out = Vec::new();
            completions(shell, &mut out).unwrap();
            let script = String::from_utf8(out).unwrap();
            assert!(script.contains(BIN), "{shell}");
            assert!(script.contains("no-color"), "{shell}");
        }
    }
}
