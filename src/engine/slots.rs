//! A stream tick's splits, each with its node's answer as it comes (`kind: stream`):
//! the worker makes the slots, the stream's tick fills them, and the payment's event
//! carries them to the stream's tally, so a tick abandoned in flight still tells
//! which splits ended.

use crate::node::PaymentOutcome;
use std::sync::Mutex;

/// What one split's node answered (None while it is in flight).
#[derive(Debug, Clone, Copy)]
pub(super) enum Answer {
    Outcome(PaymentOutcome),
    RpcError,
}

/// Each split's answer, written as it comes.
#[derive(Debug, Default)]
pub(super) struct Slots(pub Mutex<Vec<Option<Answer>>>);
