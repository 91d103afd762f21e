//! scripts/remeasure.sh, the command that re-measures the docs/scenarios pages, on a
//! stand-in for the tool: a shell script that writes a sweep.md the way the real
//! report does (its spread section), so the page rewriting is tested without nodes.
//! The real tool's spread section is checked in `report::spread::tests`.

mod common;

use common::repo_file;
use std::path::Path;
use std::process::Command;

/// A stand-in for lnbench-tui: `--version`, and a run that writes `<report>/sweep.md`
/// with a spread table whose TPS is the scenario's name length (so two blocks differ)
/// and, for a scenario named `noisy.yaml`, a disturbed repeat; `broken.yaml` writes no
/// report and fails.
const FAKE_TOOL: &str = r#"#!/usr/bin/env bash
[ "$1" = "--version" ] && { echo "lnbench-tui 0.0.0-test"; exit 0; }
scenario=$1; report=""
while [ $# -gt 0 ]; do [ "$1" = "--report" ] && report=$2; shift; done
case "$scenario" in *broken.yaml) echo "error: broken" >&2; exit 3;; esac
mkdir -p "$report"
outside="2 % (3 %) of a core"
case "$scenario" in *noisy.yaml) outside="9 % (80 %) of a core; 1 of 3 disturbed";; esac
cat > "$report/sweep.md" <<EOF
# sweep

| point | ok |
|---|---|
| all | 3 |

### Spread across repeats

| point | repeats | TPS median (min – max, sd) | TPS CV | outside load median (max) |
|---|---|---|---|---|
| all | 3 | ${#scenario}.0 (9.0 – 11.0, sd 1.0) | 10.0 % | $outside |

sd: sample standard deviation.

### Something after
EOF
"#;

fn setup(dir: &Path, page_text: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let tool = dir.join("fake-lnbench");
    std::fs::write(&tool, FAKE_TOOL).unwrap();
    let mut perms = std::fs::metadata(&tool).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&tool, perms).unwrap();
    let page = dir.join("page.md");
    std::fs::write(&page, page_text).unwrap();
    (tool, page)
}

fn remeasure(tool: &Path, dir: &Path, page: &Path) -> std::process::Output {
    Command::new("bash")
        .arg(repo_file("scripts/remeasure.sh"))
        .arg(page)
        .env("LNBENCH_BIN", tool)
        .env("REMEASURE_OUT", dir.join("out"))
        .output()
        .unwrap()
}

const PAGE: &str = "# a page\n\nkept before\n\
<!-- remeasure: quiet.yaml --repeat 3 -->\nold figures\n<!-- /remeasure -->\n\
kept between\n\
<!-- remeasure: noisy.yaml --repeat 3 -->\n<!-- /remeasure -->\nkept after\n";

#[test]
fn each_block_is_rewritten_with_its_own_run_and_the_rest_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (tool, page) = setup(dir.path(), PAGE);
    let out = remeasure(&tool, dir.path(), &page);
    assert!(out.status.success(), "{out:?}");
    let text = std::fs::read_to_string(&page).unwrap();
    for kept in ["# a page", "kept before", "kept between", "kept after"] {
        assert!(text.contains(kept), "{kept} lost:\n{text}");
    }
    assert!(!text.contains("old figures"), "{text}");
    // Both blocks: the markers stay, the run's table and its provenance are inside.
    assert_eq!(text.matches("<!-- /remeasure -->").count(), 2, "{text}");
    assert!(
        text.contains("`lnbench-tui quiet.yaml --repeat 3`"),
        "{text}"
    );
    assert!(text.contains("lnbench-tui 0.0.0-test"), "{text}");
    assert!(text.contains("| all | 3 | 10.0 (9.0 – 11.0, sd 1.0) | 10.0 % |"));
    assert!(text.contains("| all | 3 | 10.0 (9.0 – 11.0, sd 1.0) | 10.0 % | 9 %"));
    assert!(text.contains("load average\nbefore "), "{text}");
    // Only the spread section of sweep.md, not what comes before or after it.
    assert!(!text.contains("Something after") && !text.contains("| point | ok |"));
    // The disturbed block says so; the quiet one does not.
    let (first, second) = text.split_once("kept between").unwrap();
    assert!(!first.contains("**Disturbed**"), "{first}");
    assert!(second.contains("**Disturbed**"), "{second}");
    // A second pass rewrites the same blocks in place: nothing grows.
    assert!(remeasure(&tool, dir.path(), &page).status.success());
    let again = std::fs::read_to_string(&page).unwrap();
    assert_eq!(again.lines().count(), text.lines().count(), "{again}");
}

#[test]
fn a_run_without_a_spread_leaves_the_page_untouched_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let text = "x\n<!-- remeasure: broken.yaml --repeat 3 -->\nold\n<!-- /remeasure -->\n";
    let (tool, page) = setup(dir.path(), text);
    let out = remeasure(&tool, dir.path(), &page);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--repeat"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&page).unwrap(), text);
}

/// A block whose scenario runs on Kubernetes is kept as it is when no cluster is
/// named (KUBECONFIG unset), so re-measuring every page on a machine without one
/// neither fails nor writes a failed run; with KUBECONFIG set it is measured.
#[test]
fn a_kubernetes_block_waits_for_a_kubeconfig() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("kube.yaml");
    std::fs::write(&scenario, "name: k\nruntime: kubernetes\n").unwrap();
    let text = format!(
        "x\n<!-- remeasure: {} --repeat 3 -->\nold\n<!-- /remeasure -->\ny\n",
        scenario.display()
    );
    let (tool, page) = setup(dir.path(), &text);
    let out = Command::new("bash")
        .arg(repo_file("scripts/remeasure.sh"))
        .arg(&page)
        .env("LNBENCH_BIN", &tool)
        .env("REMEASURE_OUT", dir.path().join("out"))
        .env_remove("KUBECONFIG")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("KUBECONFIG is not set"));
    assert_eq!(std::fs::read_to_string(&page).unwrap(), text);

    let out = Command::new("bash")
        .arg(repo_file("scripts/remeasure.sh"))
        .arg(&page)
        .env("LNBENCH_BIN", &tool)
        .env("REMEASURE_OUT", dir.path().join("out"))
        .env("KUBECONFIG", dir.path().join("kubeconfig"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let measured = std::fs::read_to_string(&page).unwrap();
    assert!(
        !measured.contains("old") && measured.contains("| all | 3 |"),
        "{measured}"
    );
}
