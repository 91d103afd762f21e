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
    match shell {
        clap_complete::Shell::Bash => script = bash_arms_named_as_the_loop_names_them(&script),
        clap_complete::Shell::Zsh => script = zsh_first_word_scenario_or_command(&script),
        _ => {}
    }
    out.write_all(&script)?;
    out.flush()
}

/// clap_complete's bash script names the state of a subcommand in two ways when the
/// program's name has a hyphen (clap issues 6421 and 6529, open): the loop over the
/// words reaches `lnbench__tui__subcmd__compare`, while the arms that list the
/// subcommand's options are labelled `lnbench__subcmd__tui__subcmd__compare`, so
/// nothing after the first word ever completed. The arms are renamed to the loop's
/// spelling. fish needs nothing; zsh has a problem of its own (below).
fn bash_arms_named_as_the_loop_names_them(script: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(script);
    let arm = BIN.replace('-', "__subcmd__");
    let state = BIN.replace('-', "__");
    text.replace(&format!("{arm}__subcmd__"), &format!("{state}__subcmd__"))
        .into_bytes()
}

/// clap_complete's zsh script takes the first word for the optional scenario and the
/// second for the subcommand, so `lnbench-tui history <TAB>` offered the subcommands
/// again and no subcommand's options or arguments ever completed. The first word is
/// made either (a subcommand or a scenario file), the state dispatches on it, and
/// after a scenario the top-level options complete as before.
fn zsh_first_word_scenario_or_command(script: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(script);
    let scenario = text
        .lines()
        .find(|l| l.starts_with("'::scenario -- "))
        .map(|l| format!("{l}\n"));
    let commands = format!("\":: :_{BIN}_commands\" \\\n");
    let (Some(scenario), true) = (scenario, text.contains(&commands)) else {
        return script.to_vec();
    };
    // The top-level options: between the first `_arguments` and the scenario.
    let head = "_arguments \"${_arguments_options[@]}\" : \\\n";
    let options = match (text.find(head), text.find(&scenario)) {
        (Some(a), Some(b)) if a < b => text[a + head.len()..b].to_string(),
        _ => return script.to_vec(),
    };
    let names: Vec<String> = (Cli::command().get_subcommands())
        .map(|c| c.get_name().to_string())
        .chain(["help".to_string()])
        .collect();
    let either = format!("\"::scenario or command:{{_{BIN}_commands; _files}}\" \\\n");
    let text = text.replacen(&format!("{scenario}{commands}"), &either, 1);
    let state = format!(
        "        words=($line[2] \"${{words[@]}}\")\n        (( CURRENT += 1 ))\n        \
         curcontext=\"${{curcontext%:*:*}}:{BIN}-command-$line[2]:\"\n        case $line[2] in\n"
    );
    // The words shifted as for a subcommand, then the options after a scenario.
    let shifted = state.replace("$line[2]", "$line[1]");
    let case = "        case $line[1] in\n";
    let dispatch = format!(
        "{}        local -a subcommands=({names})\n        \
         if (( ! ${{subcommands[(Ie)$line[1]]}} )); then\n\
         _arguments \"${{_arguments_options[@]}}\" : \\\n{options}&& ret=0\n        fi\n{case}",
        shifted.trim_end_matches(case),
        names = names.join(" "),
    );
    text.replacen(&state, &dispatch, 1).into_bytes()
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

/// The environment variables the tool reads, and what each does, for the man page's
/// ENVIRONMENT section (a unit test checks that each is named in src/).
const ENVIRONMENT: [(&str, &str); 12] = [
    (
        "RUST_LOG",
        "which log lines go to stderr (e.g. lnbench_tui=debug); when set, it replaces the filter -v and -vv choose",
    ),
    (
        "NO_COLOR",
        "when set and not empty, no colour in the live view or the log lines, as --no-color",
    ),
    (
        "LNBENCH_CACHE",
        "the cache directory: node binaries built by scripts/build-nodes.sh (bin/, versions/), snapshots, and the default results store history.sqlite",
    ),
    (
        "XDG_CACHE_HOME",
        "without LNBENCH_CACHE, the cache directory is $XDG_CACHE_HOME/lnbench-tui",
    ),
    (
        "HOME",
        "without either, the cache is ~/.cache/lnbench-tui; ~/ in a scenario's paths; ~/.kube/config",
    ),
    (
        "PATH",
        "where node binaries, postgres and perf are looked for after the cache (a scenario's explicit binary path is the only candidate)",
    ),
    (
        "LNBENCH_HISTORY",
        "the results store a run records itself in and history reads, a file or a postgres:// URL, when --store is not given; off records nothing",
    ),
    (
        "PGPASSWORD",
        "the password of a postgres:// results store whose URL has none",
    ),
    (
        "LNBENCH_PERF",
        "the perf binary of --profile (nodes other than LND), instead of perf on the PATH",
    ),
    (
        "DOCKER_HOST",
        "the Docker engine of runtime: docker, snapshots in Docker and down, instead of the local socket",
    ),
    (
        "KUBECONFIG",
        "the kubeconfig of runtime: kubernetes and down, instead of ~/.kube/config (in a pod, without either: the pod's own cluster)",
    ),
    (
        "$NAME",
        "a scenario's external node may give a credential's path as $NAME: the path is read from that variable",
    ),
];

/// Writes the man page (roff, section 1): clap_mangen's sections, then ours: the
/// commands (clap_mangen's section would point to a page per command, which is not
/// written), the environment, and the exit status before VERSION, where man pages keep
/// it.
pub(crate) fn man(out: &mut dyn Write) -> std::io::Result<()> {
    let mut command = Cli::command();
    command.build();
    let page = clap_mangen::Man::new(command.clone());
    page.render_title(out)?;
    page.render_name_section(out)?;
    page.render_synopsis_section(out)?;
    page.render_description_section(out)?;
    page.render_options_section(out)?;
    writeln!(out, ".SH COMMANDS")?;
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        writeln!(
            out,
            ".TP\n\\fB{} {}\\fR\n{}",
            BIN.replace('-', "\\-"),
            roff_text(sub.get_name()),
            roff_text(&about)
        )?;
    }
    writeln!(
        out,
        ".PP\n{}",
        roff_text(&format!(
            "Each command's options: {BIN} COMMAND --help; history and snapshot have commands of their own ({BIN} history list --help)."
        ))
    )?;
    writeln!(out, ".SH ENVIRONMENT")?;
    for (name, meaning) in ENVIRONMENT {
        writeln!(out, ".TP\n{}\n{}", roff_text(name), roff_text(meaning))?;
    }
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
        for sub in [
            "validate",
            "compare",
            "down",
            "completions",
            "man",
            "history",
        ] {
            assert!(
                page.contains(&format!("\\fBlnbench\\-tui {sub}\\fR")),
                "{sub} missing"
            );
        }
        // No page is written for a command: none is pointed to.
        assert!(!page.contains("lnbench\\-tui\\-validate"), "{page}");
        assert!(!page.contains("(1)"), "{page}");
        for code in [0, 1, 2, 3, 130, 143] {
            assert!(
                page.contains(&format!(".TP\n{code}\n")),
                "exit {code} missing"
            );
        }
    }

    /// Every variable the ENVIRONMENT section names is read in src/ (or, for
    /// DOCKER_HOST and RUST_LOG, by the client the code there sets up).
    #[test]
    fn the_environment_section_names_what_the_code_reads() {
        let page = man_page();
        let section = page.split(".SH ENVIRONMENT").nth(1).expect("ENVIRONMENT");
        let section = section.split(".SH").next().unwrap_or_default();
        let mut sources = String::new();
        let mut dirs = vec![std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src"
        ))];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with(file!()) {
                    sources.push_str(&std::fs::read_to_string(&path).unwrap());
                }
            }
        }
        for (name, _) in ENVIRONMENT {
            assert!(
                section.contains(&format!(".TP\n{}\n", roff_text(name))),
                "{name}: {section}"
            );
            if name != "$NAME" {
                assert!(sources.contains(name), "{name} is named nowhere in src/");
            }
        }
        assert!(
            sources.contains("strip_prefix('$')"),
            "$NAME is no longer read"
        );
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
