//! Reading the nodes' ledgers around a load: once before it (the mark) and once after
//! it, when the payments the tool left indeterminate have had time to end, so
//! [`report::reconciliation`] can check the tool's counts against the nodes'.

use super::bring_up::Network;
use crate::metrics::Summary;
use crate::metrics::payments::Resolution;
use crate::node::{LightningNode, PaymentHash, PaymentLedger, SentStatus};
use crate::report::reconciliation::{self, ByHash, LedgerRead, Reconciliation};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

/// Each node's ledger before the load, by name (what could be read).
pub(super) type Marks = BTreeMap<String, Result<Option<PaymentLedger>, String>>;

/// How often the senders are asked again while payments are still in flight.
const POLL: Duration = Duration::from_millis(200);
/// The longest the reading waits for payments in flight to end.
const MAX_WAIT: Duration = Duration::from_secs(30);
/// The longest a reading waits for the ledgers to stop changing. A node may record a
/// payment a moment after it told the tool the payment ended (ldk-server writes its
/// payment list when it handles the node's event), so one reading right after setup
/// or the load can miss the last payment: two equal readings [`POLL`] apart are
/// taken as settled.
const MAX_SETTLE: Duration = Duration::from_secs(5);

async fn read_all(nodes: &[(String, Arc<dyn LightningNode>)]) -> Marks {
    let reads = nodes.iter().map(|(name, node)| async move {
        let read = match node.own_ledger() {
            Some(ledger) => ledger.payment_ledger().await.map(Some),
            None => Ok(None),
        };
        let read = read.map_err(|e| format!("{e:#}"));
        (name.clone(), read)
    });
    futures::future::join_all(reads).await.into_iter().collect()
}

fn clients(network: &Network) -> Vec<(String, Arc<dyn LightningNode>)> {
    (network.nodes.iter())
        .map(|(name, r)| (name.clone(), r.node.clone()))
        .collect()
}

/// Every node's ledger before the load, once settled.
pub(super) async fn mark(network: &Network) -> Marks {
    let nodes = clients(network);
    let first = read_all(&nodes).await;
    settle(&nodes, first).await
}

/// Reads again until two readings agree (or [`MAX_SETTLE`] passes), from `last`.
async fn settle(nodes: &[(String, Arc<dyn LightningNode>)], mut last: Marks) -> Marks {
    let deadline = tokio::time::Instant::now() + MAX_SETTLE;
    while tokio::time::Instant::now() < deadline {
        tokio::time::sleep(POLL).await;
        let next = read_all(nodes).await;
        if next == last {
            break;
        }
        last = next;
    }
    last
}

/// After the load: reads the ledgers again (waiting, up to the payment timeout or
/// [`MAX_WAIT`], while the tool left payments indeterminate and a sender still has
/// payments in flight), checks `summary`'s counts against them and sets its
/// `mismatches`. None when the load made no payment.
pub(super) async fn after_load(
    network: &Network,
    marks: &Marks,
    summary: &mut Summary,
    payment_timeout: Duration,
) -> Option<Reconciliation> {
    if summary
        .routes
        .iter()
        .all(|r| r.ok + r.failed + r.indeterminate == 0)
    {
        return None;
    }
    let waiting = summary.routes.iter().any(|r| r.indeterminate > 0);
    let deadline = tokio::time::Instant::now() + payment_timeout.min(MAX_WAIT);
    let nodes = clients(network);
    let mut now = read_all(&nodes).await;
    while waiting && in_flight(&now) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(POLL).await;
        now = read_all(&nodes).await;
    }
    let now = settle(&nodes, now).await;
    let ledgers: BTreeMap<String, LedgerRead> = (now.into_iter())
        .map(|(name, after)| {
            let before = marks.get(&name).cloned().unwrap_or(Ok(None));
            let read = match (before, after) {
                (Ok(Some(before)), Ok(Some(after))) => {
                    LedgerRead::Read(without_own(after.since(&before), &name, summary))
                }
                (Err(why), _) | (_, Err(why)) => LedgerRead::Failed(why),
                _ => LedgerRead::Unsupported,
            };
            (name, read)
        })
        .collect();
    let (by_hash, resolved) = ask_by_hash(&nodes, summary).await;
    if let Some(log) = &summary.payment_log
        && let Err(e) = log.write_resolutions(&resolved)
    {
        crate::lines::errln!("warning: the resolutions in {}: {e}", log.path.display());
    }
    let checked = reconciliation::reconcile(&summary.routes, &ledgers, &by_hash);
    // A node whose ledger was not read leaves the run unreconciled: no count (never 0),
    // so `max_mismatches` fails rather than pass on what was not looked at.
    summary.mismatches = checked.unread.is_empty().then_some(checked.mismatches);
    Some(checked)
}

/// A ledger less the rebalancing node's payments to itself (`workload: rebalance:`),
/// which its ledger counts as sent and received but no route of the load made.
fn without_own(ledger: PaymentLedger, node: &str, summary: &Summary) -> PaymentLedger {
    let Some(r) = summary.rebalance.as_ref().filter(|r| r.node == node) else {
        return ledger;
    };
    ledger.since(&PaymentLedger {
        sent_succeeded: r.succeeded,
        sent_failed: r.failed_by_reason.values().sum(),
        sent_in_flight: 0,
        fees_paid_msat: r.fees_paid_msat,
        received: r.succeeded,
        received_msat: r.moved_msat,
    })
}

/// Asks each sender what became of its indeterminate payments whose hash the tool
/// knows (from the payment log): per sender the counts, and per hash the
/// resolution. A sender that cannot tell leaves them to the count.
async fn ask_by_hash(
    nodes: &[(String, Arc<dyn LightningNode>)],
    summary: &Summary,
) -> (BTreeMap<String, ByHash>, HashMap<PaymentHash, Resolution>) {
    let mut asked: BTreeMap<&str, Vec<PaymentHash>> = BTreeMap::new();
    for p in (summary.payment_log.iter()).flat_map(|log| &log.indeterminate) {
        asked.entry(&p.sender).or_default().push(p.payment_hash);
    }
    let reads = (nodes.iter())
        .filter_map(|(name, node)| Some((name, node, asked.get(name.as_str())?)))
        .map(|(name, node, hashes)| async move {
            let Some(ledger) = node.own_ledger() else {
                return (name.clone(), HashMap::new());
            };
            let read = ledger.sent_statuses(hashes).await;
            if let Err(e) = &read {
                crate::lines::errln!("warning: {name}: payments by hash not read: {e:#}");
            }
            (name.clone(), read.unwrap_or_default())
        });
    let mut by_hash = BTreeMap::new();
    let mut resolved = HashMap::new();
    for (name, statuses) in futures::future::join_all(reads).await {
        let counts: &mut ByHash = by_hash.entry(name).or_default();
        for (hash, status) in statuses {
            let resolution = match status {
                SentStatus::Succeeded => (&mut counts.ok, Resolution::Ok),
                SentStatus::Failed => (&mut counts.failed, Resolution::Failed),
                SentStatus::InFlight => (&mut counts.in_flight, Resolution::InFlight),
            };
            *resolution.0 += 1;
            resolved.insert(hash, resolution.1);
        }
    }
    (by_hash, resolved)
}

fn in_flight(ledgers: &Marks) -> bool {
    (ledgers.values()).any(|l| matches!(l, Ok(Some(l)) if l.sent_in_flight > 0))
}
