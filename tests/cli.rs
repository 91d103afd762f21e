//! The command line through the real binary: validation, exit codes, messages.
//! (Fast: nothing here starts a node.)

mod common;

use assert_cmd::Command;
use common::repo_file;
use predicates::prelude::*;

fn lnbench() -> Command {
    Command::new(common::lnbench())
}

#[test]
fn every_shipped_scenario_validates() {
    let files: Vec<_> = std::fs::read_dir(repo_file("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    assert!(!files.is_empty(), "no scenarios shipped");
    lnbench()
        .arg("validate")
        .args(&files)
        .assert()
        .success()
        .stdout(predicate::str::contains("alice-pays-bob.yaml: ok"));
}

#[test]
fn broken_scenario_exits_2_with_file_line_column() {
    let file = repo_file("tests/fixtures/scenarios/invalid/unknown-channel-node.yaml");
    lnbench()
        .arg(&file)
        .args(["--report", "unused"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "{}:10:9: ",
            file.display()
        )))
        .stderr(predicate::str::contains("hint: add carol under nodes:"));
}

#[test]
fn validate_reports_every_broken_file_and_exits_2() {
    lnbench()
        .arg("validate")
        .arg(repo_file("scenarios/alice-pays-bob.yaml"))
        .arg(repo_file(
            "tests/fixtures/scenarios/invalid/zero-capacity.yaml",
        ))
        .arg(repo_file(
            "tests/fixtures/scenarios/invalid/zero-count.yaml",
        ))
        .assert()
        .code(2)
        .stdout(predicate::str::contains("alice-pays-bob.yaml: ok"))
        .stderr(predicate::str::contains("zero-capacity.yaml:11:19"))
        .stderr(predicate::str::contains("zero-count.yaml:12:12"))
        .stderr(predicate::str::contains(
            "2 of 3 scenario files have errors",
        ));
}

#[test]
fn missing_scenario_file_exits_2_naming_it() {
    lnbench()
        .arg("does/not/exist.yaml")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("does/not/exist.yaml"));
}

#[test]
fn no_scenario_exits_2_with_usage_hint() {
    lnbench()
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no scenario given"));
}

#[test]
fn upgrade_without_a_snapshot_exits_2_before_starting_anything() {
    let run_dir = tempfile::tempdir().unwrap();
    lnbench()
        .arg(repo_file("scenarios/alice-pays-bob.yaml"))
        .args(["--upgrade", "--no-store", "--run-dir"])
        .arg(run_dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--upgrade restores a snapshot onto newer nodes",
        ));
    assert!(
        std::fs::read_dir(run_dir.path()).unwrap().next().is_none(),
        "nothing should have been started or created"
    );
}

#[test]
fn snapshot_save_of_a_sweep_that_is_no_history_ladder_exits_2_before_starting_anything() {
    let work = tempfile::tempdir().unwrap();
    let to = work.path().join("snap");
    lnbench()
        .args(["snapshot", "save"])
        .arg(repo_file("scenarios/alice-pays-bob-rates.yaml"))
        .arg("--to")
        .arg(&to)
        .arg("--run-dir")
        .arg(work.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "alice-pays-bob-rates.yaml: `snapshot save` keeps one network",
        ));
    assert!(
        !to.exists() && std::fs::read_dir(work.path()).unwrap().next().is_none(),
        "nothing should have been started or created"
    );
}

#[test]
fn missing_node_binary_exits_3_before_starting_anything() {
    let run_dir = tempfile::tempdir().unwrap();
    lnbench()
        .arg(repo_file(
            "tests/fixtures/scenarios/env/missing-binary.yaml",
        ))
        .arg("--run-dir")
        .arg(run_dir.path())
        .assert()
        .code(3)
        .stderr(predicate::str::contains("/nonexistent/lnbench/lnd"))
        .stderr(predicate::str::contains("fix `binary:` in the scenario"));
    assert!(
        std::fs::read_dir(run_dir.path()).unwrap().next().is_none(),
        "nothing should have been started or created"
    );
}

#[test]
fn bitcoind_not_built_exits_3_naming_the_build_command() {
    let work = tempfile::tempdir().unwrap();
    // Only lnd "built": the chain backend is what is missing.
    let bin = work.path().join("cache").join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for name in ["lnd", "btcd"] {
        let path = bin.join(name);
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    lnbench()
        .arg(repo_file(
            "tests/fixtures/scenarios/valid/alice-pays-bob-bitcoind.yaml",
        ))
        .arg("--run-dir")
        .arg(work.path().join("runs"))
        .env("LNBENCH_CACHE", work.path().join("cache"))
        .env("PATH", "/nonexistent")
        .assert()
        .code(3)
        .stderr(predicate::str::contains(
            "no bitcoind binary found for the chain backend (bitcoind)",
        ))
        .stderr(predicate::str::contains(
            "BITCOIN_SRC=<tree> scripts/build-nodes.sh",
        ));
    assert!(
        std::fs::read_dir(work.path().join("runs")).map_or(true, |mut d| d.next().is_none()),
        "nothing should have been started or created"
    );
}

/// `lnbench-tui ... 2>&1 | tee run.log` and Ctrl-C: `tee` dies too, and every line the
/// tool writes after that meets a closed pipe. A write error must not panic the tool
/// (exit 101): it goes on and ends with its own exit code.
#[test]
fn a_reader_that_went_away_does_not_panic_the_tool() {
    let closed_pipe = || {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        writer
    };
    let run = |args: &[&std::ffi::OsStr]| {
        std::process::Command::new(common::lnbench())
            .args(args)
            .stdout(closed_pipe())
            .stderr(closed_pipe())
            .status()
            .unwrap()
            .code()
    };
    let scenario = repo_file("scenarios/alice-pays-bob.yaml");
    // Its verdict goes to stdout.
    assert_eq!(run(&["validate".as_ref(), scenario.as_os_str()]), Some(0));
    // Its error goes to stderr.
    assert_eq!(run(&["does/not/exist.yaml".as_ref()]), Some(2));
}

#[test]
fn an_unwritable_report_directory_exits_2_before_anything_starts() {
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let runs = work.path().join("runs");
    lnbench()
        .arg(repo_file("scenarios/alice-pays-bob.yaml"))
        .arg("--report")
        .arg(file.join("report"))
        .arg("--run-dir")
        .arg(&runs)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--report "))
        .stderr(predicate::str::contains(
            "not a directory this user can write",
        ));
    assert!(
        std::fs::read_dir(&runs).map_or(true, |mut d| d.next().is_none()),
        "nothing should have been started"
    );
    // The same for --run-dir and compare --out.
    lnbench()
        .arg(repo_file("scenarios/alice-pays-bob.yaml"))
        .arg("--run-dir")
        .arg(file.join("runs"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--run-dir "));
    lnbench()
        .arg("compare")
        .arg(repo_file("tests/fixtures/reports/lnd-0.18"))
        .arg(repo_file("tests/fixtures/reports/lnd-0.19"))
        .arg("--out")
        .arg(file.join("out"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--out "));
}

#[test]
fn no_color_is_taken_by_a_run_and_by_every_command() {
    let file = repo_file("scenarios/alice-pays-bob.yaml");
    // A run's flags come with its scenario; a missing file shows the flag was parsed.
    lnbench()
        .args(["--no-color", "no-such-scenario.yaml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read the scenario file"));
    lnbench()
        .arg("validate")
        .arg(&file)
        .arg("--no-color")
        .env("NO_COLOR", "1")
        .assert()
        .success();
    lnbench()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("--no-color"));
}

/// Global options go before a subcommand as after it (`-v validate FILE`); a scenario
/// run's own arguments never go with a subcommand, and the error names the one given.
#[test]
fn global_options_go_before_and_after_a_subcommand() {
    use lnbench_tui::cli::{Cli, Command};
    let parse = |args: &[&str]| {
        Cli::try_parse_checked(std::iter::once("lnbench-tui").chain(args.iter().copied()))
    };
    for args in [
        &["-v", "validate", "x.yaml"][..],
        &["--no-color", "validate", "x.yaml"],
        &["--no-color", "-vv", "validate", "x.yaml", "-v"],
    ] {
        let cli = parse(args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        assert!(
            matches!(&cli.command, Some(Command::Validate { files }) if files == &[std::path::PathBuf::from("x.yaml")]),
            "{args:?}: {cli:?}"
        );
        assert!(cli.run.scenario.is_none(), "{args:?}: {cli:?}");
    }
    assert_eq!(parse(&["-vv", "validate", "x.yaml"]).unwrap().verbose, 2);
    for (args, named) in [
        (
            &["--report", "out", "validate", "x.yaml"][..],
            "--report goes with a scenario run, not with `validate`",
        ),
        (
            &["--payments", "5", "history", "list"],
            "--payments goes with a scenario run, not with `history`",
        ),
        (
            &["run.yaml", "validate", "x.yaml"],
            "the scenario (run.yaml) goes with a scenario run",
        ),
    ] {
        let err = parse(args).expect_err(&format!("{args:?} parsed"));
        assert_eq!(
            err.kind(),
            clap::error::ErrorKind::ArgumentConflict,
            "{args:?}: {err}"
        );
        assert!(err.to_string().contains(named), "{args:?}: {err}");
    }
    // Through the binary: the validation runs, and a run's option is refused (exit 2).
    let scenario = repo_file("scenarios/alice-pays-bob.yaml");
    for global in ["-v", "--no-color"] {
        lnbench()
            .arg(global)
            .arg("validate")
            .arg(&scenario)
            .assert()
            .success();
    }
    lnbench()
        .args(["validate", "-v"])
        .arg(&scenario)
        .assert()
        .success()
        .stdout(predicate::str::contains("alice-pays-bob.yaml: ok"));
    // A run without a subcommand still takes its scenario and options, a global one
    // before it: the scenario is read and refused at its line (no node starts).
    let broken = repo_file("tests/fixtures/scenarios/invalid/unknown-channel-node.yaml");
    lnbench()
        .args(["-v", "--no-color"])
        .arg(&broken)
        .args(["--report", "unused"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "{}:10:9: ",
            broken.display()
        )));
    lnbench()
        .args(["--report", "out", "validate"])
        .arg(&scenario)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--report goes with a scenario run",
        ));
}

/// `-v` is counted (`-vv`, `-v -v`, `--verbose`), taken by a run and by every
/// command, and named in the help.
#[test]
fn verbose_is_counted_and_taken_everywhere() {
    use lnbench_tui::cli::Cli;
    for (args, level) in [
        (&["x.yaml"][..], 0),
        (&["-v", "x.yaml"], 1),
        (&["-vv", "x.yaml"], 2),
        (&["x.yaml", "-v", "--verbose"], 2),
        (&["validate", "x.yaml", "-vv"], 2),
    ] {
        let cli =
            Cli::try_parse_checked(std::iter::once("lnbench-tui").chain(args.iter().copied()))
                .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        assert_eq!(cli.verbose, level, "{args:?}");
    }
    lnbench()
        .args(["-vv", "no-such-scenario.yaml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read the scenario file"));
    lnbench()
        .arg("validate")
        .arg(repo_file("scenarios/alice-pays-bob.yaml"))
        .arg("-v")
        .assert()
        .success();
    lnbench()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("-v, --verbose"));
}

/// Bash loads the completion script and registers it for the program.
#[test]
fn the_bash_completion_loads() {
    let stdout = with_bash_completion("complete -p lnbench-tui");
    assert!(stdout.contains("-F _lnbench__tui lnbench-tui"), "{stdout}");
}

/// The standard output of `then` in a bash that loaded the completion; fails on a
/// failing script.
fn with_bash_completion(then: &str) -> String {
    let script = format!(
        "source <('{}' completions bash) && {then}",
        common::lnbench().display()
    );
    let out = std::process::Command::new("bash")
        .args(["--norc", "-c", &script])
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// What bash offers for the words typed so far (the last one being completed), asked of
/// the loaded completion as bash's `complete -F` asks it.
fn bash_completes(words: &[&str]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let current = words.len() - 1;
    with_bash_completion(&format!(
        "COMP_WORDS=({}) && COMP_CWORD={current} && \
         _lnbench__tui lnbench-tui '{}' '{}' && echo \"${{COMPREPLY[*]}}\"",
        quoted.join(" "),
        words[current],
        words[current - 1],
    ))
}

/// Completion goes on past the first word: a subcommand's flags, a nested command's
/// subcommands, and the top level's flags as before (clap_complete's bash script alone
/// completed nothing after the first word for a hyphenated program name).
#[test]
fn bash_completes_after_the_first_word() {
    let compare = bash_completes(&["lnbench-tui", "compare", "--"]);
    assert!(compare.contains("--out"), "compare --<TAB>: {compare:?}");
    let history = bash_completes(&["lnbench-tui", "history", ""]);
    assert!(
        history.contains("check") && history.contains("import"),
        "history <TAB>: {history:?}"
    );
    let top = bash_completes(&["lnbench-tui", "--"]);
    assert!(top.contains("--report"), "--<TAB>: {top:?}");
}

/// `shell` where it is installed; else the test is recorded as not run (CI's
/// `scripts/setup.sh --dev` installs zsh and fish).
fn shell_or_not_run(test: &str, shell: &str) -> bool {
    let found = std::process::Command::new(shell)
        .args(["-c", "exit 0"])
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        common::record_not_run(
            test,
            &format!("{shell} is not installed (scripts/setup.sh --dev installs it)"),
        );
    }
    found
}

/// An interactive zsh, in a pseudo-terminal of its own, that loaded the completion
/// script: each of `lines` is typed and TAB pressed, and the command line it then
/// holds is read back (one match completes in place; several are listed and leave it).
/// zsh reads its input in order, so the line is printed once the completion is done;
/// the markers are spelled so that the echo of what is typed never matches them.
fn zsh_completes(lines: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let driver = dir.path().join("drive.zsh");
    std::fs::write(
        &driver,
        r#"zmodload zsh/zpty
zpty z 'zsh -f -i'
zpty -w z 'PS1="> "; autoload -U compinit; compinit -u -d "$ZDOTDIR/.zcompdump"; source <("$LNBENCH" completions zsh); print ${:-REA}DY'
zpty -r z out '*READY*'
for line in "$@"; do
  zpty -w -n z "$line"$'\t'
  zpty -w -n z $'\C-aprint -r -- ${:-COMP}LETED:\n'
  zpty -r z out '*COMPLETED:*'$'\n'
  print -r -- "${${out##*COMPLETED:}%%$'\r'*}"
done
"#,
    )
    .unwrap();
    let out = std::process::Command::new("timeout")
        .arg("60")
        .arg("zsh")
        .arg("-f")
        .arg(&driver)
        .args(lines)
        .env("LNBENCH", common::lnbench())
        .env("ZDOTDIR", dir.path())
        .current_dir(dir.path())
        .output()
        .expect("zsh runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout.lines().map(|l| l.trim().to_string()).collect()
}

/// zsh completes past the first word too: clap_complete's script took the first word
/// for the scenario, so a subcommand's subcommands, options and arguments never
/// completed; global flags before a subcommand are skipped over.
#[test]
fn zsh_completes_after_the_first_word() {
    if !shell_or_not_run("zsh_completes_after_the_first_word", "zsh") {
        return;
    }
    let typed = [
        "lnbench-tui history li",
        "lnbench-tui snapshot sa",
        "lnbench-tui compare --ou",
        "lnbench-tui -v valid",
        "lnbench-tui some.yaml --rep",
    ];
    let got = zsh_completes(&typed);
    assert_eq!(
        got,
        [
            "lnbench-tui history list",
            "lnbench-tui snapshot save",
            "lnbench-tui compare --out",
            "lnbench-tui -v validate",
            // --repeat and --report: listed, the line as typed.
            "lnbench-tui some.yaml --rep",
        ],
        "as typed: {typed:?}"
    );
}

/// fish completes past the first word (its own `complete -C`).
#[test]
fn fish_completes_after_the_first_word() {
    if !shell_or_not_run("fish_completes_after_the_first_word", "fish") {
        return;
    }
    let script = format!(
        "'{}' completions fish | source; complete -C 'lnbench-tui history '; \
         complete -C 'lnbench-tui compare --'",
        common::lnbench().display()
    );
    let out = std::process::Command::new("fish")
        .args(["--no-config", "-c", &script])
        .output()
        .expect("fish runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let first: Vec<&str> = stdout
        .lines()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    for want in ["check", "import", "list", "--out", "--noise-pct"] {
        assert!(first.contains(&want), "{want} not offered: {first:?}");
    }
}

/// The man page renders with `man -l` where man is installed; elsewhere its roff is
/// checked for the title and the flags.
#[test]
fn the_man_page_renders() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("lnbench-tui.1");
    let out = lnbench().arg("man").assert().success();
    std::fs::write(&page, &out.get_output().stdout).unwrap();
    let roff = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(roff.contains(".TH lnbench-tui 1"), "{roff}");
    let Ok(rendered) = std::process::Command::new("man")
        .arg("-l")
        .arg(&page)
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .output()
    else {
        assert!(roff.contains("\\-\\-no\\-color"), "{roff}");
        return;
    };
    let text = String::from_utf8_lossy(&rendered.stdout);
    assert!(
        rendered.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&rendered.stderr)
    );
    for wanted in ["SYNOPSIS", "--no-color", "--report", "EXIT STATUS", "143"] {
        assert!(text.contains(wanted), "{wanted} missing:\n{text}");
    }
    // The commands are in this page: it points to no page of theirs, which none
    // writes (`man lnbench-tui-validate` found nothing).
    for sub in ["validate", "compare", "down", "history", "snapshot"] {
        assert!(
            !text.contains(&format!("lnbench-tui-{sub}(1)")),
            "points to lnbench-tui-{sub}(1):\n{text}"
        );
        assert!(
            text.contains(&format!("lnbench-tui {sub}\n")),
            "{sub} missing:\n{text}"
        );
    }
    let environment = (text.split("\nENVIRONMENT\n").nth(1))
        .and_then(|s| s.split("\nEXIT STATUS\n").next())
        .unwrap_or_else(|| panic!("no ENVIRONMENT section:\n{text}"));
    for var in [
        "RUST_LOG",
        "NO_COLOR",
        "LNBENCH_CACHE",
        "LNBENCH_HISTORY",
        "PGPASSWORD",
        "DOCKER_HOST",
        "KUBECONFIG",
    ] {
        assert!(environment.contains(var), "{var} missing:\n{environment}");
    }
}

/// A FIFO used to hang `validate` and /dev/zero to fill memory: both are refused,
/// unread, with exit 2 (the timeout only keeps a regression from hanging the suite).
#[test]
fn a_fifo_or_a_device_as_the_scenario_is_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("scenario.yaml");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    for path in [fifo.as_path(), std::path::Path::new("/dev/zero")] {
        lnbench()
            .arg("validate")
            .arg(path)
            .timeout(std::time::Duration::from_secs(60))
            .assert()
            .code(2)
            .stderr(predicate::str::contains("not a regular file"));
    }
}

/// The other files the tool reads that a user names or that sit in a shared place:
/// a FIFO as `compare`'s report or in `history import`'s directory is refused unread
/// (exit 2, with the reason), and one planted as a run directory's owner file in the temp dir
/// does not stall `down` (it used to block on it). The timeouts only keep a
/// regression from hanging the suite.
#[test]
fn a_fifo_where_compare_import_or_down_read_is_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report");
    std::fs::create_dir(&report).unwrap();
    let fifo = report.join("report.json");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let limit = std::time::Duration::from_secs(60);
    lnbench()
        .arg("compare")
        .arg(&fifo)
        .arg(&fifo)
        .arg("--out")
        .arg(dir.path().join("out"))
        .timeout(limit)
        .assert()
        .failure()
        .stderr(predicate::str::contains("not a regular file"));
    lnbench()
        .arg("history")
        .arg("--store")
        .arg(dir.path().join("history.sqlite"))
        .arg("import")
        .arg(&report)
        .timeout(limit)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "neither report.json nor sweep.json",
        ));

    let runs = dir.path().join("runs");
    let planted = runs.join("lnbench-planted");
    std::fs::create_dir_all(&planted).unwrap();
    let owner = planted.join(".lnbench-owner");
    nix::unistd::mkfifo(&owner, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let out = lnbench()
        .args(["down", "--run-dir"])
        .arg(&runs)
        .env(
            "DOCKER_HOST",
            format!("unix://{}", dir.path().join("dead.sock").display()),
        )
        .env("KUBECONFIG", dir.path().join("no-kubeconfig"))
        .env_remove("KUBERNETES_SERVICE_HOST")
        .timeout(limit)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        owner.exists(),
        "down removed a directory it could not read the owner of"
    );
}

/// Without a Docker engine (or a cluster), `down` still cleans and reports the run
/// directories and says what it could not look at; it never asks to edit a scenario.
#[test]
fn down_without_a_docker_engine_says_what_it_checked() {
    let dir = tempfile::tempdir().unwrap();
    let out = lnbench()
        .args(["down", "--run-dir"])
        .arg(dir.path())
        .env(
            "DOCKER_HOST",
            format!("unix://{}", dir.path().join("dead.sock").display()),
        )
        .env("KUBECONFIG", dir.path().join("no-kubeconfig"))
        .env_remove("KUBERNETES_SERVICE_HOST")
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stdout.contains("no Docker engine answers"), "{stdout}");
    assert!(
        stdout.contains("no container, network or volume was looked for"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&dir.path().display().to_string()),
        "{stdout}"
    );
    assert!(
        !format!("{stdout}{stderr}").contains("in the scenario"),
        "{stdout}{stderr}"
    );
}

/// `--duration` is read by the rules of `stop: duration:`: 0s is refused (exit 2).
#[test]
fn a_zero_duration_flag_is_refused_like_the_field() {
    lnbench()
        .arg(repo_file("scenarios/alice-pays-bob.yaml"))
        .args(["--duration", "0s", "--no-tui"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("above zero"));
}

/// The help says what `--report` does as the README does: it writes the report; the
/// terminal (or its absence, or --no-tui) decides between live view and progress lines.
#[test]
fn help_does_not_call_report_headless() {
    let out = lnbench().arg("--help").assert().success();
    let help = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(!help.contains("runs headless"), "{help}");
    assert!(
        help.contains("a terminal still shows the live view"),
        "{help}"
    );
}

/// The exit status of `cmd` with its standard output (and error) a pipe nobody reads:
/// the read end is closed before the command starts, so its first line meets EPIPE.
fn status_with_closed_output(mut cmd: std::process::Command) -> std::process::ExitStatus {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    cmd.stdout(writer.try_clone().unwrap())
        .stderr(writer)
        .status()
        .unwrap()
}

/// `down` writing to a reader that went away (`lnbench-tui down | head -0`) finishes
/// its work and exits 0; a print macro would panic there (exit 101).
#[test]
fn down_into_a_closed_pipe_does_not_panic() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_lnbench-tui"));
    cmd.args(["down", "--run-dir"])
        .arg(dir.path())
        .env(
            "DOCKER_HOST",
            format!("unix://{}", dir.path().join("dead.sock").display()),
        )
        .env("KUBECONFIG", dir.path().join("no-kubeconfig"))
        .env_remove("KUBERNETES_SERVICE_HOST");
    let status = status_with_closed_output(cmd);
    assert_eq!(status.code(), Some(0), "{status}");
}
