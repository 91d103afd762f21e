//! A run's id and its own directory: a fresh, private one under the run-dir parent, named by the
//! run's id, claimed for this process so `lnbench-tui down` leaves it while we live.

use super::RunOptions;
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::time::SystemTime;

/// Eight random hex digits: the part of a run id that tells runs apart.
pub(super) fn run_token() -> String {
    format!("{:08x}", rand::random::<u32>())
}

pub(super) fn make_run_dir(opts: &RunOptions, run_id: &str) -> Result<PathBuf> {
    let parent = opts
        .run_dir_parent
        .clone()
        .unwrap_or_else(std::env::temp_dir);
    // Absolute: the nodes run in directories of their own, and a relative path in their
    // configs (Core Lightning's bitcoin-cli datadir) would point elsewhere from there.
    let parent = std::path::absolute(&parent)
        .with_context(|| format!("cannot resolve {}", parent.display()))?;
    let run_dir = parent.join(format!("lnbench-{run_id}"));
    std::fs::create_dir_all(&parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    // Fresh and private: credentials and logs go in it. An existing path (a directory
    // of another run, or a symlink planted there) is refused, never reused.
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&run_dir)
            .with_context(|| {
                format!(
                    "cannot create run directory {} (it must not exist yet: remove it, or \
                     give --run-dir another parent)",
                    run_dir.display()
                )
            })?;
    }
    // Names this process, so `lnbench-tui down` removes the directory only once we are gone.
    crate::leftovers::claim(&run_dir)
        .with_context(|| format!("cannot write into run directory {}", run_dir.display()))?;
    Ok(run_dir)
}

/// `<scenario>-<unix seconds>-<token>`, and `-net<N>` for the N-th network of a
/// sweep. The token is random, not the pid: in a container the tool is pid 1, and
/// two runs started in one second would share an id, and so their containers,
/// network or namespace, which each one's teardown would remove.
pub(super) fn run_id(
    name: &str,
    started_at: SystemTime,
    token: &str,
    network: Option<usize>,
) -> String {
    let secs = started_at
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let id = format!("{name}-{secs}-{token}");
    match network {
        Some(n) => format!("{id}-net{n}"),
        None => id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn opts(parent: &std::path::Path) -> RunOptions {
        RunOptions {
            report_dir: None,
            keep: false,
            run_dir_parent: Some(parent.to_path_buf()),
            tui: false,
            metrics_listen: None,
            junit: None,
            snapshot: None,
            upgrade: false,
        }
    }

    #[test]
    fn two_runs_in_one_second_get_different_ids() {
        let now = SystemTime::now();
        let (a, b) = (run_token(), run_token());
        assert_ne!(run_id("s", now, &a, None), run_id("s", now, &b, None));
        let id = run_id("s", now, &a, Some(2));
        assert!(
            id.starts_with("s-") && id.ends_with(&format!("-{a}-net2")),
            "{id}"
        );
        assert!(
            a.len() == 8 && a.chars().all(|c| c.is_ascii_hexdigit()),
            "{a}"
        );
    }

    #[test]
    fn run_directories_are_fresh_and_private() {
        let parent = tempfile::tempdir().unwrap();
        let dir = make_run_dir(&opts(parent.path()), "t-1").unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{mode:o}");
        // The same name again (another run, or a leftover) is refused, not reused.
        let err = make_run_dir(&opts(parent.path()), "t-1").unwrap_err();
        assert!(format!("{err:#}").contains("must not exist yet"), "{err:#}");
        // A symlink planted at the name is refused too, and its target left alone.
        let target = parent.path().join("elsewhere");
        std::fs::create_dir(&target).unwrap();
        std::os::unix::fs::symlink(&target, parent.path().join("lnbench-t-2")).unwrap();
        assert!(make_run_dir(&opts(parent.path()), "t-2").is_err());
        assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
    }
}
