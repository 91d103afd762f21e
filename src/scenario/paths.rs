//! Paths over the channels as written: which groups can pay which.

use super::raw::RawChannel;
use serde_saphyr::Spanned;
use std::collections::{HashSet, VecDeque};

/// Whether channels lead from group `from` to group `to`. Channels are directed: the
/// opener funds them, so only it can pay through them at first. Every instance of a
/// group gets the group's channels, so a path between groups is a path between every
/// pair of their instances.
pub(super) fn reaches(channels: &[Spanned<RawChannel>], from: &str, to: &str) -> bool {
    reaches_without(channels, from, to, None)
}

/// [`reaches`], on paths that do not pass through group `avoid` (a rebalancing
/// node's circle must close without it).
pub(super) fn reaches_without(
    channels: &[Spanned<RawChannel>],
    from: &str,
    to: &str,
    avoid: Option<&str>,
) -> bool {
    let mut seen = HashSet::from([from]);
    let mut queue = VecDeque::from([from]);
    while let Some(at) = queue.pop_front() {
        if at == to {
            return true;
        }
        for ch in channels.iter().map(|c| &c.value) {
            let next = ch.to.value.as_str();
            if ch.from.value == at && Some(next) != avoid && seen.insert(next) {
                queue.push_back(next);
            }
        }
    }
    false
}
