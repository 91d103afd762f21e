//! Reconciliation: the tool's counts beside what the nodes' own ledgers say the load
//! did (read before and after it), the indeterminate payments resolved where the
//! senders know their fate, and every disagreement counted as a mismatch.
//!
//! Resolution is by payment hash first: an indeterminate payment whose hash the tool
//! knows and its sender has a record of becomes ok or failed as the sender says (or
//! stays unresolved while in flight). The others are resolved by count: a sender
//! whose ledger shows `k` more successes than the tool counted (and than resolved by
//! hash) resolves `k` of them to ok; the rest resolve to failed unless the sender
//! still has payments in flight. Late successes have no exact latency, so they are
//! counted but stay out of TPS and the percentiles.

use crate::metrics::RouteCount;
use crate::node::PaymentLedger;
use serde::Serialize;
use std::collections::BTreeMap;

/// What one node's ledger gave: what the load did on it, or why it is unknown.
#[derive(Debug, Clone, PartialEq)]
pub enum LedgerRead {
    /// The load's part of the ledger (after minus before).
    Read(PaymentLedger),
    /// The client cannot read this implementation's ledger.
    Unsupported,
    /// Reading failed (the message says why).
    Failed(String),
}

/// The report's `reconciliation` section.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Reconciliation {
    pub senders: Vec<SenderCheck>,
    pub receivers: Vec<ReceiverCheck>,
    /// Payments the tool and the nodes disagree on, summed over senders and
    /// receivers (a lost or a double-counted payment); 0 when they agree.
    pub mismatches: u64,
    /// Payments the tool left indeterminate, and what became of them.
    pub indeterminate: u64,
    pub resolved_ok: u64,
    pub resolved_failed: u64,
    pub unresolved: u64,
    /// Of the resolved, those resolved one by one by their payment hash (the rest
    /// by count).
    #[serde(default)]
    pub resolved_by_hash: u64,
    /// Routing fees paid, summed from the senders' ledgers (msat); absent when no
    /// sender's ledger was read.
    pub fees_paid_msat: Option<u64>,
    /// Nodes whose ledger could not be read, each with why: they are not checked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unread: Vec<String>,
}

/// One sender: the tool's counts and its ledger's.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct SenderCheck {
    pub node: String,
    pub tool_ok: u64,
    pub tool_failed: u64,
    pub tool_indeterminate: u64,
    /// The ledger's succeeded, failed and still-in-flight payments over the load,
    /// and the fees paid (absent when unread).
    pub node_succeeded: Option<u64>,
    pub node_failed: Option<u64>,
    pub node_in_flight: Option<u64>,
    pub fees_paid_msat: Option<u64>,
    pub resolved_ok: u64,
    pub resolved_failed: u64,
    pub unresolved: u64,
    /// Of the resolved, those resolved by their payment hash.
    #[serde(default)]
    pub resolved_by_hash: u64,
    pub mismatches: u64,
}

/// What a sender's records say of its indeterminate payments asked about by hash
/// (those it has no record of are not counted here).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ByHash {
    pub ok: u64,
    pub failed: u64,
    pub in_flight: u64,
}

/// One receiver: the successes the tool counted to it and the payments it settled.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct ReceiverCheck {
    pub node: String,
    pub tool_ok: u64,
    pub tool_indeterminate: u64,
    /// Payments received (invoices settled, keysends) over the load; absent when unread.
    pub node_received: Option<u64>,
    pub received_msat: Option<u64>,
    pub mismatches: u64,
}

/// How far `actual` falls outside `low..=high` (0 inside).
fn outside(actual: u64, low: u64, high: u64) -> u64 {
    low.saturating_sub(actual) + actual.saturating_sub(high)
}

/// Sums the routes' counts by the node at one end.
fn by_node(routes: &[RouteCount], end: fn(&RouteCount) -> &str) -> BTreeMap<&str, RouteCount> {
    let mut nodes: BTreeMap<&str, RouteCount> = BTreeMap::new();
    for r in routes {
        let n = nodes.entry(end(r)).or_default();
        n.ok += r.ok;
        n.failed += r.failed;
        n.indeterminate += r.indeterminate;
    }
    nodes
}

fn sender(
    node: &str,
    tool: &RouteCount,
    ledger: Option<&PaymentLedger>,
    hashed: ByHash,
) -> SenderCheck {
    // By hash first; what is left over is resolved by count.
    let rest = (tool.indeterminate).saturating_sub(hashed.ok + hashed.failed + hashed.in_flight);
    let mut check = SenderCheck {
        node: node.to_string(),
        tool_ok: tool.ok,
        tool_failed: tool.failed,
        tool_indeterminate: tool.indeterminate,
        node_succeeded: ledger.map(|l| l.sent_succeeded),
        node_failed: ledger.map(|l| l.sent_failed),
        node_in_flight: ledger.map(|l| l.sent_in_flight),
        fees_paid_msat: ledger.map(|l| l.fees_paid_msat),
        resolved_ok: hashed.ok,
        resolved_failed: hashed.failed,
        unresolved: hashed.in_flight + rest,
        resolved_by_hash: hashed.ok + hashed.failed,
        mismatches: 0,
    };
    if let Some(l) = ledger {
        let low = tool.ok + hashed.ok;
        let high = low + rest;
        check.mismatches = outside(l.sent_succeeded, low, high);
        let by_count_ok = l.sent_succeeded.clamp(low, high) - low;
        let left = rest - by_count_ok;
        let in_flight = left.min(l.sent_in_flight.saturating_sub(hashed.in_flight));
        check.resolved_ok += by_count_ok;
        check.resolved_failed += left - in_flight;
        check.unresolved = hashed.in_flight + in_flight;
    }
    check
}

fn receiver(node: &str, tool: &RouteCount, ledger: Option<&PaymentLedger>) -> ReceiverCheck {
    let high = tool.ok + tool.indeterminate;
    ReceiverCheck {
        node: node.to_string(),
        tool_ok: tool.ok,
        tool_indeterminate: tool.indeterminate,
        node_received: ledger.map(|l| l.received),
        received_msat: ledger.map(|l| l.received_msat),
        mismatches: ledger.map_or(0, |l| outside(l.received, tool.ok, high)),
    }
}

/// Checks the tool's per-route counts against the nodes' ledgers over the load.
/// `by_hash` holds, per sender, what its records say of the indeterminate payments
/// asked about by hash.
pub fn reconcile(
    routes: &[RouteCount],
    ledgers: &BTreeMap<String, LedgerRead>,
    by_hash: &BTreeMap<String, ByHash>,
) -> Reconciliation {
    let mut unread = Vec::new();
    let mut ledger = |name: &str| match ledgers.get(name) {
        Some(LedgerRead::Read(l)) => Some(*l),
        other => {
            let why = match other {
                Some(LedgerRead::Failed(why)) => why.as_str(),
                _ => "its client cannot read the node's payments",
            };
            let line = format!("{name}: {why}");
            if !unread.contains(&line) {
                unread.push(line);
            }
            None
        }
    };
    let senders: Vec<SenderCheck> = (by_node(routes, |r| &r.sender).iter())
        .map(|(name, tool)| {
            let hashed = by_hash.get(*name).copied().unwrap_or_default();
            sender(name, tool, ledger(name).as_ref(), hashed)
        })
        .collect();
    let receivers: Vec<ReceiverCheck> = (by_node(routes, |r| &r.receiver).iter())
        .map(|(name, tool)| receiver(name, tool, ledger(name).as_ref()))
        .collect();
    let sum = |f: fn(&SenderCheck) -> u64| senders.iter().map(f).sum::<u64>();
    let fees: Vec<u64> = senders.iter().filter_map(|s| s.fees_paid_msat).collect();
    Reconciliation {
        mismatches: sum(|s| s.mismatches) + receivers.iter().map(|r| r.mismatches).sum::<u64>(),
        indeterminate: sum(|s| s.tool_indeterminate),
        resolved_ok: sum(|s| s.resolved_ok),
        resolved_failed: sum(|s| s.resolved_failed),
        unresolved: sum(|s| s.unresolved),
        resolved_by_hash: sum(|s| s.resolved_by_hash),
        fees_paid_msat: (!fees.is_empty()).then(|| fees.iter().sum()),
        senders,
        receivers,
        unread,
    }
}

impl Reconciliation {
    /// The lines the headless output prints: one summary, then one `MISMATCH` line
    /// per node that disagrees, and the nodes not checked.
    pub fn lines(&self) -> Vec<String> {
        let fees = self
            .fees_paid_msat
            .map_or_else(|| "unknown".to_string(), |f| format!("{f} msat"));
        let mut lines = vec![format!(
            "reconciliation: {} mismatches; {} indeterminate: {} resolved ok (counted, \
             without latency), {} resolved failed, {} unresolved ({} resolved by payment \
             hash, the rest by count); fees paid {fees}",
            self.mismatches,
            self.indeterminate,
            self.resolved_ok,
            self.resolved_failed,
            self.unresolved,
            self.resolved_by_hash
        )];
        for s in self.senders.iter().filter(|s| s.mismatches > 0) {
            lines.push(format!(
                "MISMATCH sender {}: the tool counted {} ok and {} indeterminate, the node's \
                 ledger shows {} succeeded",
                s.node,
                s.tool_ok,
                s.tool_indeterminate,
                s.node_succeeded.unwrap_or(0)
            ));
        }
        for r in self.receivers.iter().filter(|r| r.mismatches > 0) {
            lines.push(format!(
                "MISMATCH receiver {}: the tool counted {} ok and {} indeterminate to it, the \
                 node's ledger shows {} received",
                r.node,
                r.tool_ok,
                r.tool_indeterminate,
                r.node_received.unwrap_or(0)
            ));
        }
        for u in &self.unread {
            lines.push(format!("reconciliation: not checked: {u}"));
        }
        lines
    }
}

/// A count the node's ledger gave, or `?` when it was not read.
fn known(n: Option<u64>) -> String {
    n.map_or_else(|| "?".to_string(), |n| n.to_string())
}

/// The rows of the report's reconciliation table: node, role, the tool's ok / failed /
/// indeterminate, the node's count, resolved, fees, mismatches.
pub fn rows(r: &Reconciliation) -> Vec<[String; 7]> {
    let senders = r.senders.iter().map(|s| {
        [
            s.node.clone(),
            "sender".to_string(),
            format!(
                "{} / {} / {}",
                s.tool_ok, s.tool_failed, s.tool_indeterminate
            ),
            format!(
                "{} succeeded, {} failed, {} in flight",
                known(s.node_succeeded),
                known(s.node_failed),
                known(s.node_in_flight)
            ),
            format!(
                "{} ok, {} failed, {} unresolved ({} by hash)",
                s.resolved_ok, s.resolved_failed, s.unresolved, s.resolved_by_hash
            ),
            s.fees_paid_msat
                .map_or_else(|| "?".to_string(), |f| format!("{f} msat")),
            s.mismatches.to_string(),
        ]
    });
    let receivers = r.receivers.iter().map(|x| {
        [
            x.node.clone(),
            "receiver".to_string(),
            format!("{} / - / {}", x.tool_ok, x.tool_indeterminate),
            format!("{} received", known(x.node_received)),
            String::new(),
            String::new(),
            x.mismatches.to_string(),
        ]
    });
    senders.chain(receivers).collect()
}

/// The reconciliation section of summary.md; empty when the load was not reconciled.
pub fn markdown(r: Option<&Reconciliation>) -> String {
    use std::fmt::Write as _;
    let Some(r) = r else {
        return String::new();
    };
    // Each line flush left: indented after a blank line, Markdown makes it a code
    // block, and the table would paste into an issue as text.
    let mut out = String::from(concat!(
        "\nReconciliation (the tool's counts against the nodes' own ledgers; warm-up ",
        "included; late successes are counted here, without latency):\n\n",
        "| node | role | tool ok / failed / indeterminate | node's ledger | ",
        "indeterminate resolved | fees paid | mismatches |\n",
        "|---|---|---|---|---|---|---|\n",
    ));
    for row in rows(r) {
        let cells: Vec<String> = row.iter().map(|c| super::format::cell(c)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out.push('\n');
    for line in r.lines() {
        let _ = writeln!(out, "{}  ", super::format::cell(&line));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(sender: &str, receiver: &str, ok: u64, failed: u64, ind: u64) -> RouteCount {
        RouteCount {
            sender: sender.into(),
            receiver: receiver.into(),
            ok,
            failed,
            indeterminate: ind,
        }
    }

    fn read(sent_succeeded: u64, in_flight: u64, received: u64) -> LedgerRead {
        LedgerRead::Read(PaymentLedger {
            sent_succeeded,
            sent_in_flight: in_flight,
            fees_paid_msat: sent_succeeded * 2,
            received,
            ..PaymentLedger::default()
        })
    }

    #[test]
    fn the_markdown_section_is_a_table_flush_left() {
        let routes = [route("a", "c", 10, 1, 3)];
        let ledgers = BTreeMap::from([
            ("a".to_string(), read(12, 0, 0)),
            ("c".to_string(), read(0, 0, 12)),
        ]);
        let r = reconcile(&routes, &ledgers, &BTreeMap::new());
        let md = markdown(Some(&r));
        assert!(md.lines().all(|l| !l.starts_with(' ')), "{md}");
        assert!(!md.contains("  late"), "{md}");
        let table: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(table.len(), 4, "header, rule, sender, receiver: {md}");
        let columns = |l: &str| l.matches('|').count();
        assert!(table.iter().all(|l| columns(l) == 8), "{md}");
        assert!(table[1].starts_with("|---|"), "{md}");
    }

    #[test]
    fn agreeing_counts_resolve_the_indeterminate_and_sum_the_fees() {
        let routes = [route("a", "c", 10, 1, 3), route("b", "c", 5, 0, 0)];
        let ledgers = BTreeMap::from([
            ("a".to_string(), read(12, 0, 0)),
            ("b".to_string(), read(5, 0, 0)),
            ("c".to_string(), read(0, 0, 17)),
        ]);
        let r = reconcile(&routes, &ledgers, &BTreeMap::new());
        assert_eq!(r.mismatches, 0);
        assert_eq!(
            (r.indeterminate, r.resolved_ok, r.resolved_failed),
            (3, 2, 1)
        );
        assert_eq!(r.fees_paid_msat, Some(34));
        assert_eq!(r.receivers[0].node_received, Some(17));
        assert!(r.lines().iter().all(|l| !l.starts_with("MISMATCH")));
    }

    #[test]
    fn indeterminate_payments_known_by_hash_resolve_one_by_one() {
        // Two indeterminate payments: one settled, one failed at the sender.
        let routes = [route("a", "c", 10, 0, 2)];
        let ledgers = BTreeMap::from([
            ("a".to_string(), read(11, 0, 0)),
            ("c".to_string(), read(0, 0, 11)),
        ]);
        let hashed = ByHash {
            ok: 1,
            failed: 1,
            in_flight: 0,
        };
        let by_hash = BTreeMap::from([("a".to_string(), hashed)]);
        let r = reconcile(&routes, &ledgers, &by_hash);
        assert_eq!((r.resolved_ok, r.resolved_failed, r.unresolved), (1, 1, 0));
        assert_eq!((r.resolved_by_hash, r.mismatches), (2, 0));
    }

    #[test]
    fn a_hash_the_sender_says_succeeded_beyond_its_count_is_a_mismatch() {
        // The sender says by hash that both succeeded, but its ledger counts one.
        let routes = [route("a", "c", 10, 0, 2)];
        let ledgers = BTreeMap::from([("a".to_string(), read(11, 0, 0))]);
        let hashed = ByHash {
            ok: 2,
            ..ByHash::default()
        };
        let by_hash = BTreeMap::from([("a".to_string(), hashed)]);
        let r = reconcile(&routes, &ledgers, &by_hash);
        assert_eq!(r.senders[0].mismatches, 1);
        assert_eq!(r.resolved_ok, 2);
    }

    #[test]
    fn hashes_in_flight_stay_unresolved_and_the_rest_resolve_by_count() {
        // Four indeterminate: one in flight by hash, three the sender has no record
        // of by hash, of which its counts show one more success.
        let routes = [route("a", "c", 5, 0, 4)];
        let ledgers = BTreeMap::from([("a".to_string(), read(6, 1, 0))]);
        let hashed = ByHash {
            in_flight: 1,
            ..ByHash::default()
        };
        let by_hash = BTreeMap::from([("a".to_string(), hashed)]);
        let r = reconcile(&routes, &ledgers, &by_hash);
        assert_eq!((r.resolved_ok, r.resolved_failed, r.unresolved), (1, 2, 1));
        assert_eq!((r.resolved_by_hash, r.mismatches), (0, 0));
    }

    #[test]
    fn a_lost_or_extra_payment_is_a_mismatch() {
        let routes = [route("a", "c", 10, 0, 1)];
        let ledgers = BTreeMap::from([
            ("a".to_string(), read(13, 0, 0)),
            ("c".to_string(), read(0, 0, 8)),
        ]);
        let r = reconcile(&routes, &ledgers, &BTreeMap::new());
        // The sender has 2 successes beyond ok + indeterminate, the receiver 2 short.
        assert_eq!((r.senders[0].mismatches, r.receivers[0].mismatches), (2, 2));
        assert_eq!(r.mismatches, 4);
        let mismatch_lines = r
            .lines()
            .iter()
            .filter(|l| l.starts_with("MISMATCH"))
            .count();
        assert_eq!(mismatch_lines, 2);
    }

    #[test]
    fn payments_still_in_flight_stay_unresolved_and_unread_nodes_are_named() {
        let routes = [route("a", "c", 4, 0, 3)];
        let ledgers = BTreeMap::from([
            ("a".to_string(), read(5, 1, 0)),
            ("c".to_string(), LedgerRead::Unsupported),
        ]);
        let r = reconcile(&routes, &ledgers, &BTreeMap::new());
        assert_eq!((r.resolved_ok, r.resolved_failed, r.unresolved), (1, 1, 1));
        assert_eq!(r.receivers[0].node_received, None);
        assert_eq!(r.unread.len(), 1, "{:?}", r.unread);
        assert_eq!(r.mismatches, 0);
    }
}
