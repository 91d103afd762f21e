//! Who listens to a run's payments: the one place that says so. The tally (or a
//! stream's, which counts each split), the mainnet caps' ledger, and the figures of
//! the workloads the plan asks for; each hears every payment's end (event.rs), and
//! those with a live figure are shown from the start. Work beside the load (an attack,
//! a rebalancing) starts and ends here too.

use super::event::Subscriber;
use super::ledger::SpendLedger;
use crate::metrics::Recorder;
use std::sync::Arc;

/// The parts of a run that may listen to its payments.
pub(super) struct Listeners {
    pub ledger: Option<Arc<SpendLedger>>,
    pub stream: Option<Arc<super::stream::StreamState>>,
    pub activity: Option<Arc<super::activity::ActivityPlan>>,
    pub attack: Option<Arc<super::attack::Attack>>,
    pub notes: Arc<super::split::Notes>,
    pub rebalance: Option<Arc<super::rebalance::Rebalancer>>,
}

/// Who listens to a run's payments, in the order they hear each one; those with a
/// live figure are shown by `recorder` from now on.
pub(super) fn of(l: Listeners, recorder: &Recorder) -> Vec<Arc<dyn Subscriber>> {
    let mut all: Vec<Arc<dyn Subscriber>> = Vec::new();
    if let Some(ledger) = l.ledger {
        all.push(ledger);
    }
    // A stream tick's splits count on their own routes: the stream tallies them.
    match l.stream {
        Some(stream) => {
            recorder.watch(stream.shared());
            all.push(stream);
        }
        None => all.push(Arc::new(super::tally::RouteTallies)),
    }
    if let Some(activity) = l.activity {
        all.push(activity);
    }
    if let Some(attack) = l.attack {
        recorder.watch(attack.live());
        all.push(attack);
    }
    all.push(l.notes);
    if let Some(rebalance) = l.rebalance {
        recorder.watch(rebalance.stats.clone());
        all.push(rebalance);
    }
    all
}

/// A subscriber's work beside the load, and what ends it.
type Beside = (
    tokio_util::sync::CancellationToken,
    tokio::task::JoinHandle<()>,
);

/// Starts the subscribers' work beside the load (an attack, a rebalancing), each
/// with its own stop under `cancel`.
pub(super) fn start_beside(
    ctx: &Arc<super::Context>,
    cancel: &tokio_util::sync::CancellationToken,
) -> Vec<Beside> {
    let mut started = Vec::new();
    for subscriber in &ctx.subscribers {
        let stop = cancel.child_token();
        if let Some(work) = subscriber.clone().beside(ctx.clone(), stop.clone()) {
            started.push((stop, tokio::spawn(work)));
        }
    }
    started
}

/// Ends the work beside the load with it, and waits until each has ended (an
/// attack's slots cancelled their invoices, a rebalance in flight answered).
pub(super) async fn end_beside(beside: Vec<Beside>) {
    for (stop, _) in &beside {
        stop.cancel();
    }
    for (_, task) in beside {
        let _ = task.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_caps_hear_first_then_the_tally_then_the_workloads_figures() {
        let names = |l: Listeners| -> Vec<String> {
            let (recorder, _) = Recorder::new();
            let all = of(l, &recorder);
            all.iter()
                .map(|s| {
                    format!("{s:?}")
                        .split([' ', '{', '('])
                        .next()
                        .unwrap()
                        .to_string()
                })
                .collect()
        };
        let notes = || Arc::new(super::super::split::Notes::new(None, None));
        let plain = Listeners {
            ledger: None,
            stream: None,
            activity: None,
            attack: None,
            notes: notes(),
            rebalance: None,
        };
        assert_eq!(names(plain), ["RouteTallies", "Notes"]);
        let capped = Listeners {
            ledger: Some(Arc::new(SpendLedger::new(1_000, 10_000))),
            stream: None,
            activity: None,
            attack: None,
            notes: notes(),
            rebalance: None,
        };
        assert_eq!(names(capped), ["SpendLedger", "RouteTallies", "Notes"]);
    }
}
