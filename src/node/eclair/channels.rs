//! Eclair's channels (`channels` API) in our terms: each channel for setup and the
//! load, and what faults left on them at the end of a run.

use crate::node::{ChannelHealth, ChannelInfo};
use serde_json::Value;

/// One channel of `channels` in our terms: usable once NORMAL. The funding outpoint
/// and balances are read from the active commitment.
pub(super) fn channel_info(c: &Value) -> ChannelInfo {
    let state = c.get("state").and_then(Value::as_str).unwrap_or("");
    let commitment = c
        .pointer("/data/commitments/active/0")
        .unwrap_or(&Value::Null);
    let funding = commitment
        .get("fundingInput")
        .or_else(|| commitment.pointer("/fundingTx/outPoint"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let sat = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    let capacity = sat(commitment
        .get("fundingAmount")
        .or_else(|| commitment.pointer("/fundingTx/amountSatoshis")));
    let to_local_msat = sat(commitment.pointer("/localCommit/spec/toLocal"));
    ChannelInfo {
        remote_pubkey: c
            .get("nodeId")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        channel_point: funding,
        capacity_sat: capacity,
        local_balance_sat: to_local_msat / 1000,
        active: state == "NORMAL",
    }
}

fn state(c: &Value) -> &str {
    c.get("state").and_then(Value::as_str).unwrap_or("")
}

/// What a closing channel's data holds once a commitment (not a mutual close) is
/// published, by us or by the peer.
const FORCED: [&str; 5] = [
    "localCommitPublished",
    "remoteCommitPublished",
    "nextRemoteCommitPublished",
    "futureRemoteCommitPublished",
    "revokedCommitPublished",
];

/// The channels at the end of a run with faults: open ones (any state before
/// closing) with the HTLCs of their active commitment, and those force-closed
/// (CLOSING or CLOSED with a commitment published). Eclair's `channels` drops a
/// channel once it is closed for good.
pub(super) fn channel_health(channels: &[Value]) -> ChannelHealth {
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let closing = |c: &&Value| {
        matches!(
            state(c),
            "SHUTDOWN" | "NEGOTIATING" | "NEGOTIATING_SIMPLE" | "CLOSING" | "CLOSED"
        )
    };
    let forced = |c: &&Value| {
        matches!(state(c), "CLOSING" | "CLOSED")
            && FORCED.iter().any(|k| {
                c.pointer(&format!("/data/{k}"))
                    .is_some_and(|v| !v.is_null() && v.as_array().is_none_or(|a| !a.is_empty()))
            })
    };
    let open: Vec<&Value> = channels.iter().filter(|c| !closing(c)).collect();
    let htlcs = |c: &&Value| {
        c.pointer("/data/commitments/active/0/localCommit/spec/htlcs")
            .and_then(Value::as_array)
            .map_or(0, Vec::len)
    };
    ChannelHealth {
        channels: count(open.len()),
        active: count(open.iter().filter(|c| state(c) == "NORMAL").count()),
        pending_htlcs: Some(count(open.iter().map(htlcs).sum())),
        force_closed: count(channels.iter().filter(forced).count()),
    }
}
