//! `snapshot save` of a history ladder (`sweep: { history: [...] }` and no other
//! dimension): each step becomes a snapshot of its own, `<to>/payments-<N>`. The first
//! step sets the network up (or restores `--from`), each next one restores the step
//! before it and pays only the difference, so the ladder is paid for once and any
//! step can start later runs (`--snapshot <to>/payments-<N>`).

use super::super::RunOptions;
use crate::exit::Exit;
use crate::scenario::{Sweep, SweepParam};
use crate::snapshot;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// True when the sweep varies the history alone (one network climbing its steps).
pub(super) fn is_ladder(sweep: &Sweep) -> bool {
    sweep.params == [SweepParam::History]
}

/// The directory of the step that has made `payments` payments, under `to`.
pub(super) fn step_dir(to: &Path, payments: u64) -> PathBuf {
    to.join(format!("payments-{payments}"))
}

/// Saves every step in turn; stops at the first that does not save (an error, or a
/// signal's exit code), keeping the steps saved before it.
pub(super) async fn save(sweep: &Sweep, opts: RunOptions, to: &Path) -> Result<Exit> {
    snapshot::check_target(to)?;
    let steps: Vec<u64> = (sweep.points.iter())
        .map(|p| p.scenario.history.as_ref().map_or(0, |h| h.payments))
        .collect();
    if let (Some(from), Some(&first)) = (&opts.snapshot, steps.first()) {
        check_from(from, first)?;
    }
    let mut from = opts.snapshot.clone();
    for (i, (point, &payments)) in sweep.points.iter().zip(&steps).enumerate() {
        let dir = step_dir(to, payments);
        let start = match &from {
            Some(prev) => format!("restored from {}", prev.display()),
            None => "from a fresh network".to_string(),
        };
        crate::lines::errln!(
            "ladder step {} of {}: {payments} payments, {start}",
            i + 1,
            steps.len()
        );
        let step = RunOptions {
            snapshot: from.clone(),
            ..opts.clone()
        };
        let exit = super::save_one(point.scenario.clone(), step, &dir).await?;
        if exit != Exit::Ok {
            return Ok(exit);
        }
        from = Some(dir);
    }
    let names: Vec<String> = steps.iter().map(|n| format!("payments-{n}")).collect();
    crate::lines::errln!("ladder saved in {}: {}", to.display(), names.join(", "));
    Ok(Exit::Ok)
}

/// Refuses a `--from` snapshot that has made more payments than the first step: that
/// step would be saved under a count it is past. A manifest that cannot be read is
/// left to the restore, which says why.
fn check_from(from: &Path, first: u64) -> Result<(), snapshot::SnapshotError> {
    let path = from.join(snapshot::MANIFEST);
    let Ok(text) = crate::files::read_text(&path, crate::files::REPORT_MAX_BYTES) else {
        return Ok(());
    };
    match snapshot::Manifest::parse(&text, &path) {
        Ok(m) if m.payments > first => Err(snapshot::SnapshotError::Refused {
            at: path.display().to_string(),
            detail: format!(
                "this snapshot has made {} payments, more than the ladder's first step \
                 ({first}): start the ladder at {} or above",
                m.payments, m.payments
            ),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep_of(text: &str) -> Sweep {
        let path = Path::new("ladder.yaml");
        let scenario = crate::scenario::parse(path, text, crate::runtime::capabilities)
            .unwrap_or_else(|e| panic!("{e:#}"));
        scenario.sweep.expect("a sweep")
    }

    const PAIR: &str = "name: ladder
runtime: local
nodes:
  alice: { implementation: lnd }
  bob: { implementation: lnd }
channels:
  - { from: alice, to: bob, capacity_sat: 1000000 }
workload:
  kind: keysend
  senders: [alice]
  receiver: bob
  amount_msat: 1000
  concurrency: 2
  stop: { payments: 10 }
history: { concurrency: 4 }
";

    #[test]
    fn a_sweep_of_the_history_alone_is_a_ladder_and_another_is_not() {
        let ladder = sweep_of(&format!("{PAIR}sweep: {{ history: [0, 100, 500] }}\n"));
        assert!(is_ladder(&ladder));
        let steps: Vec<u64> = (ladder.points.iter())
            .map(|p| p.scenario.history.as_ref().unwrap().payments)
            .collect();
        assert_eq!(steps, [0, 100, 500]);
        let both = sweep_of(&format!(
            "{PAIR}sweep: {{ history: [0, 100], concurrency: [1, 2] }}\n"
        ));
        assert!(!is_ladder(&both));
        let no_history = PAIR.replace("history: { concurrency: 4 }\n", "");
        let load = sweep_of(&format!("{no_history}sweep: {{ concurrency: [1, 2] }}\n"));
        assert!(!is_ladder(&load));
    }

    #[test]
    fn each_step_has_its_own_directory_named_by_its_payments() {
        let to = Path::new("snaps/ladder");
        assert_eq!(step_dir(to, 0), Path::new("snaps/ladder/payments-0"));
        assert_eq!(
            step_dir(to, 50_000),
            Path::new("snaps/ladder/payments-50000")
        );
    }

    #[test]
    fn a_from_snapshot_past_the_first_step_is_refused_and_one_below_it_is_not() {
        let scenario = crate::scenario::parse(
            Path::new("ladder.yaml"),
            &format!("{PAIR}sweep: {{ history: [100, 500] }}\n"),
            crate::runtime::capabilities,
        )
        .unwrap();
        let from = tempfile::tempdir().unwrap();
        let mut m = snapshot::Manifest::new(&scenario, Default::default(), String::new(), 1.0);
        m.payments = 300;
        std::fs::write(from.path().join(snapshot::MANIFEST), m.to_text()).unwrap();
        let text = check_from(from.path(), 100).unwrap_err().to_string();
        assert!(
            text.contains("manifest.json: this snapshot has made 300 payments"),
            "{text}"
        );
        assert!(text.contains("start the ladder at 300 or above"), "{text}");
        assert!(check_from(from.path(), 300).is_ok());
        // No manifest: the restore says so, with its own location.
        assert!(check_from(&from.path().join("none"), 100).is_ok());
    }

    #[tokio::test]
    async fn a_ladder_into_a_directory_that_is_not_empty_is_refused_before_anything_starts() {
        let ladder = sweep_of(&format!("{PAIR}sweep: {{ history: [0, 100] }}\n"));
        let to = tempfile::tempdir().unwrap();
        std::fs::write(to.path().join("other"), "").unwrap();
        let err = save(&ladder, RunOptions::default(), to.path())
            .await
            .expect_err("refused");
        assert!(format!("{err:#}").contains("is not empty"), "{err:#}");
        assert!(!step_dir(to.path(), 0).exists());
    }
}
