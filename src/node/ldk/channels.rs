//! ldk-server's channels in our terms: each channel for setup and the load
//! (`ListChannels`), and what faults left on them at the end of a run (with
//! `GetBalances`).

use super::LdkNode;
use super::proto::{self, Balance};
use crate::node::{ChannelHealth, ChannelInfo, NodeError};
use std::collections::HashSet;

impl LdkNode {
    pub(super) async fn channels(&self) -> Result<Vec<proto::Channel>, NodeError> {
        let list: proto::ListChannelsResponse = self
            .request("ListChannels", &proto::ListChannelsRequest {})
            .await?;
        Ok(list.channels)
    }
}

/// One channel of `ListChannels` in our terms: active once usable (ready, peer connected).
pub(super) fn channel_info(c: &proto::Channel) -> ChannelInfo {
    ChannelInfo {
        remote_pubkey: c.counterparty_node_id.clone(),
        channel_point: c
            .funding_txo
            .as_ref()
            .map_or_else(String::new, |o| format!("{}:{}", o.txid, o.vout)),
        capacity_sat: c.channel_value_sats,
        local_balance_sat: c.outbound_capacity_msat / 1000,
        active: c.is_usable,
    }
}

/// The channels at the end of a run with faults: the open ones and how many are
/// usable; as closed, the channels with a balance that `ListChannels` no longer lists
/// (LDK drops a channel from its list once it is closed, and keeps a balance for it
/// until its funds are back on chain, shown as claimable on close until the closing
/// transaction confirms). ldk-server tells neither how a channel was closed (the tool
/// closes none cooperatively during a run) nor how many HTLCs are pending (their
/// amounts only): `pending_htlcs` is None.
pub(super) fn channel_health(
    open: &[proto::Channel],
    balances: &[proto::LightningBalance],
) -> ChannelHealth {
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let open_ids: HashSet<&str> = open.iter().map(|c| c.channel_id.as_str()).collect();
    let closed: HashSet<&str> = (balances.iter())
        .filter_map(|b| match b.balance_type.as_ref()? {
            Balance::ClaimableOnChannelClose(c)
            | Balance::ClaimableAwaitingConfirmations(c)
            | Balance::ContentiousClaimable(c)
            | Balance::MaybeTimeoutClaimableHtlc(c)
            | Balance::MaybePreimageClaimableHtlc(c)
            | Balance::CounterpartyRevokedOutputClaimable(c) => Some(c.channel_id.as_str()),
        })
        .filter(|id| !open_ids.contains(id))
        .collect();
    ChannelHealth {
        channels: count(open.len()),
        active: count(open.iter().filter(|c| c.is_usable).count()),
        pending_htlcs: None,
        force_closed: count(closed.len()),
    }
}
