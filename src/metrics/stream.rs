//! A podcast stream's figures (`kind: stream`): ticks by outcome, splits, and each
//! recipient's splits by outcome. The engine counts them; the report shows them.

use serde::Serialize;
use std::collections::BTreeMap;

/// What the stream's measured ticks came to (warm-up excluded). A tick is `ok` when
/// every split succeeded, `partial` when some did, `failed` when none did; a tick
/// with no failed split but some left unknown (timed out, abandoned) is
/// `indeterminate`, and so is a tick with no success and some unknown.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StreamSummary {
    pub ticks: u64,
    pub ticks_ok: u64,
    pub ticks_partial: u64,
    pub ticks_failed: u64,
    pub ticks_indeterminate: u64,
    /// Splits started, and how many succeeded.
    pub splits: u64,
    pub splits_ok: u64,
    /// One entry per recipient, in `recipients:` order.
    pub recipients: Vec<RecipientSummary>,
}

/// One recipient's splits of the measured ticks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RecipientSummary {
    pub recipient: String,
    /// Its share of each tick, msat.
    pub amount_msat: u64,
    pub ok: u64,
    pub failed: u64,
    pub indeterminate: u64,
    /// Failed splits by the paying node's reason (`rpc_error` when the call itself failed).
    pub failures_by_reason: BTreeMap<String, u64>,
    /// Keysends with the podcast record the recipient's node reports settled during
    /// the load (warm-up included), read from the node after it; None when its
    /// client cannot read them.
    pub records_received: Option<u64>,
}

/// What became of one split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitOutcome {
    Ok,
    Failed(&'static str),
    /// Timed out or abandoned: the node may still complete it.
    Unknown,
}

/// How a tick counts, from its splits' outcomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TickOutcome {
    Ok,
    Partial,
    Failed,
    Indeterminate,
}

impl TickOutcome {
    pub fn of(splits: &[SplitOutcome]) -> TickOutcome {
        let ok = splits.iter().filter(|s| **s == SplitOutcome::Ok).count();
        let failed = (splits.iter())
            .filter(|s| matches!(s, SplitOutcome::Failed(_)))
            .count();
        if ok == splits.len() {
            TickOutcome::Ok
        } else if ok > 0 && failed > 0 {
            TickOutcome::Partial
        } else if failed == splits.len() {
            TickOutcome::Failed
        } else {
            // Some unknown, and either none failed or none succeeded.
            TickOutcome::Indeterminate
        }
    }
}

impl StreamSummary {
    /// An empty summary of these recipients and their shares.
    pub fn new(recipients: impl IntoIterator<Item = (String, u64)>) -> StreamSummary {
        StreamSummary {
            recipients: (recipients.into_iter())
                .map(|(recipient, amount_msat)| RecipientSummary {
                    recipient,
                    amount_msat,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    /// Counts one measured tick; `splits` in `recipients` order.
    pub fn add_tick(&mut self, splits: &[SplitOutcome]) {
        self.ticks += 1;
        match TickOutcome::of(splits) {
            TickOutcome::Ok => self.ticks_ok += 1,
            TickOutcome::Partial => self.ticks_partial += 1,
            TickOutcome::Failed => self.ticks_failed += 1,
            TickOutcome::Indeterminate => self.ticks_indeterminate += 1,
        }
        for (r, split) in self.recipients.iter_mut().zip(splits) {
            self.splits += 1;
            match split {
                SplitOutcome::Ok => {
                    self.splits_ok += 1;
                    r.ok += 1;
                }
                SplitOutcome::Failed(reason) => {
                    r.failed += 1;
                    *r.failures_by_reason.entry(reason.to_string()).or_default() += 1;
                }
                SplitOutcome::Unknown => r.indeterminate += 1,
            }
        }
    }
}

/// A stream's live figure: its measured ticks so far, by outcome.
impl super::live::LiveSource for std::sync::Mutex<StreamSummary> {
    fn read(&self) -> super::live::LiveFigure {
        let s = self
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        super::live::LiveFigure {
            text: format!(
                "streams {} ok · {} partial · {} failed",
                s.ticks_ok, s.ticks_partial, s.ticks_failed
            ),
            alarm: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{SplitOutcome as S, StreamSummary, TickOutcome};

    #[test]
    fn a_tick_is_ok_only_when_every_split_succeeded() {
        assert_eq!(TickOutcome::of(&[S::Ok, S::Ok]), TickOutcome::Ok);
        assert_eq!(
            TickOutcome::of(&[S::Ok, S::Failed("no_route")]),
            TickOutcome::Partial
        );
        assert_eq!(
            TickOutcome::of(&[S::Ok, S::Failed("no_route"), S::Unknown]),
            TickOutcome::Partial
        );
        assert_eq!(
            TickOutcome::of(&[S::Failed("no_route"), S::Failed("timeout")]),
            TickOutcome::Failed
        );
        assert_eq!(
            TickOutcome::of(&[S::Ok, S::Unknown]),
            TickOutcome::Indeterminate
        );
        assert_eq!(
            TickOutcome::of(&[S::Failed("error"), S::Unknown]),
            TickOutcome::Indeterminate
        );
    }

    #[test]
    fn failures_are_counted_per_recipient_and_reason() {
        let mut s = StreamSummary::new([("host".to_string(), 600), ("guest".to_string(), 400)]);
        s.add_tick(&[S::Ok, S::Ok]);
        s.add_tick(&[S::Ok, S::Failed("no_route")]);
        s.add_tick(&[S::Failed("no_route"), S::Failed("no_route")]);
        assert_eq!(
            (s.ticks, s.ticks_ok, s.ticks_partial, s.ticks_failed),
            (3, 1, 1, 1)
        );
        assert_eq!((s.splits, s.splits_ok), (6, 3));
        assert_eq!((s.recipients[0].ok, s.recipients[0].failed), (2, 1));
        assert_eq!((s.recipients[1].ok, s.recipients[1].failed), (1, 2));
        assert_eq!(s.recipients[1].failures_by_reason["no_route"], 2);
    }
}
