//! An implementation matrix on a real Docker engine, through the binary: a point whose
//! image the engine lacks (an LND release nobody built, `pull: never`) is skipped with
//! the reason and the command that builds it, as the local runtime skips a point whose
//! binary is not built; `validate` lists it; the other points run on the local images
//! scripts/build-images.sh builds, an older LND release (the one a shipped scenario
//! names) beside the pinned one. Not run (and said so) when no engine answers or an
//! image is missing.

use crate::common::docker::engine_ready;
use crate::common::lnbench_command;
use crate::common::scenario_run::{Finished, lnd_pair};

/// A release no one builds: its image `lnbench/lnd:v0.0.1-absent` is never there.
const ABSENT: &str = "lnd@v0.0.1-absent";

fn scenario_yaml() -> String {
    lnd_pair(
        "e2e-docker-matrix",
        "description: LND paying itself on docker; one release has no image and is skipped.\nruntime: docker\npull: never\n",
        2000000,
        1,
    ) + "  amount_msat: 1000
  concurrency: 2
  stop:
    payments: 20
    duration: 20s
  payment_timeout: 30s
sweep:
  implementation: [lnd@v0.0.1-absent, lnd@v0.20.1-beta, lnd]
"
}

/// The older LND release's image, beside the pinned LND and btcd images
/// [`engine_ready`] requires.
const OLDER_LND: &str = "lnbench/lnd:v0.20.1-beta";

#[test]
fn validate_lists_a_point_without_its_image_as_skipped() {
    if engine_ready(&[OLDER_LND]).is_none() {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("matrix.yaml");
    std::fs::write(&file, scenario_yaml()).unwrap();
    let out = lnbench_command()
        .arg("validate")
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let skipped = format!("implementation={ABSENT} (skipped: ");
    let at = stdout.find(&skipped).unwrap_or_else(|| panic!("{stdout}"));
    let why = &stdout[at..];
    assert!(why.contains("lnbench/lnd:v0.0.1-absent"), "{stdout}");
    assert!(
        why.contains("LND_VERSIONS=v0.0.1-absent scripts/build-images.sh"),
        "{stdout}"
    );
    // The releases with an image: listed, not skipped.
    assert!(
        stdout.contains("| implementation=lnd@v0.20.1-beta | implementation=lnd)"),
        "{stdout}"
    );
}

#[test]
fn a_point_without_its_image_is_skipped_and_the_others_run() {
    if engine_ready(&[OLDER_LND]).is_none() {
        return;
    }
    let run = Finished::run(&scenario_yaml());
    let log = &run.log;
    assert_eq!(run.status.code(), Some(0), "{log}");
    assert!(
        log.contains(&format!("skipped implementation={ABSENT}: ")),
        "{log}"
    );
    // A network for each release with an image; none for the point without one.
    assert_eq!(log.matches("==> network").count(), 2, "{log}");
    let sweep = run.sweep_json();
    let points = sweep["points"].as_array().unwrap();
    assert_eq!(points[0]["status"], "skipped", "{:#}", points[0]);
    let reason = points[0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("LND_VERSIONS=v0.0.1-absent scripts/build-images.sh"),
        "{reason}"
    );
    for point in &points[1..] {
        assert_eq!(point["status"], "done", "{point:#}");
        assert!(
            point["results"]["ok"].as_u64().unwrap_or(0) > 0,
            "{point:#}"
        );
    }
}
