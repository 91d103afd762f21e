//! The runner's order of faults on one process.

use super::*;
use crate::scenario::{Fault, FaultAction, FaultTrigger};

fn at(s: u64, action: FaultAction) -> Fault {
    Fault {
        trigger: FaultTrigger::At(Duration::from_secs(s)),
        action,
    }
}

fn runner(faults: Vec<Fault>) -> FaultRunner {
    let (recorder, snapshots) = Recorder::new();
    let net = FaultNetwork {
        links: None,
        chain: None,
        clients: HashMap::new(),
        peer_links: Vec::new(),
        mining: None,
    };
    FaultRunner::new(faults, &recorder, snapshots, net)
}

#[tokio::test]
async fn a_fault_on_a_process_another_still_holds_waits_and_others_do_not() {
    let chain = || CHAIN_NAME.to_string();
    let mut r = runner(vec![
        at(8, FaultAction::Restart { node: chain() }),
        at(
            22,
            FaultAction::Kill {
                node: chain(),
                restart_after: Some(Duration::from_secs(4)),
            },
        ),
        at(
            22,
            FaultAction::Pause {
                node: "bob".into(),
                duration: Duration::from_secs(1),
            },
        ),
        at(22, FaultAction::Mine { blocks: 1 }),
    ]);
    // Nothing under way: nothing waits.
    assert!((0..4).all(|i| !r.held(i)));
    // The chain's restart is still on its way back.
    r.state[0] = State::Active { lift_at: None };
    assert!(r.held(1), "the kill of the chain waits for its restart");
    assert!(!r.held(2), "another node's pause does not");
    assert!(!r.held(3), "a burst of blocks is no process fault");
    assert!(r.waited[1] && !r.waited[2]);
    // Its way back over: the kill may begin.
    r.state[0] = State::Done;
    assert!(!r.held(1));
}

#[tokio::test]
async fn a_restart_that_fails_ends_at_once_and_what_waits_on_its_process_goes_on() {
    let bob = || "bob".to_string();
    let chain = || CHAIN_NAME.to_string();
    let mut r = runner(vec![
        at(1, FaultAction::Restart { node: bob() }),
        at(
            2,
            FaultAction::Kill {
                node: bob(),
                restart_after: None,
            },
        ),
        at(1, FaultAction::Restart { node: chain() }),
        at(
            2,
            FaultAction::Pause {
                node: chain(),
                duration: Duration::from_secs(1),
            },
        ),
    ]);
    let dir = tempfile::tempdir().unwrap();
    // The fake runtime restarts no node and stops no chain: both restarts fail.
    let mut runtime = crate::runtime::fake::FakeRuntime::new(Default::default(), dir.path());
    r.begin(0, &mut runtime).await;
    r.begin(2, &mut runtime).await;
    for i in [0, 2] {
        assert!(matches!(r.state[i], State::Done), "fault {i} ended");
        assert!(r.records[i].ended_s.is_some(), "fault {i} has its end");
        let error = r.records[i].error.as_deref().unwrap_or_default();
        assert!(!error.is_empty(), "fault {i} says why");
    }
    assert!(
        !r.held(1),
        "the kill of bob does not wait for the failed restart"
    );
    assert!(!r.held(3), "nor the chain's pause");
}

#[tokio::test]
async fn a_pause_lasts_from_its_node_frozen_until_it_is_thawed() {
    let takes = Duration::from_millis(300);
    let mut r = runner(vec![at(
        0,
        FaultAction::Pause {
            node: "bob".into(),
            duration: Duration::from_secs(1),
        },
    )]);
    let dir = tempfile::tempdir().unwrap();
    let script = crate::runtime::fake::FakeScript {
        pause_takes: Some(takes),
        ..Default::default()
    };
    let mut runtime = crate::runtime::fake::FakeRuntime::new(script, dir.path());
    let asked = r.now_s();
    r.begin(0, &mut runtime).await;
    let began = r.records[0].began_s.expect("began");
    assert!(
        began - asked >= takes.as_secs_f64() * 0.9,
        "began {began:.3} s, asked at {asked:.3} s: before the node was frozen"
    );
    let frozen = Instant::now();
    let State::Active {
        lift_at: Some(lift_at),
    } = r.state[0]
    else {
        panic!("the pause holds until it is lifted");
    };
    // Its `for:` counts from the freeze, not from the ask.
    let frozen_for = lift_at.saturating_duration_since(frozen);
    assert!(
        frozen_for >= Duration::from_millis(950),
        "lifted {frozen_for:?} after the freeze"
    );
    let thaw_asked = r.now_s();
    r.lift(0, &mut runtime).await;
    let ended = r.records[0].ended_s.expect("ended");
    assert!(
        ended - thaw_asked < takes.as_secs_f64() * 0.5,
        "ended {ended:.3} s, thaw asked at {thaw_asked:.3} s: after the node was thawed"
    );
    assert!(r.records[0].error.is_none(), "{:?}", r.records[0].error);
    assert!(matches!(r.state[0], State::Done));
}
