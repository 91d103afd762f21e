//! Mainnet caps over the whole run: every point of a sweep and every repeat pays
//! against the same `max_total_msat`, so their payments together must fit in it.
//! Routing fees and open-loop warm-up payments are not known here; the run's spend
//! ledger (`engine::ledger`) holds the total with them.

use super::error::Ctx;
use super::{Scenario, ScenarioError};
use serde_saphyr::Location;

/// Refuses a scenario with mainnet allowed whose points (sweep points × repeats, the
/// skipped ones left out) pay more in all than `max_total_msat`; `at` locates the cap.
pub(super) fn check_run_total(
    ctx: &Ctx,
    scenario: &Scenario,
    at: Option<Location>,
) -> Result<(), ScenarioError> {
    let Some(settings) = scenario.external.as_ref().filter(|e| e.allow_mainnet) else {
        return Ok(());
    };
    let (Some(total), Some(at)) = (settings.max_total_msat, at) else {
        return Ok(());
    };
    let points: Vec<&Scenario> = match &scenario.sweep {
        Some(sweep) => (sweep.points.iter())
            .filter(|p| p.skip.is_none())
            .map(|p| &p.scenario)
            .collect(),
        None => vec![scenario],
    };
    if points.len() < 2 {
        // One point: checked with the workload (`external::validate`).
        return Ok(());
    }
    let spent: u128 = (points.iter())
        .map(|s| {
            let w = &s.workload;
            u128::from(w.stop.payments.unwrap_or(0)) * u128::from(w.amount_msat)
        })
        .sum();
    if spent <= u128::from(total) {
        return Ok(());
    }
    let w = &scenario.workload;
    let payments = w.stop.payments.unwrap_or(0);
    Err(ctx.error(
        &at,
        format!(
            "{} runs (points × repeats) of {payments} payments of {} msat make {spent} msat, \
             above max_total_msat: {total}",
            points.len(),
            w.amount_msat
        ),
        "the caps hold for the whole run, not per point: repeat fewer times, sweep fewer \
         points, pay fewer or smaller payments, or raise the cap",
    ))
}

#[cfg(test)]
mod tests {
    use crate::scenario::tests::{parse, parse_error};
    use std::path::Path;

    fn mainnet(payments: u32, tail: &str) -> String {
        format!(
            "name: caps
runtime: external
external: {{ allow_mainnet: true, max_payment_msat: 1000, max_total_msat: 100000 }}
nodes:
  alice: {{ implementation: lnd, rpc: 127.0.0.1:1, tls_cert: a.cert, macaroon: a.mac }}
  bob: {{ implementation: lnd, rpc: 127.0.0.1:2, tls_cert: b.cert, macaroon: b.mac }}
workload:
  kind: keysend
  senders: [alice]
  receiver: bob
  amount_msat: 1000
  concurrency: 1
  stop: {{ payments: {payments} }}
{tail}"
        )
    }

    #[test]
    fn sweep_points_together_must_fit_the_total() {
        let sweep = "sweep: { concurrency: [1, 2] }\n";
        let err = parse_error(&mainnet(60, sweep));
        assert!(
            err.contains("2 runs (points × repeats) of 60 payments of 1000 msat make 120000 msat"),
            "{err}"
        );
        assert!(parse(Path::new("t.yaml"), &mainnet(50, sweep)).is_ok());
    }

    #[test]
    fn repeats_within_the_total_pass() {
        assert!(parse(Path::new("t.yaml"), &mainnet(25, "repeat: 4\n")).is_ok());
        let err = parse_error(&mainnet(25, "repeat: 5\n"));
        assert!(err.contains("5 runs"), "{err}");
    }
}
