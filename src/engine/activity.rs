//! Network-wide activity (`workload: activity:`): which route and amount each payment
//! takes, and its results counted per sender and per route length.
//!
//! A closed-loop worker pays for sender `id % senders`; an open-loop arrival for
//! sender `seq % senders`. Each picks a peer at random among the sender's routes and an
//! amount from the distribution, from a random generator seeded per worker.
//!
//! Route length: a successful payment's comes from what the paying node returned
//! (its route's hop count); a failed payment has no route, and Core Lightning does not
//! say its hop count (0), so for those it is the shortest path between the two nodes
//! in the generated graph (`topology:`), and unknown without one.

use super::Route;
use crate::metrics::FailureKind;
use crate::scenario::{Activity, Dist, Topology};
use hdrhistogram::Histogram;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How the engine spreads payments over the network, and what it counted.
#[derive(Debug)]
pub struct ActivityPlan {
    /// Per sender: indices into the plan's routes.
    by_sender: Vec<Vec<usize>>,
    route_sender: Vec<usize>,
    /// Shortest path per route in the generated graph.
    graph_hops: Vec<Option<u32>>,
    amount: Dist,
    seed: u64,
    pub stats: NetworkStats,
}

impl ActivityPlan {
    /// Routes for every sender to every other node, and the plan over them.
    pub fn new(
        activity: &Activity,
        topology: Option<&Topology>,
        route_of: impl Fn(&str, &str) -> Route,
    ) -> (Vec<Route>, ActivityPlan) {
        let mut routes = Vec::new();
        let mut by_sender = Vec::new();
        let mut route_sender = Vec::new();
        let mut graph_hops = Vec::new();
        for (i, sender) in activity.senders.iter().enumerate() {
            let hops = (topology.and_then(|t| Some((t, t.index(sender)?))))
                .map(|(t, at)| (t, t.hops_from(at)));
            let mut mine = Vec::new();
            for peer in activity.peers.iter().filter(|p| *p != sender) {
                mine.push(routes.len());
                route_sender.push(i);
                graph_hops
                    .push((hops.as_ref()).and_then(|(t, h)| t.index(peer).and_then(|at| h[at])));
                routes.push(route_of(sender, peer));
            }
            by_sender.push(mine);
        }
        let stats = NetworkStats::new(&activity.senders);
        let plan = ActivityPlan {
            by_sender,
            route_sender,
            graph_hops,
            amount: activity.amount_msat,
            seed: activity.seed,
            stats,
        };
        (routes, plan)
    }

    /// The random generator of one worker.
    pub(super) fn rng_for(&self, worker: u32) -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(
            self.seed ^ (u64::from(worker) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        )
    }

    /// The route and amount of payment number `n` (the worker id in closed loop,
    /// the arrival number in open loop).
    pub(super) fn pick(&self, n: u64, rng: &mut ChaCha8Rng) -> (usize, u64) {
        let mine = &self.by_sender[(n % self.by_sender.len() as u64) as usize];
        let route = mine[rng.random_range(0..mine.len())];
        (route, self.amount.sample_u64(rng))
    }

    /// Counts one timed result: `hops` is the node's hop count on success.
    fn record(&self, route: usize, result: Recorded) {
        let sender = self.route_sender[route];
        let (hops, from_node) = match &result {
            Recorded::Ok(_, Some(h)) if *h > 0 => (Some(*h), true),
            _ => (self.graph_hops[route], false),
        };
        let counter = match from_node {
            true => &self.stats.hops_from_node,
            false => &self.stats.hops_from_graph,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        lock(&self.stats.per_sender[sender]).add(&result);
        lock(&self.stats.by_hops)
            .entry(hops.unwrap_or(0))
            .or_insert_with(Counts::new)
            .add(&result);
    }
}

impl super::event::Subscriber for ActivityPlan {
    fn on_payment(&self, _: &super::Context, event: &super::event::PaymentEvent) {
        use super::event::End;
        use super::event::Verdict;
        if event.warm_up {
            return;
        }
        let recorded = match &event.end {
            End::NoInvoice => return,
            End::Abandoned => Recorded::Indeterminate,
            End::Answered { result, counted } => match counted {
                Ok((latency, hops)) => Recorded::Ok(*latency, *hops),
                Err(_) if Verdict::of(result) == Verdict::Indeterminate => Recorded::Indeterminate,
                Err(kind) => Recorded::Failed(*kind),
            },
        };
        self.record(event.route, recorded);
    }
}

/// One payment as a route's figures count it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Recorded {
    /// Its latency, and the node's hop count when it told.
    Ok(Duration, Option<u32>),
    Failed(FailureKind),
    /// Timed out, or in flight when the load ended: neither ok nor failed (the
    /// reconciliation after the load resolves it, in the nodes' counts).
    Indeterminate,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Results per sender and per route length (0: unknown).
#[derive(Debug)]
pub struct NetworkStats {
    pub senders: Vec<String>,
    per_sender: Vec<Mutex<Counts>>,
    by_hops: Mutex<BTreeMap<u32, Counts>>,
    hops_from_node: AtomicU64,
    hops_from_graph: AtomicU64,
}

/// Payments of one group: counts, failure reasons, latency of the successful ones.
#[derive(Debug, Clone)]
pub struct Counts {
    pub ok: u64,
    pub failed: u64,
    /// Timed out or in flight when the load ended: in neither ok nor failed.
    pub indeterminate: u64,
    pub failures: BTreeMap<&'static str, u64>,
    /// Microseconds.
    pub latency: Histogram<u64>,
}

impl Counts {
    fn new() -> Counts {
        Counts {
            ok: 0,
            failed: 0,
            indeterminate: 0,
            failures: BTreeMap::new(),
            // One hour in microseconds, 3 significant digits.
            latency: Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid bounds"),
        }
    }

    fn add(&mut self, result: &Recorded) {
        match result {
            Recorded::Ok(d, _) => {
                self.ok += 1;
                let us = (d.as_micros() as u64).clamp(1, 3_600_000_000);
                let _ = self.latency.record(us);
            }
            Recorded::Failed(f) => {
                self.failed += 1;
                *self.failures.entry(f.as_str()).or_default() += 1;
            }
            Recorded::Indeterminate => self.indeterminate += 1,
        }
    }
}

impl NetworkStats {
    fn new(senders: &[String]) -> NetworkStats {
        NetworkStats {
            senders: senders.to_vec(),
            per_sender: senders.iter().map(|_| Mutex::new(Counts::new())).collect(),
            by_hops: Mutex::new(BTreeMap::new()),
            hops_from_node: AtomicU64::new(0),
            hops_from_graph: AtomicU64::new(0),
        }
    }

    /// Per sender, in sender order.
    pub fn per_sender(&self) -> Vec<(String, Counts)> {
        (self.senders.iter().zip(&self.per_sender))
            .map(|(name, c)| (name.clone(), lock(c).clone()))
            .collect()
    }

    /// Per route length, shortest first (0: unknown).
    pub fn by_hops(&self) -> Vec<(u32, Counts)> {
        lock(&self.by_hops)
            .iter()
            .map(|(h, c)| (*h, c.clone()))
            .collect()
    }

    /// How many route lengths came from the nodes and how many from the graph.
    pub fn hops_sources(&self) -> (u64, u64) {
        (
            self.hops_from_node.load(Ordering::Relaxed),
            self.hops_from_graph.load(Ordering::Relaxed),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::FailureReason;

    /// A timed-out or abandoned payment is counted apart, as in the pair report: not
    /// a failure of its sender or its route length.
    #[test]
    fn indeterminate_payments_are_counted_apart_from_failures() {
        let plan = ActivityPlan {
            by_sender: vec![vec![0]],
            route_sender: vec![0],
            graph_hops: vec![Some(2)],
            amount: Dist::Fixed { value: 1000.0 },
            seed: 1,
            stats: NetworkStats::new(&["alice".to_string()]),
        };
        plan.record(0, Recorded::Ok(Duration::from_millis(5), Some(2)));
        plan.record(0, Recorded::Indeterminate);
        plan.record(0, Recorded::Indeterminate);
        let no_route = FailureKind::Node(FailureReason::NoRoute);
        plan.record(0, Recorded::Failed(no_route));
        let (name, alice) = &plan.stats.per_sender()[0];
        assert_eq!(name, "alice");
        assert_eq!((alice.ok, alice.failed, alice.indeterminate), (1, 1, 2));
        assert_eq!(alice.failures.values().sum::<u64>(), 1);
        let (hops, by_length) = &plan.stats.by_hops()[0];
        assert_eq!(
            (*hops, by_length.indeterminate, by_length.failed),
            (2, 2, 1)
        );
    }
}
