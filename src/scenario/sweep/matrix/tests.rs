//! The implementation matrix on small inline scenarios.

use crate::node::Implementation;
use crate::scenario::parse_error as error_of;
use crate::scenario::sweep::{Sweep, SweepParam, SweepValue};
use crate::scenario::tests::parse;
use crate::scenario::{Database, Load};
use std::path::Path;

const PAIR: &str = "\
name: t
chain:
  implementation: bitcoind
nodes:
  alice:
    implementation: lnd
  bob:
    implementation: lnd
channels:
  - from: alice
    to: bob
    capacity_sat: 1000000
workload:
  kind: keysend
  senders: [alice]
  receiver: bob
  concurrency: 2
  stop:
    payments: 10
";

fn sweep_of(text: &str) -> Sweep {
    parse(Path::new("t.yaml"), text)
        .unwrap_or_else(|e| panic!("{e}"))
        .sweep
        .expect("a sweep")
}

fn labels(sweep: &Sweep) -> Vec<&str> {
    sweep.points.iter().map(|p| p.label.as_str()).collect()
}

#[test]
fn every_node_runs_each_implementation_on_a_network_of_its_own() {
    let sweep = sweep_of(&format!(
        "{PAIR}sweep:\n  implementation: [lnd, cln, eclair, ldk]\n  concurrency: [1, 10]\n"
    ));
    assert_eq!(
        labels(&sweep),
        [
            "implementation=lnd,concurrency=1",
            "implementation=lnd,concurrency=10",
            "implementation=cln,concurrency=1",
            "implementation=cln,concurrency=10",
            "implementation=eclair,concurrency=1",
            "implementation=eclair,concurrency=10",
            "implementation=ldk,concurrency=1",
            "implementation=ldk,concurrency=10",
        ]
    );
    let networks: Vec<usize> = sweep.points.iter().map(|p| p.network).collect();
    assert_eq!(networks, [0, 0, 1, 1, 2, 2, 3, 3]);
    for (point, want) in sweep.points.iter().step_by(2).zip(Implementation::ALL) {
        assert!(
            point
                .scenario
                .nodes
                .iter()
                .all(|n| n.implementation == want)
        );
    }
    // ldk-server (at the pinned commit) has no keysend: its points are skipped, with why.
    let skips: Vec<Option<&str>> = sweep.points.iter().map(|p| p.skip.as_deref()).collect();
    assert_eq!(skips[..6], [None; 6]);
    let why = skips[6].expect("ldk skipped");
    assert!(
        why.contains("kind: keysend, and node alice is ldk"),
        "{why}"
    );
}

#[test]
fn a_release_after_the_at_sign_is_the_nodes_version() {
    let sweep = sweep_of(&format!(
        "{PAIR}sweep:\n  implementation: [lnd@v0.20.1-beta, lnd]\n"
    ));
    assert_eq!(
        labels(&sweep),
        ["implementation=lnd@v0.20.1-beta", "implementation=lnd"]
    );
    let versions: Vec<Option<&str>> = (sweep.points.iter())
        .map(|p| p.scenario.nodes[0].version.as_deref())
        .collect();
    assert_eq!(versions, [Some("v0.20.1-beta"), None]);
    assert_ne!(sweep.points[0].network, sweep.points[1].network);
    match &sweep.points[0].values[0] {
        (SweepParam::Implementation(None), SweepValue::Implementation(c)) => {
            assert_eq!(c.to_string(), "lnd@v0.20.1-beta");
        }
        other => panic!("unexpected value {other:?}"),
    }
}

#[test]
fn groups_can_have_axes_of_their_own() {
    let sweep = sweep_of(&format!(
        "{PAIR}sweep:\n  implementation:\n    alice: [lnd, cln]\n    bob: [lnd, eclair]\n"
    ));
    assert_eq!(
        labels(&sweep),
        [
            "alice.implementation=lnd,bob.implementation=lnd",
            "alice.implementation=lnd,bob.implementation=eclair",
            "alice.implementation=cln,bob.implementation=lnd",
            "alice.implementation=cln,bob.implementation=eclair",
        ]
    );
    let last = &sweep.points[3].scenario;
    assert_eq!(last.nodes[0].implementation, Implementation::Cln);
    assert_eq!(last.nodes[1].implementation, Implementation::Eclair);
}

#[test]
fn a_database_an_implementation_lacks_skips_the_point_with_the_reason() {
    let sweep = sweep_of(&format!(
        "{}sweep:\n  implementation: [cln, ldk]\n  database: [default, postgres]\n",
        PAIR.replace("kind: keysend", "kind: invoice")
    ));
    let skips: Vec<Option<&str>> = sweep.points.iter().map(|p| p.skip.as_deref()).collect();
    assert_eq!(skips[..3], [None, None, None]);
    let why = skips[3].expect("ldk on postgres is skipped");
    assert!(why.contains("ldk has no PostgreSQL backend"), "{why}");
    // CLN on PostgreSQL runs on PostgreSQL; the skipped point is left on its default.
    assert!((sweep.points[1].scenario.nodes.iter()).all(|n| n.database == Database::Postgres));
    assert!((sweep.points[3].scenario.nodes.iter()).all(|n| n.database == Database::Default));
    assert_eq!(
        sweep.points.iter().map(|p| p.network).collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
}

#[test]
fn concurrency_and_rate_together_make_one_load_axis() {
    let open = PAIR.replace(
        "  concurrency: 2\n",
        "  rate:\n    hold: { rate: 5, duration: 10s }\n",
    );
    let sweep = sweep_of(&format!(
        "{open}sweep:\n  implementation: [lnd, cln]\n  concurrency: [1, 4]\n  rate: [10, 20]\n  p99_bound: 1s\n"
    ));
    assert_eq!(
        labels(&sweep)[..4],
        [
            "implementation=lnd,concurrency=1",
            "implementation=lnd,concurrency=4",
            "implementation=lnd,rate=10",
            "implementation=lnd,rate=20",
        ]
    );
    let loads: Vec<&Load> = (sweep.points.iter())
        .map(|p| &p.scenario.workload.load)
        .collect();
    assert_eq!(*loads[1], Load::Closed { concurrency: 4 });
    assert!(matches!(loads[3], Load::Open { .. }), "{:?}", loads[3]);
    assert!(sweep.params.contains(&SweepParam::Load));
}

#[test]
fn mistakes_are_named_at_their_place() {
    let unknown = error_of(&format!(
        "{PAIR}sweep:\n  implementation: [lnd, clightning]\n"
    ));
    assert!(unknown.contains("t.yaml:21:25"), "{unknown}");
    assert!(unknown.contains("\"clightning\" is not one of lnd, cln, eclair, ldk"));

    let bad_release = error_of(&format!("{PAIR}sweep:\n  implementation: [\"lnd@v 1\"]\n"));
    assert!(
        bad_release.contains("is not a release name"),
        "{bad_release}"
    );

    let pinned = PAIR.replace(
        "  alice:\n    implementation: lnd\n",
        "  alice:\n    implementation: lnd\n    args: [--noseedbackup]\n",
    );
    let err = error_of(&format!("{pinned}sweep:\n  implementation: [lnd, cln]\n"));
    assert!(err.contains("node alice sets args:"), "{err}");

    let err = error_of(&format!(
        "{PAIR}sweep:\n  implementation: [lnd]\n  db_backend: [bbolt, sqlite]\n"
    ));
    assert!(
        err.contains("db_backend:") && err.contains("database: [default, postgres]"),
        "{err}"
    );

    let err = error_of(&format!(
        "{PAIR}sweep:\n  implementation:\n    carol: [lnd]\n"
    ));
    assert!(err.contains("names node \"carol\""), "{err}");

    let twice = error_of(&format!("{PAIR}sweep:\n  implementation: [cln, cln]\n"));
    assert!(twice.contains("lists cln twice"), "{twice}");

    // CLN needs Bitcoin Core: the point says so, at the sweep value.
    let on_btcd = PAIR.replace("  implementation: bitcoind\n", "  implementation: btcd\n");
    let err = error_of(&format!("{on_btcd}sweep:\n  implementation: [lnd, cln]\n"));
    assert!(err.contains("sweep point implementation=cln"), "{err}");
}
