//! What faults left behind: one line per fault for the terminal, and the channels of
//! every node at the end (pending HTLCs, force closes).

use super::FaultRecord;
use crate::node::{ChannelHealth, HealthCheck, LightningNode};
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;

/// One node's channels at the end of a run with faults (`channel_health[]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeHealth {
    pub node: String,
    /// None: the node did not answer (`error`), or its client cannot tell (no
    /// error). Read from LND, Core Lightning, Eclair and LDK alike
    /// (`HealthCheck::channel_health`).
    pub health: Option<ChannelHealth>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Reads each node's channels, by name.
pub async fn channel_health<'a>(
    nodes: impl Iterator<Item = &'a Arc<dyn LightningNode>>,
) -> Vec<NodeHealth> {
    let mut out = Vec::new();
    for node in nodes {
        let (health, error) = match node.health_check() {
            Some(check) => read_health(check).await,
            None => (None, None),
        };
        out.push(NodeHealth {
            node: node.name().to_string(),
            health,
            error,
        });
    }
    out.sort_by(|a, b| a.node.cmp(&b.node));
    out
}

/// One node's channels within 10 s, or why not.
async fn read_health(check: &dyn HealthCheck) -> (Option<ChannelHealth>, Option<String>) {
    let read = tokio::time::timeout(Duration::from_secs(10), check.channel_health()).await;
    match read {
        Ok(Ok(h)) => (Some(h), None),
        Ok(Err(e)) => (None, Some(e.to_string())),
        Err(_) => (None, Some("no answer within 10 s".to_string())),
    }
}

fn secs(s: Option<f64>) -> String {
    s.map_or("-".into(), |s| format!("{s:.1} s"))
}

/// `fault kill bob at 20.1 s, lifted 25.1 s: TPS 31.0 before, 0.2 during, 28.7 after;
/// recovered 3.0 s after; 12 failed (no_route 12)`.
pub fn describe(r: &FaultRecord) -> String {
    let Some(began) = r.began_s else {
        return format!("fault {}: did not begin (the load ended first)", r.label);
    };
    let w = &r.windows;
    let tps = |x: &Option<super::windows::Window>| {
        x.as_ref().map_or("-".into(), |w| format!("{:.1}", w.tps))
    };
    let mut line = format!(
        "fault {} at {began:.1} s, lifted {}: TPS {} before, {} during, {} after; ",
        r.label,
        secs(r.ended_s),
        tps(&w.before),
        tps(&w.during),
        tps(&w.after)
    );
    line += &match w.recovered_after_s {
        Some(s) => format!("recovered {s:.1} s after"),
        None if r.ended_s.is_some() => "not recovered within the load".into(),
        None => "not lifted".into(),
    };
    let failed: Vec<String> = [&w.during, &w.after]
        .into_iter()
        .flatten()
        .flat_map(|w| w.failures_by_reason.iter())
        .fold(
            std::collections::BTreeMap::<&str, u64>::new(),
            |mut m, (k, n)| {
                *m.entry(k.as_str()).or_default() += n;
                m
            },
        )
        .into_iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    if !failed.is_empty() {
        line += &format!("; failed during and after: {}", failed.join(", "));
    }
    if let Some(b) = &r.node_back {
        line += &format!(
            "; {} answered {:.1} s and had its channels {:.1} s after its start",
            r.target, b.rpc_s, b.channels_s
        );
    }
    if let Some(b) = &r.chain_back {
        line += &format!(
            "; the chain answered {:.1} s after its start ({} blocks lost), every node had \
             height {} at {:.1} s and its channels at {:.1} s",
            b.rpc_s, b.lost_blocks, b.height, b.synced_s, b.channels_s
        );
    }
    if let Some(e) = &r.error {
        // Printed on the terminal at the end: errors quote node logs.
        line += &format!("; error: {}", crate::redact::redact_text(e));
    }
    line
}
