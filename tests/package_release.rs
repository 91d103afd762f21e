//! scripts/package-release.sh against the binary cargo built for the tests
//! (LNBENCH_BIN): the tarball holds the binary, LICENSE, README, the man page and the
//! three completion scripts, and the man page renders.

mod common;

use std::path::Path;
use std::process::Command;

#[test]
fn the_release_tarball_holds_binary_docs_man_page_and_completions() {
    let out = tempfile::tempdir().unwrap();
    let run = Command::new("bash")
        .arg(common::repo_file("scripts/package-release.sh"))
        .arg(out.path())
        .env("LNBENCH_BIN", common::lnbench())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let tarball = String::from_utf8_lossy(&run.stdout).trim().to_string();
    let name = Path::new(&tarball)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .trim_end_matches(".tar.gz")
        .to_string();
    assert!(name.starts_with("lnbench-tui-0."), "{name}");

    let listed = Command::new("tar")
        .arg("-tzf")
        .arg(&tarball)
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    for file in [
        "lnbench-tui",
        "LICENSE",
        "README.md",
        "man/man1/lnbench-tui.1",
        "completions/lnbench-tui.bash",
        "completions/_lnbench-tui",
        "completions/lnbench-tui.fish",
    ] {
        assert!(
            listed.lines().any(|l| l == format!("{name}/{file}")),
            "{file} missing:\n{listed}"
        );
    }

    let unpacked = tempfile::tempdir().unwrap();
    let tar = Command::new("tar")
        .arg("-xzf")
        .arg(&tarball)
        .arg("-C")
        .arg(unpacked.path())
        .status()
        .unwrap();
    assert!(tar.success());
    let root = unpacked.path().join(&name);
    let version = Command::new(root.join("lnbench-tui"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("lnbench-tui "));
    let bash = Command::new("bash")
        .arg("-n")
        .arg(root.join("completions/lnbench-tui.bash"))
        .status()
        .unwrap();
    assert!(bash.success(), "the bash completion does not parse");
    let text = render_man(&root.join("man/man1/lnbench-tui.1"));
    for wanted in ["SYNOPSIS", "--report", "--no-color"] {
        assert!(text.contains(wanted), "{wanted} missing:\n{text}");
    }
}

/// The man page as text, by `man -l`, else groff, else mandoc; the roff itself (with a
/// note) where none of them is installed.
fn render_man(page: &Path) -> String {
    let tries: [(&str, &[&str]); 3] = [
        ("man", &["-l"]),
        ("groff", &["-man", "-Tutf8"]),
        ("mandoc", &["-Tutf8"]),
    ];
    for (tool, args) in tries {
        let Ok(out) = Command::new(tool)
            .args(args)
            .arg(page)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100")
            .output()
        else {
            continue;
        };
        assert!(
            out.status.success(),
            "{tool} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Renderers may overstrike for bold (`S\x08S`): keep the visible characters.
        let text = String::from_utf8_lossy(&out.stdout);
        return strip_overstrike(&text);
    }
    eprintln!("no man, groff or mandoc installed: the man page was not rendered");
    std::fs::read_to_string(page).unwrap().replace("\\-", "-")
}

fn strip_overstrike(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c == '\u{8}' {
            out.pop();
        } else {
            out.push(c);
        }
    }
    out
}
