//! How an Eclair payment learns that it ended: its event on the node's websocket
//! (`events.rs`), the moment it arrives, as LND's stream and CLN's answer are read.
//! `getsentinfo` is the fallback: often (5 ms growing to [`POLL_MAX`]) while the socket
//! is down, once a second while it is up in case Eclair dropped the event (its queue
//! is small), and at once whenever the socket drops or opens again.

use super::events::{self, EventSocket};
use super::{EclairNode, SentPart, payment_outcome};
use crate::node::completion::{Completion, Fallback, Method};
use crate::node::{FailureReason, NodeError, PaymentOutcome};
use std::time::Duration;
use tokio::time::Instant;

/// How long past the payment timeout we wait for Eclair's final answer before calling
/// it a timeout ourselves (an HTLC can stay in flight after Eclair stops retrying).
const FINAL_ANSWER_GRACE: Duration = Duration::from_secs(30);
/// Without the socket: the first and the longest interval between two polls.
const POLL_FIRST: Duration = Duration::from_millis(5);
const POLL_MAX: Duration = Duration::from_millis(50);
/// With the socket up: a poll in case the payment's event was lost.
const POLL_SOCKET_UP: Duration = Duration::from_secs(1);

/// What the report says of an Eclair client: the websocket, with the payments that
/// fell back on polling; polling alone when no socket was opened.
pub(super) fn completion(counts: Option<events::Counts>) -> Completion {
    let Some(c) = counts else {
        return Completion::polling("getsentinfo", POLL_MAX, POLL_MAX);
    };
    let mut completion = Completion::exact(Method::WebsocketEvent, "payment-sent / payment-failed");
    let polled = c.polled_down + c.polled_up;
    if polled > 0 || c.drops > 0 {
        let late = if c.polled_up > 0 {
            POLL_SOCKET_UP
        } else {
            POLL_MAX
        };
        completion.fallback = Some(Fallback {
            method: "polling getsentinfo".into(),
            payments: polled,
            late_up_to_ms: late.as_secs_f64() * 1000.0,
            socket_drops: c.drops,
        });
    }
    completion.delivery_lag_max_ms = c.lag_max_us.map(|us| us as f64 / 1000.0);
    completion
}

impl EclairNode {
    /// Waits for the outcome of payment `id`, until well after `timeout`.
    pub(super) async fn wait_outcome(
        &self,
        id: &str,
        timeout: Duration,
    ) -> Result<PaymentOutcome, NodeError> {
        let deadline = Instant::now() + timeout + FINAL_ANSWER_GRACE;
        match &self.events {
            Some(socket) => self.wait_event(socket, id, deadline).await,
            None => self.poll_only(id, deadline).await,
        }
    }

    async fn sent_info(&self, id: &str) -> Result<Option<PaymentOutcome>, NodeError> {
        let parts: Vec<SentPart> = self.call("getsentinfo", &[("id", id.to_string())]).await?;
        Ok(payment_outcome(&parts))
    }

    async fn poll_only(&self, id: &str, deadline: Instant) -> Result<PaymentOutcome, NodeError> {
        let mut pause = POLL_FIRST;
        loop {
            tokio::time::sleep(pause).await;
            if let Some(outcome) = self.sent_info(id).await? {
                return Ok(outcome);
            }
            if Instant::now() >= deadline {
                return Ok(timed_out());
            }
            pause = (pause * 3 / 2).min(POLL_MAX);
        }
    }

    async fn wait_event(
        &self,
        socket: &EventSocket,
        id: &str,
        deadline: Instant,
    ) -> Result<PaymentOutcome, NodeError> {
        let mut waiter = socket.wait(id);
        let mut pause = POLL_FIRST;
        loop {
            let up = *waiter.connected.borrow_and_update();
            tokio::select! {
                biased;
                ended = &mut waiter.ended => match ended {
                    Ok(outcome) => return Ok(outcome),
                    // The socket's table is gone: only polling is left.
                    Err(_) => return self.poll_only(id, deadline).await,
                },
                // The socket dropped or opened again: events may have been lost.
                _ = waiter.connected.changed() => {}
                _ = tokio::time::sleep(if up { POLL_SOCKET_UP } else { pause }) => {}
            }
            let polled = self.sent_info(id).await?;
            // The event may have come while the poll was under way: it is the exact one.
            if let Ok(outcome) = waiter.ended.try_recv() {
                return Ok(outcome);
            }
            if let Some(outcome) = polled {
                waiter.polled(up && *waiter.connected.borrow());
                return Ok(outcome);
            }
            if Instant::now() >= deadline {
                return Ok(timed_out());
            }
            if !up {
                pause = (pause * 3 / 2).min(POLL_MAX);
            }
        }
    }
}

fn timed_out() -> PaymentOutcome {
    PaymentOutcome::Failed {
        reason: FailureReason::Timeout,
    }
}
