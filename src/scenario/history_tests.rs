//! `history:` and the history ladder (`sweep: { history: [...] }`), on inline scenarios.

use super::tests::{BASE, parse};
use crate::scenario::parse_error as error_of;
use crate::scenario::{History, SweepParam};
use std::path::Path;
use std::time::Duration;

fn with(extra: &str) -> String {
    format!("{BASE}{extra}")
}

#[test]
fn history_is_read_with_its_defaults() {
    let s = parse(Path::new("t.yaml"), &with("history:\n  payments: 5000\n")).unwrap();
    assert_eq!(
        s.history,
        Some(History {
            payments: 5000,
            concurrency: 10,
            within: Duration::from_secs(7200),
        })
    );
    let text = with("history: { payments: 0, concurrency: 4, within: 10m }\n");
    let s = parse(Path::new("t.yaml"), &text).unwrap();
    let h = s.history.unwrap();
    assert_eq!((h.payments, h.concurrency, h.within.as_secs()), (0, 4, 600));
    assert_eq!(parse(Path::new("t.yaml"), BASE).unwrap().history, None);
}

#[test]
fn bad_history_is_an_error_at_its_place() {
    let e = error_of(&with("history: { payments: 20000000 }\n"));
    assert!(e.contains("t.yaml:18:22"), "{e}");
    assert!(e.contains("more than 10000000"), "{e}");
    let e = error_of(&with("history: { concurrency: 4 }\n"));
    assert!(e.contains("history: says no payments:"), "{e}");
    let e = error_of(&with("history: { payments: 10, concurrency: 0 }\n"));
    assert!(e.contains("history concurrency is 0"), "{e}");
    let e = error_of(&with("history: { payments: 10, within: 0s }\n"));
    assert!(e.contains("history within is 0"), "{e}");
    let e = error_of(&with("history: { payments: 10, within: soon }\n"));
    assert!(e.contains("is not a duration"), "{e}");
    let e = error_of(&with("history: { payments: 10, snapshot: x }\n"));
    assert!(e.contains("snapshot"), "{e}");
    // With a snapshot, the phase tops up from what the snapshot's network had made.
    let s = parse(
        Path::new("t.yaml"),
        &with("history: { payments: 10 }\nsnapshot: saved\n"),
    );
    assert_eq!(s.unwrap().history.map(|h| h.payments), Some(10));
}

#[test]
fn history_with_a_workload_it_cannot_repeat_is_refused() {
    let jam = format!(
        "{}history: {{ payments: 10 }}\n",
        crate::scenario::attack_tests::JAM
    );
    let e = error_of(&jam);
    assert!(e.contains("history: cannot run beside an attack"), "{e}");
    assert!(e.contains("t.yaml:27:10"), "{e}");
}

#[test]
fn a_history_ladder_climbs_on_one_network_with_each_steps_loads_inside_it() {
    let text = with("sweep:\n  concurrency: [1, 4]\n  history: [0, 1000, 5000]\n");
    let s = parse(Path::new("t.yaml"), &text).unwrap();
    let sweep = s.sweep.unwrap();
    assert_eq!(sweep.params, [SweepParam::History, SweepParam::Concurrency]);
    let labels: Vec<&str> = sweep.points.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "history=0,concurrency=1",
            "history=0,concurrency=4",
            "history=1000,concurrency=1",
            "history=1000,concurrency=4",
            "history=5000,concurrency=1",
            "history=5000,concurrency=4",
        ]
    );
    assert!(sweep.points.iter().all(|p| p.network == 0));
    let targets: Vec<u64> = (sweep.points.iter())
        .map(|p| p.scenario.history.as_ref().unwrap().payments)
        .collect();
    assert_eq!(targets, [0, 0, 1000, 1000, 5000, 5000]);
}

#[test]
fn a_ladder_keeps_the_files_history_settings_and_must_rise() {
    let text = with("history: { concurrency: 3 }\nsweep:\n  history: [10, 20]\n");
    let sweep = parse(Path::new("t.yaml"), &text).unwrap().sweep.unwrap();
    let h = sweep.points[1].scenario.history.clone().unwrap();
    assert_eq!((h.payments, h.concurrency), (20, 3));
    let e = error_of(&with("sweep:\n  history: [0, 5000, 5000]\n"));
    assert!(
        e.contains("sweep history is not rising: 5000 follows 5000"),
        "{e}"
    );
    assert!(e.contains("t.yaml:19:22"), "{e}");
    let e = error_of(&with("sweep:\n  history: []\n"));
    assert!(e.contains("sweep history: is an empty list"), "{e}");
}
