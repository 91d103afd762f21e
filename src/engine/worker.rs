//! The one payment loop. Closed and open loop differ only in where tickets come
//! from: a counter (start now) or the dispatcher's queue (start at an intended time).

use super::event::{Counted, End, PaymentEvent, Verdict};
use super::ledger::Reservation;
use super::{Context, StopReason};
use crate::metrics::{FailureKind, PaymentResult, PaymentRow, Stage, WorkerRecorder};
use crate::node::{NodeError, PaymentHash, PaymentOutcome, fresh_preimage};
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
        let slots = super::slots::Slots::default();
        let payment = pay(
            &ctx,
            route,
            (amount_msat, max_fee_msat),
            &mut hash,
            &mut parts,
            &slots,
        );
        let settled = settle(payment, &ctx, &mut batch).await;
        now = Instant::now();
        if !ticket.warm_up {
            batch.set_stage(ticket.stage);
        }
        let paid = Paid {
            route,
            amount_msat,
            hash,
            started,
            ended: now,
        };
        let event = |end| PaymentEvent {
            route,
            warm_up: ticket.warm_up,
            end,
            reservation,
            parts,
            slots: &slots,
        };
        let result = match settled {
            None => {
                // Abandoned in flight: the node may still complete it.
                publish(&ctx, &event(End::Abandoned));
                if ticket.warm_up {
                    batch.warm_up();
                } else {
                    batch.indeterminate();
                    let row = PaymentResult::Indeterminate("abandoned");
                    log_payment(&ctx, &mut batch, &ticket, paid, row);
                }
                break;
            }
            Some(Attempt::NoInvoice) => {
                publish(&ctx, &event(End::NoInvoice));
                ctx.end(StopReason::InvoicesExhausted);
                break;
            }
            Some(Attempt::Answered(result)) => result,
        };
        let counted = counted(&ctx, &ticket, &result, now);
        let answered = End::Answered {
            result: &result,
            counted: &counted,
        };
        publish(&ctx, &event(answered));
        if ticket.warm_up {
            batch.warm_up();
            continue;
        }
        record(&ctx, &mut batch, &ticket, paid, &result, counted);
        // A fake node answers without ever yielding: give other tasks their turn.
        tokio::task::consume_budget().await;
    }
}

/// Hands a payment's end to everyone who listens to the run.
fn publish(ctx: &Context, event: &PaymentEvent) {
    for subscriber in &ctx.subscribers {
        subscriber.on_payment(ctx, event);
    }
}

/// How the tool counts an answer that ended at `ended`: a success's latency from
/// its intended start, the pauses since its release taken off; a failure's kind (a
/// timeout is the node's `Timeout`: the tool stopped waiting, it may yet settle).
fn counted(
    ctx: &Context,
    ticket: &Ticket,
    result: &Result<PaymentOutcome, NodeError>,
    ended: Instant,
) -> Counted {
    match result {
        Ok(PaymentOutcome::Succeeded { hops, .. }) => {
            let shift = ctx.control.completed_pause() - ticket.pause_at_release;
            let latency = ended.saturating_duration_since(ticket.intended + shift);
            Ok((latency, Some(*hops)))
        }
        Ok(PaymentOutcome::Failed { reason }) => Err(FailureKind::Node(*reason)),
        Err(_) => Err(FailureKind::RpcError),
    }
}

/// Records an answered, measured payment in the worker's batch: its latency or
/// failure, and its `payments.csv` row.
fn record(
    ctx: &Context,
    batch: &mut WorkerRecorder,
    ticket: &Ticket,
    paid: Paid,
    result: &Result<PaymentOutcome, NodeError>,
    counted: Counted,
) {
    let verdict = Verdict::of(result);
    let fee_msat = match result {
        Ok(PaymentOutcome::Succeeded { fee_msat, .. }) => *fee_msat,
        _ => 0,
    };
    match counted {
        Ok((latency, _)) => batch.success(latency),
        Err(_) if verdict == Verdict::Indeterminate => batch.indeterminate(),
        Err(kind) => batch.failure(kind),
    }
    let row = match counted {
        Ok((latency, hops)) => PaymentResult::Ok {
            latency_us: u64::try_from(latency.as_micros()).unwrap_or(u64::MAX),
            hops: hops.unwrap_or(0),
            fee_msat,
        },
        Err(_) if verdict == Verdict::Indeterminate => PaymentResult::Indeterminate("timeout"),
        Err(kind) => PaymentResult::Failed(kind),
    };
    log_payment(ctx, batch, ticket, paid, row);
}

/// One payment attempt's route, amount and times, for its `payments.csv` row.
struct Paid {
    route: usize,
    amount_msat: u64,
    /// The payment's hash, when the tool knows it.
    hash: Option<PaymentHash>,
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

/// Makes one payment; sets `hash` to its payment hash once the tool knows it (before
/// the payment starts), so an abandoned payment can still be asked about.
async fn pay(
    ctx: &Context,
    route: usize,
    (amount_msat, max_fee_msat): (u64, Option<u64>),
    hash: &mut Option<PaymentHash>,
    parts: &mut Option<crate::node::parts::Parts>,
    slots: &super::slots::Slots,
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
