//! The rules a node keeps when channels are opened with it, which validation and setup
//! follow: how large a channel may be, what it must hold on chain to accept one, how
//! many it accepts at once, how many HTLCs a channel carries, and whether it dials a
//! peer when asked to connect.

/// How channels are opened with a node of one implementation. Plain data: every
/// implementation has an answer to each, so none is a capability it may lack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChannelRules {
    /// Channels above this many satoshis need `flag` on both ends, if the
    /// implementation caps channel size: `(largest without it, flag)`.
    pub large_channel_flag: Option<(u64, &'static str)>,
    /// Satoshis the node must hold on chain for each channel it accepts (setup funds
    /// the accepting node with them): LDK refuses an inbound anchor channel without
    /// that reserve.
    pub inbound_channel_reserve_sat: u64,
    /// How many channels from one peer the node accepts while their funding is
    /// unconfirmed, if it caps them (setup then opens the rest after a block).
    pub max_unconfirmed_inbound_channels: Option<u32>,
    /// The most HTLCs the node accepts at once on a channel, by default or as its
    /// `args:` set it ([`ChannelRules::max_accepted_htlcs`]).
    pub htlc_limit: HtlcLimit,
    /// True when the node loses an inbound open that arrives while another peer's is
    /// being checked (setup then lets one peer at a time open to it).
    pub one_inbound_open_at_a_time: bool,
    /// True when `connect_peer` dials the peer at once. False where the client only
    /// notes the address for the channel's opening (ldk-server at its pin has no
    /// call that dials): such a node, restored from a snapshot, dials only the
    /// addresses it kept, which were the saving run's.
    pub dials_on_request: bool,
}

/// A node's `max_accepted_htlcs`: its default, and the flag of its command line that
/// sets another, if there is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HtlcLimit {
    /// The value without the flag.
    pub default: u32,
    /// The flag's prefix up to its value (`--max-concurrent-htlcs=`); None where the
    /// implementation takes no setting for it.
    pub flag: Option<&'static str>,
    /// The smallest value of `flag` the node opens a channel with, where it refuses
    /// less at opening (validation refuses it first, at the node); None where no
    /// such floor is known.
    pub min: Option<u32>,
}

impl ChannelRules {
    /// The most HTLCs the node accepts at once on a channel (`max_accepted_htlcs`),
    /// given its `args:` (an attack's `share:` is of the smallest in the scenario):
    /// the last value of the flag there, else the default.
    pub fn max_accepted_htlcs(&self, args: &[String]) -> u32 {
        let HtlcLimit { default, flag, .. } = self.htlc_limit;
        flag.and_then(|prefix| flag_value(args, prefix))
            .unwrap_or(default)
    }
}

/// The number after `prefix` in the last of `args` that starts with it.
fn flag_value(args: &[String], prefix: &str) -> Option<u32> {
    (args.iter().rev())
        .find_map(|a| a.strip_prefix(prefix))
        .and_then(|v| v.trim().parse().ok())
}
