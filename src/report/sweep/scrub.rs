//! Redaction of the sweep's model, once, before any page is written: sweep.json,
//! sweep.html and sweep.md read the same redacted model, as a point's report does
//! (`report::scrub`). The texts a sweep copies from elsewhere: the scenario, the host,
//! the runtime's description, why a point was skipped or failed (an error quoting a
//! node's log), the nodes' versions and databases, and the machine's verdict.

use super::model::SweepReport;
use crate::report::scrub::{opt, text};

/// `report` with every text it copied from elsewhere redacted.
pub fn redacted(report: &SweepReport) -> SweepReport {
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
    for p in &mut r.points {
        opt(&mut p.reason);
        let Some(results) = &mut p.results else {
            continue;
        };
        if let Some(m) = &mut results.machine {
            text(&mut m.verdict);
        }
        for n in &mut results.nodes {
            text(&mut n.version);
            text(&mut n.database);
            opt(&mut n.completion);
        }
    }
    r
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_secret_in_a_points_reason_or_the_scenario_is_redacted_in_every_page() {
        let secret = "hunter2-sweep-secret";
        crate::redact::register_secret(secret);
        let points = ["concurrency=1", "concurrency=2"]
            .map(|l| crate::report::sweep::tests::point(l, &[], 10.0, 10, 20));
        let mut report = crate::report::sweep::tests::report(points.to_vec(), None);
        report.points[0].reason = Some(format!("bob exited: --rpcpass={secret}"));
        report.scenario.text = format!("args: [\"--rpcpass={secret}\"]\n");
        report.interrupted_by = Some(format!("error: {secret}"));
        report.complete = false;
        let dir = tempfile::tempdir().unwrap();
        crate::report::sweep::write_all(&report, dir.path()).unwrap();
        for page in ["sweep.json", "sweep.html", "sweep.md"] {
            let text = std::fs::read_to_string(dir.path().join(page)).unwrap();
            assert!(!text.contains(secret), "{page} holds the secret");
        }
    }
}
