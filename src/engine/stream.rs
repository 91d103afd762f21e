//! `kind: stream`: one tick is a keysend to every recipient at once, each carrying
//! the podcast record (TLV type 7629169, JSON as podcast apps send it). The tick
//! counts as one payment in the load's figures: ok only when every split succeeded.
//! Each split is counted on its own route (sender to recipient) for reconciliation,
//! and in the stream's figures ([`StreamSummary`]).
//!
//! The routes are senders by recipients, sender-major: a tick on route `r` is paid
//! by the sender of block `r / K` to the K recipients of that block.

use super::Context;
use super::slots::{Answer, Slots};
use crate::metrics::stream::{SplitOutcome, StreamSummary, TickOutcome};
use crate::node::capabilities::lacking;
use crate::node::{FailureReason, NodeError, PaymentOutcome, fresh_preimage};
use std::sync::{Arc, Mutex};

/// The TLV record type of Podcasting 2.0's value-for-value metadata.
pub const PODCAST_RECORD: u64 = 7_629_169;

/// What the engine needs of a stream workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamPlan {
    /// Each recipient's share of a tick, msat, in the order of each sender's routes.
    pub amounts: Vec<u64>,
}

/// The stream's state during the load.
#[derive(Debug)]
pub(super) struct StreamState {
    amounts: Vec<u64>,
    total_msat: u64,
    /// Shared with the recorder, which shows the ticks live.
    summary: Arc<Mutex<StreamSummary>>,
    /// Each recipient's count of podcast records received before the load.
    marks: Mutex<Vec<Option<u64>>>,
}

impl StreamState {
    /// The state of `plan` over `routes` (senders by recipients, sender-major).
    pub(super) fn new(plan: StreamPlan, routes: &[super::Route]) -> StreamState {
        let names = routes.iter().take(plan.amounts.len());
        let recipients = names
            .zip(&plan.amounts)
            .map(|(r, a)| (r.receiver.name().to_string(), *a));
        StreamState {
            total_msat: plan.amounts.iter().sum(),
            summary: Arc::new(Mutex::new(StreamSummary::new(recipients))),
            marks: Mutex::new(Vec::new()),
            amounts: plan.amounts,
        }
    }

    /// Each recipient's podcast records received so far, as its node reports them
    /// (None where it cannot tell or the call failed).
    async fn received(&self, routes: &[super::Route]) -> Vec<Option<u64>> {
        let reads = (routes.iter().take(self.amounts.len())).map(|r| async move {
            let counts = r.receiver.record_counts()?;
            match counts.records_received(PODCAST_RECORD).await {
                Ok(n) => Some(n),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read the podcast records received");
                    None
                }
            }
        });
        futures::future::join_all(reads).await
    }

    /// Before the load: what the recipients received so far.
    pub(super) async fn mark(&self, routes: &[super::Route]) {
        let marks = self.received(routes).await;
        *self.marks.lock().expect("not poisoned") = marks;
    }

    /// After the load: what the recipients received during it, into the summary.
    pub(super) async fn read_back(&self, routes: &[super::Route]) {
        let now = self.received(routes).await;
        let marks = self.marks.lock().expect("not poisoned").clone();
        let mut summary = self.summary.lock().expect("not poisoned");
        for (i, r) in summary.recipients.iter_mut().enumerate() {
            let before = marks.get(i).copied().flatten();
            r.records_received = now[i].zip(before).map(|(n, b)| n.saturating_sub(b));
        }
    }

    /// The figures as they are counted, for the live view.
    pub(super) fn shared(&self) -> Arc<Mutex<StreamSummary>> {
        self.summary.clone()
    }

    pub(super) fn summary(&self) -> StreamSummary {
        self.summary.lock().expect("not poisoned").clone()
    }

    /// The first route of the block `route` is in.
    fn block(&self, route: usize) -> usize {
        route / self.amounts.len() * self.amounts.len()
    }

    /// Pays one tick from the sender of `route`'s block; the tick's outcome as one
    /// payment: succeeded (fees summed, the longest route) when every split did,
    /// failed with the first failure's reason when one failed, timed out when the
    /// rest are not known.
    pub(super) async fn tick(
        &self,
        ctx: &Context,
        route: usize,
        slots: &Slots,
    ) -> Result<PaymentOutcome, NodeError> {
        let base = self.block(route);
        *slots.0.lock().expect("not poisoned") = vec![None; self.amounts.len()];
        let splits = self.amounts.iter().enumerate().map(|(i, &amount)| {
            let r = &ctx.routes[base + i];
            let record =
                podcast_record(r.sender.name(), r.receiver.name(), amount, self.total_msat);
            async move {
                let (preimage, _) = fresh_preimage();
                let records = [(PODCAST_RECORD, record)];
                let dest = &r.receiver_pubkey;
                let result = match r.sender.custom_records() {
                    Some(sender) => {
                        let timeout = ctx.payment_timeout;
                        (sender.keysend_records(dest, amount, preimage, timeout, &records)).await
                    }
                    None => Err(lacking(
                        r.sender.as_ref(),
                        crate::node::Feature::CustomRecords,
                    )),
                };
                let answer = match result {
                    Ok(outcome) => Answer::Outcome(outcome),
                    Err(e) => {
                        tracing::debug!(error = %e, "stream split");
                        Answer::RpcError
                    }
                };
                slots.0.lock().expect("not poisoned")[i] = Some(answer);
            }
        });
        futures::future::join_all(splits).await;
        let answers = slots.0.lock().expect("not poisoned").clone();
        let sender = ctx.routes[base].sender.name();
        as_one_payment(sender, &answers)
    }

    /// Counts a tick's splits on their routes (those without an answer as
    /// indeterminate) and, when measured, in the stream's figures.
    fn count(&self, ctx: &Context, route: usize, slots: &Slots, warm_up: bool) {
        let base = self.block(route);
        let answers = slots.0.lock().expect("not poisoned").clone();
        let outcomes: Vec<SplitOutcome> = (0..self.amounts.len())
            .map(|i| outcome_of(answers.get(i).copied().flatten()))
            .collect();
        for (i, outcome) in outcomes.iter().enumerate() {
            let verdict = match outcome {
                SplitOutcome::Ok => super::event::Verdict::Ok,
                SplitOutcome::Failed(_) => super::event::Verdict::Failed,
                SplitOutcome::Unknown => super::event::Verdict::Indeterminate,
            };
            ctx.tally[base + i].add(verdict);
        }
        if !warm_up {
            self.summary
                .lock()
                .expect("not poisoned")
                .add_tick(&outcomes);
        }
    }
}

impl super::event::Subscriber for StreamState {
    fn on_payment(&self, ctx: &Context, event: &super::event::PaymentEvent) {
        if event.verdict().is_some() {
            self.count(ctx, event.route, event.slots, event.warm_up);
        }
    }

    /// The splits' tallies, per route, and the stream's figures (read back from
    /// the recipients before: see [`StreamState::read_back`]).
    fn fill(&self, ctx: &Context, summary: &mut crate::metrics::Summary) {
        super::tally::RouteTallies.fill(ctx, summary);
        summary.stream = Some(self.summary());
    }
}

fn outcome_of(answer: Option<Answer>) -> SplitOutcome {
    match answer {
        Some(Answer::Outcome(PaymentOutcome::Succeeded { .. })) => SplitOutcome::Ok,
        Some(Answer::Outcome(PaymentOutcome::Failed {
            reason: FailureReason::Timeout,
        }))
        | None => SplitOutcome::Unknown,
        Some(Answer::Outcome(PaymentOutcome::Failed { reason })) => {
            SplitOutcome::Failed(reason.as_str())
        }
        Some(Answer::RpcError) => SplitOutcome::Failed("rpc_error"),
    }
}

/// A tick's answers as the outcome of one payment (see [`StreamState::tick`]).
fn as_one_payment(sender: &str, answers: &[Option<Answer>]) -> Result<PaymentOutcome, NodeError> {
    let outcomes: Vec<SplitOutcome> = answers.iter().map(|a| outcome_of(*a)).collect();
    match TickOutcome::of(&outcomes) {
        TickOutcome::Ok => {
            let (mut fee_msat, mut hops) = (0, 0);
            for a in answers.iter().flatten() {
                if let Answer::Outcome(PaymentOutcome::Succeeded {
                    fee_msat: f,
                    hops: h,
                }) = a
                {
                    fee_msat += f;
                    hops = hops.max(*h);
                }
            }
            Ok(PaymentOutcome::Succeeded { fee_msat, hops })
        }
        TickOutcome::Indeterminate => Ok(PaymentOutcome::Failed {
            reason: FailureReason::Timeout,
        }),
        TickOutcome::Partial | TickOutcome::Failed => {
            let first = answers.iter().flatten().find_map(|a| match a {
                Answer::Outcome(PaymentOutcome::Failed { reason })
                    if *reason != FailureReason::Timeout =>
                {
                    Some(Ok(*reason))
                }
                Answer::RpcError => Some(Err(())),
                _ => None,
            });
            match first {
                Some(Ok(reason)) => Ok(PaymentOutcome::Failed { reason }),
                _ => Err(NodeError::protocol(
                    sender,
                    "keysend",
                    "a split of the stream tick failed at the RPC",
                )),
            }
        }
    }
}

/// The podcast record's value: JSON in the shape podcast apps send with each split
/// (the show, the episode, the action, the tick's total and this split's share, who
/// sent it and to whom).
pub fn podcast_record(sender: &str, recipient: &str, amount_msat: u64, total_msat: u64) -> Vec<u8> {
    serde_json::json!({
        "podcast": "lnbench-tui stream",
        "episode": "benchmark tick",
        "action": "stream",
        "app_name": "lnbench-tui",
        "value_msat": amount_msat,
        "value_msat_total": total_msat,
        "sender_name": sender,
        "name": recipient,
    })
    .to_string()
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::{Answer, as_one_payment, podcast_record};
    use crate::node::{FailureReason, PaymentOutcome};

    fn ok(fee_msat: u64, hops: u32) -> Option<Answer> {
        Some(Answer::Outcome(PaymentOutcome::Succeeded {
            fee_msat,
            hops,
        }))
    }

    fn failed(reason: FailureReason) -> Option<Answer> {
        Some(Answer::Outcome(PaymentOutcome::Failed { reason }))
    }

    #[test]
    fn a_tick_succeeds_only_when_every_split_did() {
        let all = as_one_payment("a", &[ok(1, 1), ok(2, 3)]).unwrap();
        assert_eq!(
            all,
            PaymentOutcome::Succeeded {
                fee_msat: 3,
                hops: 3
            }
        );
        let partial = as_one_payment("a", &[ok(1, 1), failed(FailureReason::NoRoute)]).unwrap();
        assert_eq!(
            partial,
            PaymentOutcome::Failed {
                reason: FailureReason::NoRoute
            }
        );
        let unknown = as_one_payment("a", &[ok(1, 1), None]).unwrap();
        assert_eq!(
            unknown,
            PaymentOutcome::Failed {
                reason: FailureReason::Timeout
            }
        );
        assert!(as_one_payment("a", &[ok(1, 1), Some(Answer::RpcError)]).is_err());
    }

    #[test]
    fn the_podcast_record_is_json_with_the_split_and_the_total() {
        let record = podcast_record("listener-1", "host", 600, 1_000);
        let v: serde_json::Value = serde_json::from_slice(&record).unwrap();
        assert_eq!(v["action"], "stream");
        assert_eq!(v["value_msat"], 600);
        assert_eq!(v["value_msat_total"], 1_000);
        assert_eq!(v["sender_name"], "listener-1");
        assert_eq!(v["name"], "host");
    }
}
