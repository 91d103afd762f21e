//! `workload: activity:`: payments across the whole network instead of senders to one
//! receiver. Every node (or a share of them) pays random peers; amounts come from a
//! distribution; `concurrency:` and `rate:` count per sender.

use super::dist::Dist;
use super::error::Ctx;
use super::error::ScenarioError;
use super::groups::Groups;
use super::raw::{RawActivity, RawShare};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use serde_saphyr::Spanned;

/// The largest payment amount a distribution may give: 0.1 BTC.
const MAX_AMOUNT_MSAT: f64 = 1e10;

/// Network-wide activity, validated.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Activity {
    /// Instance names of the paying nodes (every other node is a possible peer).
    pub senders: Vec<String>,
    /// Every node of the network: the peers a sender picks from.
    pub peers: Vec<String>,
    pub amount_msat: Dist,
    pub seed: u64,
}

pub(super) fn validate(
    ctx: &Ctx,
    groups: &Groups,
    raw: &Spanned<RawActivity>,
    nodes: &[(Spanned<String>, super::raw::RawNode)],
    kind: &Spanned<super::raw::RawPaymentKind>,
) -> Result<Activity, ScenarioError> {
    if matches!(kind.value, super::raw::RawPaymentKind::InvoicePregenerated) {
        return Err(ctx.error(
            &kind.referenced,
            "kind: invoice-pregenerated with activity: is not supported",
            "write kind: invoice (each payment's peer and amount are picked when it starts, so no invoice can be made before)",
        ));
    }
    // Every node may pay or be paid: keysend needs it on all of them.
    if matches!(kind.value, super::raw::RawPaymentKind::Keysend) {
        for (name, node) in nodes {
            let implementation = node.implementation.value;
            if let Some(why) =
                crate::node::driver(implementation).missing(crate::node::Feature::Keysend)
            {
                return Err(ctx.error(
                    &kind.referenced,
                    format!(
                        "kind: keysend, but node {} is {implementation}: {why}",
                        name.value
                    ),
                    "write kind: invoice (with activity:, every node may be paid)",
                ));
            }
        }
    }
    let peers: Vec<String> = (groups.order.iter())
        .flat_map(|(_, instances)| instances.iter().cloned())
        .collect();
    if peers.len() < 2 {
        return Err(ctx.error(
            &raw.referenced,
            "activity: needs at least two nodes",
            "add nodes (or a topology:) so senders have peers to pay",
        ));
    }
    let seed = raw.value.seed.unwrap_or(1);
    let share = match &raw.value.senders {
        None => 1.0,
        Some(s) => match &s.value {
            RawShare::All => 1.0,
            RawShare::Share(v) if *v > 0.0 && *v <= 1.0 => *v,
            RawShare::Share(v) => {
                return Err(ctx.error(
                    &s.referenced,
                    format!("activity senders: {v} is not a share of the nodes"),
                    "write senders: all, or a share above 0 and at most 1, e.g. senders: 0.5",
                ));
            }
            RawShare::Word(w) => {
                return Err(ctx.error(
                    &s.referenced,
                    format!("activity senders: \"{w}\" is neither all nor a share"),
                    "write senders: all, or a share above 0 and at most 1, e.g. senders: 0.5",
                ));
            }
        },
    };
    let count = ((share * peers.len() as f64).round() as usize).clamp(1, peers.len());
    let mut senders = peers.clone();
    if count < peers.len() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        senders.shuffle(&mut rng);
        senders.truncate(count);
        // Keep file order among the chosen, for stable reports.
        senders.sort_by_key(|s| peers.iter().position(|p| p == s));
    }
    let amount_msat = match &raw.value.amount_msat {
        Some(a) => Dist::validate(ctx, a, "activity amount_msat", MAX_AMOUNT_MSAT)?,
        None => Dist::Fixed { value: 1_000.0 },
    };
    Ok(Activity {
        senders,
        peers,
        amount_msat,
        seed,
    })
}

/// The workload with the activity's parties, and `concurrency:` / `rate:` (given per
/// sender) turned into the whole network's.
pub(super) fn apply(mut workload: super::Workload, activity: Option<&Activity>) -> super::Workload {
    let Some(activity) = activity else {
        return workload;
    };
    let n = activity.senders.len() as u32;
    workload.senders = activity.senders.clone();
    workload.receivers = activity.peers.clone();
    workload.amount_msat = activity.amount_msat.typical().round().max(1.0) as u64;
    match &mut workload.load {
        super::Load::Closed { concurrency } => *concurrency = concurrency.saturating_mul(n),
        super::Load::Open { phases } => {
            for phase in phases {
                phase.from_rate *= f64::from(n);
                phase.to_rate *= f64::from(n);
            }
        }
    }
    workload
}
