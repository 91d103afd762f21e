//! The load of a network run (`workload: activity:`): routes from every sender to
//! every other node, the plan that spreads payments over them, and its part of the
//! report.

use super::Network;
use crate::engine::Route;
use crate::engine::activity::ActivityPlan;
use crate::scenario::Scenario;
use std::sync::Arc;

/// The routes and the activity plan, when the scenario has `activity:`.
pub(super) fn plan(
    scenario: &Scenario,
    network: &Network,
) -> Option<(Vec<Route>, Arc<ActivityPlan>)> {
    let activity = scenario.activity.as_ref()?;
    let (routes, plan) = ActivityPlan::new(activity, scenario.topology.as_ref(), |s, r| {
        let (s, r) = (&network.nodes[s], &network.nodes[r]);
        Route {
            sender: s.node.clone(),
            receiver: r.node.clone(),
            receiver_pubkey: r.info.pubkey.clone(),
        }
    });
    Some((routes, Arc::new(plan)))
}

/// Probes for "routes ready": each sender pays the peer farthest from it in the
/// generated graph (the first other node without one), which proves that gossip
/// reached it; every sender to every peer would be N² probes.
pub(super) fn probes(scenario: &Scenario) -> Option<Vec<(String, String)>> {
    let activity = scenario.activity.as_ref()?;
    let mut pairs = Vec::new();
    for sender in &activity.senders {
        let hops =
            (scenario.topology.as_ref()).and_then(|t| Some((t, t.hops_from(t.index(sender)?))));
        let far = match hops {
            Some((t, hops)) => (hops.iter().enumerate())
                .filter_map(|(i, h)| Some((i, (*h)?)))
                .max_by_key(|&(_, h)| h)
                .map(|(i, _)| t.nodes[i].clone()),
            None => activity.peers.iter().find(|p| *p != sender).cloned(),
        };
        if let Some(far) = far.filter(|f| f != sender) {
            pairs.push((sender.clone(), far));
        }
    }
    Some(pairs)
}
