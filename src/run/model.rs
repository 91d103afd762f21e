//! The report of one load: the scenario, what setup learned, the results and each
//! node's resources, in the model `report/` writes.

use super::RunFacts;
use crate::metrics::{self, Summary};
use crate::report::{self, Report};
use crate::scenario::{Load, Scenario};
use crate::setup::StepLog;
use std::time::SystemTime;

/// Each node's (and the chain's) resource use over the load, into the report.
pub(super) fn add_resources(report: &mut Report, resources: &metrics::ResourceLog) {
    let ok = report.results.ok;
    for node in &mut report.nodes {
        node.resources = resources.report(&node.name, ok);
    }
    report.chain.resources = resources.report(crate::chain::CHAIN_NAME, ok);
    for service in &mut report.services {
        service.resources = resources.report(&service.name, ok);
    }
    let tool = resources.report(metrics::TOOL_READING, ok);
    report.tool_resources = (!tool.is_empty()).then_some(tool);
}

pub(super) fn role(scenario: &Scenario, name: &str) -> &'static str {
    let w = &scenario.workload;
    if w.senders.iter().any(|s| s == name) {
        "sender"
    } else if w.receivers.iter().any(|r| r == name) {
        "receiver"
    } else {
        "router"
    }
}

pub(super) fn describe_load(load: &Load) -> String {
    match load {
        Load::Closed { concurrency } => format!("closed loop, {concurrency} concurrent payers"),
        Load::Open { phases } => format!("open loop, {} phases", phases.len()),
    }
}

pub(super) fn build_report(
    scenario: &Scenario,
    facts: &RunFacts,
    log: &StepLog,
    results: Summary,
    started_at: SystemTime,
    complete: bool,
    interrupted_by: Option<String>,
) -> Report {
    let w = &scenario.workload;
    Report {
        schema_version: report::SCHEMA_VERSION,
        tool: report::Tool::this(),
        complete,
        interrupted_by,
        started_at: humantime::format_rfc3339_seconds(started_at).to_string(),
        finished_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        scenario: report::ScenarioText::of(scenario),
        runtime: facts.runtime.clone(),
        host: report::Host::detect(),
        chain: report::ChainInfo {
            // An external run starts no chain: its nodes' network stands as the version.
            implementation: match crate::runtime::capabilities(scenario.runtime) {
                caps if !caps.starts_nodes => caps.name.to_string(),
                _ => scenario.chain.kind.to_string(),
            },
            version: facts.chain_version.clone(),
            resources: Default::default(),
        },
        nodes: facts
            .nodes
            .iter()
            .map(|(spec, ready, binary)| report::NodeReport {
                name: spec.name.clone(),
                group: spec.group.clone(),
                implementation: spec.implementation.to_string(),
                version: ready.info.version.clone(),
                pubkey: ready.info.pubkey.clone(),
                role: role(scenario, &spec.name).into(),
                binary: binary.display().to_string(),
                database: match spec.external {
                    Some(_) => "unknown (external)".to_string(),
                    None => {
                        crate::node::driver(spec.implementation).database(spec.database, &spec.args)
                    }
                },
                completion: Some(ready.node.completion()),
                ready_s: facts.ready_s.get(&spec.name).copied(),
                resources: Default::default(),
                restart: None,
            })
            .collect(),
        services: facts
            .services
            .iter()
            .map(|s| report::ServiceReport {
                name: s.name.clone(),
                implementation: s.implementation.clone(),
                version: s.version.clone(),
                resources: Default::default(),
            })
            .collect(),
        workload: report::WorkloadReport {
            kind: serde_json::to_value(w.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            amount_msat: w.amount_msat,
            load_model: match w.load {
                Load::Closed { .. } => "closed".into(),
                Load::Open { .. } => "open".into(),
            },
            concurrency: match w.load {
                Load::Closed { concurrency } => Some(concurrency),
                Load::Open { .. } => None,
            },
            senders: w.senders.clone(),
            receivers: w.receivers.clone(),
            stop_after_payments: w.stop.payments,
            stop_after_seconds: w.stop.duration.map(|d| d.as_secs_f64()),
            payment_timeout_seconds: w.payment_timeout.as_secs_f64(),
        },
        setup: log.steps.clone(),
        results,
        thresholds: Vec::new(),
        tool_resources: None,
        snapshot: facts.snapshot.clone(),
        history: None,
        profiling: None,
        links: scenario.links.iter().map(report::LinkReport::of).collect(),
        faults: Vec::new(),
        channel_health: Vec::new(),
        reconciliation: None,
        point: None,
        network: None,
        mainnet_caps: None,
    }
}

/// What the run's spend ledger says, for the report.
pub(super) fn mainnet_caps(ledger: &crate::engine::ledger::SpendLedger) -> report::MainnetCaps {
    let spent = ledger.spent();
    report::MainnetCaps {
        max_payment_msat: ledger.max_payment_msat(),
        max_total_msat: ledger.max_total_msat(),
        paid_msat: spent.paid_msat,
        unknown_msat: spent.unknown_msat,
        clamped: spent.clamped,
        cap_reached: spent.refused > 0,
    }
}
