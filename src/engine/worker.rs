//! The one payment loop. Closed and open loop differ only in where tickets come
//! from: a counter (start now) or the dispatcher's queue (start at an intended time).

use super::activity::Recorded;
use super::ledger::{Reservation, Settled};
use super::tally::Verdict;
use super::{Context, StopReason};
use crate::metrics::{FailureKind, PaymentResult, PaymentRow, Stage, WorkerRecorder};
use crate::node::{FailureReason, NodeError, PaymentHash, PaymentOutcome, fresh_preimage};
use crate::scenario::PaymentKind;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::Poll;
use tokio::sync::{Mutex, mpsc};
use tokio::time::Instant;

/// Permission to start one payment.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ticket {
    /// Arrival number (open loop); picks the route.
    pub seq: u64,
    /// When the payment should start; latency counts from here.
    pub intended: Instant,
    /// Completed pause time when the ticket was released: pauses after that are
    /// not the node's fault and are taken off the latency.
    pub pause_at_release: std::time::Duration,
    pub warm_up: bool,
    /// The stage the payment was scheduled in (its open-loop phase), which its
    /// result is counted under.
    pub stage: Stage,
}

/// Where a worker's tickets come from.
#[derive(Debug)]
pub(super) enum Tickets {
    /// Closed loop: the next payment starts when the previous one ends.
    Closed,
    /// Open loop: the dispatcher releases tickets at their intended times.
    Open(Mutex<mpsc::Receiver<Ticket>>),
}

/// What one attempt came to.
enum Attempt {
    Answered(Result<PaymentOutcome, NodeError>),
    /// Invoice-pregenerated: this route's invoices are used up.
    NoInvoice,
}

pub(super) async fn worker(ctx: Arc<Context>, id: u32) {
    let mut batch = ctx.recorder.worker();
    let mut now = Instant::now();
    // Spread workers over routes so they do not all start on the first one.
    let mut route_cursor = id as usize;
    let mut rng = ctx.activity.as_ref().map(|a| a.rng_for(id));
    while wait_until_allowed(&ctx, id, &mut batch, &mut now).await {
        let Some(ticket) = next_ticket(&ctx, &mut batch, now).await else {
            break;
        };
        let (route, amount_msat) = match (&ctx.activity, &mut rng, &ctx.tickets) {
            (Some(a), Some(rng), Tickets::Closed) => a.pick(u64::from(id), rng),
            (Some(a), Some(rng), Tickets::Open(_)) => a.pick(ticket.seq, rng),
            (_, _, Tickets::Closed) => {
                route_cursor = route_cursor.wrapping_add(1);
                (route_cursor % ctx.routes.len(), ctx.amount_msat)
            }
            (_, _, Tickets::Open(_)) => (
                (ticket.seq % ctx.routes.len() as u64) as usize,
                ctx.amount_msat,
            ),
        };
        // Mainnet caps: the amount clamped and reserved, or the load ends here.
        let Some((amount_msat, reservation)) = reserve(&ctx, amount_msat) else {
            ctx.end(StopReason::CapReached);
            break;
        };
        let started = Instant::now();
        let (mut hash, mut parts) = (None, None);
        let max_fee_msat = reservation.map(|r| r.max_fee_msat);
        let slots = super::stream::Slots::default();
        let payment = pay(
            &ctx,
            route,
            (amount_msat, max_fee_msat),
            &mut hash,
            &mut parts,
            &slots,
        );
        let settled = settle(payment, &ctx, &mut batch).await;
        if let (Some(ledger), Some(r)) = (&ctx.ledger, reservation) {
            ledger.settle(r, spend_of(settled.as_ref()));
        }
        now = Instant::now();
        if !ticket.warm_up {
            batch.set_stage(ticket.stage);
        }
        let paid = Paid {
            route,
            amount_msat,
            hash,
            parts,
            started,
            ended: now,
        };
        // A stream tick's splits count on their own routes.
        let tally = match &ctx.stream {
            Some(stream) => {
                stream.count(&ctx, route, &slots, ticket.warm_up);
                None
            }
            None => Some(&ctx.tally[route]),
        };
        let Some(attempt) = settled else {
            // Abandoned in flight: the node may still complete it.
            tally.inspect(|t| t.add(Verdict::Indeterminate));
            if ticket.warm_up {
                batch.warm_up();
            } else {
                batch.indeterminate();
                if let Some(activity) = &ctx.activity {
                    activity.record(route, Recorded::Indeterminate);
                }
                let row = PaymentResult::Indeterminate("abandoned");
                log_payment(&ctx, &mut batch, &ticket, paid, row);
            }
            break;
        };
        let result = match attempt {
            Attempt::Answered(result) => result,
            Attempt::NoInvoice => {
                ctx.end(StopReason::InvoicesExhausted);
                break;
            }
        };
        let verdict = Verdict::of(&result);
        tally.inspect(|t| t.add(verdict));
        if ticket.warm_up {
            batch.warm_up();
            continue;
        }
        count(&ctx, &mut batch, &ticket, paid, result, verdict);
        // A fake node answers without ever yielding: give other tasks their turn.
        tokio::task::consume_budget().await;
    }
}

/// Counts an answered, measured payment: its latency or failure, its
/// `payments.csv` row and, with `activity:`, its route's figures.
fn count(
    ctx: &Context,
    batch: &mut WorkerRecorder,
    ticket: &Ticket,
    paid: Paid,
    result: Result<PaymentOutcome, NodeError>,
    verdict: Verdict,
) {
    let fee_msat = match &result {
        Ok(PaymentOutcome::Succeeded { fee_msat, .. }) => *fee_msat,
        _ => 0,
    };
    let counted = match &result {
        // Timed out: the tool stopped waiting, the payment may yet settle.
        Ok(PaymentOutcome::Failed {
            reason: FailureReason::Timeout,
        }) => {
            batch.indeterminate();
            Err(FailureKind::Node(FailureReason::Timeout))
        }
        Ok(PaymentOutcome::Succeeded { hops, .. }) => {
            let shift = ctx.control.completed_pause() - ticket.pause_at_release;
            let latency = (paid.ended).saturating_duration_since(ticket.intended + shift);
            batch.success(latency);
            Ok((latency, Some(*hops)))
        }
        Ok(PaymentOutcome::Failed { reason }) => Err(FailureKind::Node(*reason)),
        Err(_) => Err(FailureKind::RpcError),
    };
    let latency = counted.ok().map(|(latency, _)| latency);
    super::split::note(ctx, &result, latency, paid.parts);
    super::attack::note(ctx, &counted);
    if let Err(kind) = counted
        && verdict == Verdict::Failed
    {
        batch.failure(kind);
    }
    let row = match counted {
        Ok((latency, hops)) => PaymentResult::Ok {
            latency_ms: latency.as_secs_f64() * 1e3,
            hops: hops.unwrap_or(0),
            fee_msat,
        },
        Err(_) if verdict == Verdict::Indeterminate => PaymentResult::Indeterminate("timeout"),
        Err(kind) => PaymentResult::Failed(kind),
    };
    let route = paid.route;
    log_payment(ctx, batch, ticket, paid, row);
    if let Some(activity) = &ctx.activity {
        let recorded = match counted {
            Ok((latency, hops)) => Recorded::Ok(latency, hops),
            Err(_) if verdict == Verdict::Indeterminate => Recorded::Indeterminate,
            Err(kind) => Recorded::Failed(kind),
        };
        activity.record(route, recorded);
    }
}

/// One payment attempt's route, amount and times, for its `payments.csv` row.
struct Paid {
    route: usize,
    amount_msat: u64,
    /// The payment's hash, when the tool knows it.
    hash: Option<PaymentHash>,
    /// How the node split the payment, when it told.
    parts: Option<crate::node::parts::Parts>,
    started: Instant,
    ended: Instant,
}

/// Hands a counted payment's row to the batch, when the run keeps `payments.csv`.
fn log_payment(
    ctx: &Context,
    batch: &mut WorkerRecorder,
    ticket: &Ticket,
    paid: Paid,
    result: PaymentResult,
) {
    if !batch.logs_payments() {
        return;
    }
    let route = &ctx.routes[paid.route];
    let row = PaymentRow {
        intended_start_s: batch.seconds_at(ticket.intended),
        start_s: batch.seconds_at(paid.started),
        end_s: batch.seconds_at(paid.ended),
        sender: route.sender.name().to_string(),
        receiver: route.receiver.name().to_string(),
        kind: kind_name(ctx.kind),
        amount_msat: paid.amount_msat,
        payment_hash: paid.hash,
        result,
    };
    batch.payment(row);
}

/// The payment kind as the scenario writes it.
fn kind_name(kind: PaymentKind) -> &'static str {
    match kind {
        PaymentKind::Keysend => "keysend",
        PaymentKind::Invoice => "invoice",
        PaymentKind::InvoicePregenerated => "invoice-pregenerated",
        PaymentKind::Stream => "stream",
    }
}

/// Waits while paused or above the concurrency limit; false when the worker must end.
async fn wait_until_allowed(
    ctx: &Context,
    id: u32,
    batch: &mut WorkerRecorder,
    now: &mut Instant,
) -> bool {
    loop {
        if ctx.stop.is_cancelled() || ctx.abort.is_cancelled() {
            return false;
        }
        if !ctx.control.must_wait(id) {
            return true;
        }
        batch.flush();
        let mut changes = ctx.control.subscribe();
        if ctx.control.must_wait(id) {
            tokio::select! {
                _ = ctx.stop.cancelled() => return false,
                _ = ctx.abort.cancelled() => return false,
                _ = changes.changed() => {}
            }
        }
        // A closed-loop payment after a wait starts now, not when the last one ended.
        *now = Instant::now();
    }
}

async fn next_ticket(ctx: &Context, batch: &mut WorkerRecorder, now: Instant) -> Option<Ticket> {
    match &ctx.tickets {
        Tickets::Closed => {
            if let Some(limit) = ctx.payment_limit
                && ctx.issued.fetch_add(1, Ordering::Relaxed) >= limit
            {
                ctx.end(StopReason::PaymentCount);
                return None;
            }
            Some(Ticket {
                seq: 0,
                intended: now,
                pause_at_release: ctx.control.completed_pause(),
                warm_up: false,
                stage: Stage::Closed,
            })
        }
        Tickets::Open(queue) => {
            batch.flush();
            tokio::select! {
                biased;
                _ = ctx.stop.cancelled() => None,
                _ = ctx.abort.cancelled() => None,
                ticket = async { queue.lock().await.recv().await } => ticket,
            }
        }
    }
}

/// Runs a payment future; merges the worker's batch before actually waiting on it,
/// so results never sit unmerged behind a slow payment. `None` if aborted.
async fn settle<T>(
    payment: impl Future<Output = T>,
    ctx: &Context,
    batch: &mut WorkerRecorder,
) -> Option<T> {
    let mut payment = pin!(payment);
    let first = std::future::poll_fn(|cx| Poll::Ready(payment.as_mut().poll(cx))).await;
    if let Poll::Ready(value) = first {
        return Some(value);
    }
    batch.flush();
    tokio::select! {
        biased;
        _ = ctx.abort.cancelled() => None,
        value = payment => Some(value),
    }
}

/// Under mainnet caps, the amount (clamped to the per-payment cap) and its
/// reservation, or None when the caps refuse it; without caps, the amount as is.
fn reserve(ctx: &Context, amount_msat: u64) -> Option<(u64, Option<Reservation>)> {
    let Some(ledger) = &ctx.ledger else {
        return Some((amount_msat, None));
    };
    let amount_msat = ledger.clamp(amount_msat);
    ledger.reserve(amount_msat).map(|r| (amount_msat, Some(r)))
}

/// What an attempt spent, for the caps: only a success or a failure the node
/// reported is known; anything else (abandoned, timed out, an RPC error) may
/// still be paid.
fn spend_of(attempt: Option<&Attempt>) -> Settled {
    match attempt {
        Some(Attempt::Answered(Ok(PaymentOutcome::Succeeded { fee_msat, .. }))) => Settled::Paid {
            fee_msat: *fee_msat,
        },
        Some(Attempt::Answered(Ok(PaymentOutcome::Failed { reason })))
            if *reason != FailureReason::Timeout =>
        {
            Settled::Failed
        }
        Some(Attempt::NoInvoice) => Settled::Failed,
        _ => Settled::Unknown,
    }
}

/// Makes one payment; sets `hash` to its payment hash once the tool knows it (before
/// the payment starts), so an abandoned payment can still be asked about.
async fn pay(
    ctx: &Context,
    route: usize,
    (amount_msat, max_fee_msat): (u64, Option<u64>),
    hash: &mut Option<PaymentHash>,
    parts: &mut Option<crate::node::parts::Parts>,
    slots: &super::stream::Slots,
) -> Attempt {
    let r = &ctx.routes[route];
    let timeout = ctx.payment_timeout;
    let result = match ctx.kind {
        PaymentKind::Keysend => {
            let (preimage, payment_hash) = fresh_preimage();
            *hash = r.sender.keysend_takes_preimage().then_some(payment_hash);
            let dest = &r.receiver_pubkey;
            (r.sender)
                .keysend_capped(dest, amount_msat, preimage, timeout, max_fee_msat)
                .await
        }
        PaymentKind::Invoice => match r.receiver.create_invoice(amount_msat).await {
            Ok(invoice) => {
                *hash = Some(invoice.payment_hash);
                super::split::pay_invoice(ctx, r, &invoice.bolt11, max_fee_msat, parts).await
            }
            Err(e) => Err(e),
        },
        PaymentKind::InvoicePregenerated => match ctx.invoices[route].take() {
            Some(invoice) => {
                *hash = Some(invoice.payment_hash);
                super::split::pay_invoice(ctx, r, &invoice.bolt11, max_fee_msat, parts).await
            }
            None => return Attempt::NoInvoice,
        },
        PaymentKind::Stream => match &ctx.stream {
            Some(stream) => stream.tick(ctx, route, slots).await,
            None => Err(NodeError::protocol(
                r.sender.name(),
                "keysend",
                "no stream plan",
            )),
        },
    };
    Attempt::Answered(result)
}
