//! The README stays short and true: it fits a newcomer's first read, its links and
//! the pages they lead to resolve (files and headings), the quick start names files
//! that exist and flags the command line takes, and its test command is the one CI
//! runs (`.ci/run`).

mod common;

use clap::{CommandFactory, Parser};
use common::repo_file;
use lnbench_tui::cli::Cli;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 250;

fn readme() -> String {
    std::fs::read_to_string(repo_file("README.md")).unwrap()
}

#[test]
fn the_readme_fits_in_250_lines() {
    let lines = readme().lines().count();
    assert!(
        lines <= MAX_LINES,
        "README.md has {lines} lines, more than {MAX_LINES}: move the detail into a page under docs/ and link it"
    );
}

/// A heading's anchor as GitHub makes it: lower case, spaces to hyphens, other
/// punctuation dropped.
fn anchor_of(heading: &str) -> String {
    heading
        .trim()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c.to_lowercase().next().unwrap_or(c)),
            _ => None,
        })
        .collect()
}

/// The anchors of a markdown file's headings (not `#` lines inside fenced code).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let level = line.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&level) && line[level..].starts_with(' ') {
            out.insert(anchor_of(&line[level..]));
        }
    }
    out
}

/// The targets of the markdown links `[text](target)` and images in a text.
fn link_targets(text: &str) -> Vec<String> {
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split_once(')').map(|(target, _)| target.to_string()))
        .collect()
}

/// Checks every relative link of `file`; returns the markdown files it links to.
fn check_links(file: &Path, broken: &mut Vec<String>) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(file).unwrap();
    let dir = file.parent().unwrap();
    let mut pages = Vec::new();
    for target in link_targets(&text) {
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (path, anchor) = match target.split_once('#') {
            Some((path, anchor)) => (path, Some(anchor)),
            None => (target.as_str(), None),
        };
        let linked = if path.is_empty() {
            file.to_path_buf()
        } else {
            dir.join(path)
        };
        if !linked.exists() {
            broken.push(format!("{}: {target} (no such file)", file.display()));
            continue;
        }
        if let Some(anchor) = anchor {
            let linked_text = std::fs::read_to_string(&linked).unwrap_or_default();
            if !anchors(&linked_text).contains(anchor) {
                broken.push(format!("{}: {target} (no such heading)", file.display()));
            }
        }
        if linked.extension().is_some_and(|e| e == "md") {
            pages.push(linked);
        }
    }
    pages
}

#[test]
fn every_relative_link_of_the_readme_and_of_the_pages_it_links_resolves() {
    let mut broken = Vec::new();
    let pages = check_links(&repo_file("README.md"), &mut broken);
    assert!(
        pages.len() >= 10,
        "the README links only {} pages: did the docs map go?",
        pages.len()
    );
    for page in &pages {
        check_links(page, &mut broken);
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_are_made_as_github_makes_them() {
    assert_eq!(anchor_of(" Links and faults"), "links-and-faults");
    assert_eq!(anchor_of(" LDK (ldk-server)"), "ldk-ldk-server");
    assert_eq!(
        anchor_of(" What was verified, and how"),
        "what-was-verified-and-how"
    );
    let text = "# Title\n```yaml\n# not a heading\n```\n## Exit codes\n";
    assert_eq!(
        anchors(text).into_iter().collect::<Vec<_>>(),
        ["exit-codes", "title"]
    );
}

/// The quick start's two commands: the indented lines of its section that run setup.
fn quick_start_commands() -> Vec<String> {
    let text = readme();
    let section = text
        .split("\n## ")
        .find(|s| s.starts_with("Quick start"))
        .expect("the README has a `## Quick start` section");
    let commands: Vec<String> = section
        .lines()
        .filter(|l| l.starts_with("    ./scripts/setup.sh"))
        .map(|l| l.trim().to_string())
        .collect();
    assert_eq!(
        commands.len(),
        2,
        "the quick start should have two commands (a run, the tests): {commands:?}"
    );
    commands
}

#[test]
fn the_quick_start_run_names_a_shipped_scenario_and_flags_the_cli_takes() {
    let run = &quick_start_commands()[0];
    let (setup, build) = run.split_once(" && ").expect("setup && run");
    let script = repo_file(setup.trim_start_matches("./"));
    assert!(script.is_file(), "{} does not exist", script.display());
    let args = build
        .split_once(" -- ")
        .map(|(cargo, args)| {
            assert!(cargo.starts_with("cargo run"), "not a cargo run: {cargo}");
            args
        })
        .expect("cargo run ... -- ARGS");
    let cargo_toml = std::fs::read_to_string(repo_file("Cargo.toml")).unwrap();
    let words: Vec<&str> = build.split_whitespace().collect();
    for pair in words.windows(2).filter(|w| w[0] == "--profile") {
        assert!(
            cargo_toml.contains(&format!("[profile.{}]", pair[1])),
            "the quick start builds with `--profile {}`, which Cargo.toml does not define",
            pair[1]
        );
    }
    let cli = Cli::try_parse_from(std::iter::once("lnbench-tui").chain(args.split_whitespace()))
        .unwrap_or_else(|e| panic!("the quick start's arguments `{args}` do not parse: {e}"));
    let scenario = cli.run.scenario.expect("the quick start names a scenario");
    assert!(
        scenario.starts_with("scenarios"),
        "not a shipped scenario: {}",
        scenario.display()
    );
    let status = std::process::Command::new(common::lnbench())
        .arg("validate")
        .arg(repo_file(scenario.to_str().unwrap()))
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{} does not validate: {}",
        scenario.display(),
        String::from_utf8_lossy(&status.stderr)
    );
}

#[test]
fn the_readme_test_command_is_the_one_ci_runs() {
    let tests = &quick_start_commands()[1];
    let (setup, test) = tests.split_once(" && ").expect("setup && test command");
    assert!(
        test.starts_with("cargo nextest run"),
        "not the test command: {test}"
    );
    let ci = std::fs::read_to_string(repo_file(".ci/run")).unwrap();
    let runs: Vec<&str> = ci
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .collect();
    assert!(
        runs.contains(&setup),
        ".ci/run does not run the README's setup `{setup}`"
    );
    assert!(
        runs.iter()
            .any(|l| *l == test || l.starts_with(&format!("{test} "))),
        ".ci/run does not run the README's test command `{test}`"
    );
}

/// Cargo's own flags, which the README's cargo commands use.
const CARGO_FLAGS: [&str; 6] = [
    "--release",
    "--profile",
    "--no-default-features",
    "--locked",
    "--all-targets",
    "--test",
];

#[test]
fn every_flag_path_and_scenario_the_readme_names_exists() {
    let text = readme();
    let mut longs: BTreeSet<String> = ["--help", "--version"].map(String::from).into();
    let command = Cli::command();
    for cmd in std::iter::once(&command).chain(command.get_subcommands()) {
        longs.extend(
            cmd.get_arguments()
                .filter_map(|a| a.get_long())
                .map(|l| format!("--{l}")),
        );
    }
    let mut missing = Vec::new();
    let mut named = 0;
    for word in text.split(|c: char| c.is_whitespace() || "`()[],;:".contains(c)) {
        let word = word.trim_end_matches('.');
        if let Some(flag) = word.strip_prefix("--").filter(|f| !f.is_empty()) {
            named += 1;
            let flag = format!("--{}", flag.split('=').next().unwrap());
            // `--dev` is setup.sh's own flag.
            let setup_dev = flag == "--dev"
                && std::fs::read_to_string(repo_file("scripts/setup.sh"))
                    .unwrap()
                    .contains("\"--dev\"");
            let known = longs.contains(&flag) || CARGO_FLAGS.contains(&flag.as_str()) || setup_dev;
            if !known {
                missing.push(flag);
            }
        } else if ["scenarios/", "docs/", "scripts/", "tests/", ".ci/"]
            .iter()
            .any(|dir| word.trim_start_matches("./").starts_with(dir))
        {
            named += 1;
            let path = word.trim_start_matches("./").split('#').next().unwrap();
            if !repo_file(path).exists() {
                missing.push(word.to_string());
            }
        }
    }
    assert!(
        named >= 10,
        "only {named} flags and paths found: did the page change shape?"
    );
    assert!(
        missing.is_empty(),
        "the README names what does not exist: {missing:?}"
    );
}
