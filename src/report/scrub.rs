//! Redaction of the report model, once, before any format is written: report.json,
//! report.html, summary.md, the CSV files and the charts all read the same redacted
//! model, so no writer has to remember to redact (error texts quote 20 lines of a
//! node's log; versions and host names come from the nodes and the host).
//!
//! Every text field is passed through [`redact_text`] except the fixed words the tool
//! writes itself (`kind`, `role`, `load_model`, `unit`, ...) and instance names, which
//! the scenario's checks restrict to names (`[a-z0-9-]`) and which key charts and
//! tables.

use super::Report;
use crate::metrics::{EventKind, NodeResources};
use crate::redact::redact_text;

/// `report` with every text it copied from elsewhere redacted (by shape and by the
/// secret values the run registered).
pub fn redacted(report: &Report) -> Report {
    let mut r = report.clone();
    opt(&mut r.interrupted_by);
    let s = &mut r.scenario;
    for t in [&mut s.name, &mut s.description, &mut s.path, &mut s.text] {
        text(t);
    }
    for t in [&mut r.host.cpu_model, &mut r.host.os, &mut r.host.kernel] {
        text(t);
    }
    text(&mut r.runtime);
    text(&mut r.chain.version);
    resources(&mut r.chain.resources);
    for n in &mut r.nodes {
        for t in [
            &mut n.version,
            &mut n.binary,
            &mut n.database,
            &mut n.pubkey,
        ] {
            text(t);
        }
        resources(&mut n.resources);
    }
    for s in &mut r.services {
        text(&mut s.version);
        resources(&mut s.resources);
    }
    if let Some(t) = &mut r.tool_resources {
        resources(t);
    }
    for f in &mut r.faults {
        text(&mut f.label);
        text(&mut f.target);
        opt(&mut f.error);
    }
    for h in &mut r.channel_health {
        opt(&mut h.error);
    }
    if let Some(p) = &mut r.profiling {
        for p in &mut p.profiles {
            opt(&mut p.not_profiled);
            opt(&mut p.note);
            p.top_functions
                .iter_mut()
                .for_each(|f| text(&mut f.function));
        }
    }
    if let Some(rec) = &mut r.reconciliation {
        rec.unread.iter_mut().for_each(text);
    }
    summary(&mut r.results);
    r
}

fn summary(s: &mut crate::metrics::Summary) {
    if let Some(m) = &mut s.machine {
        text(&mut m.verdict);
    }
    if let Some(log) = &mut s.interval_log {
        opt(&mut log.error);
    }
    if let Some(log) = &mut s.payment_log {
        opt(&mut log.error);
    }
    for e in &mut s.events {
        if let EventKind::FaultBegan { fault } | EventKind::FaultEnded { fault } = &mut e.kind {
            text(fault);
        }
    }
}

fn resources(r: &mut NodeResources) {
    if let Some(e) = &mut r.envelope {
        opt(&mut e.cpuset);
        text(&mut e.not_available);
    }
}

/// `t` through [`redact_text`], in place (the sweep's model uses it too).
pub(super) fn text(t: &mut String) {
    let redacted = redact_text(t);
    if redacted != *t {
        *t = redacted;
    }
}

/// [`text`] on a text that may be absent.
pub(super) fn opt(t: &mut Option<String>) {
    if let Some(t) = t {
        text(t);
    }
}
