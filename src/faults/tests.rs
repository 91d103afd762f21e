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
