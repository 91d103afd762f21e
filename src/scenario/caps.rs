//! Mainnet caps over the whole run: every point of a sweep and every repeat pays
//! against the same `max_total_msat`, so their payments together must fit in it.
//! Routing fees and open-loop warm-up payments are not known here; the run's spend
//! ledger (`engine::ledger`) holds the total with them.

use super::error::Ctx;
use super::{Scenario, ScenarioError};
use serde_saphyr::Location;

/// Refuses, with mainnet allowed, the workloads whose payments do not pass the run's
/// spend ledger (`engine::ledger`) one by one: a stream's splits go out with each
/// node's default fee limit, a rebalance's circular payments and an attack's held
/// HTLCs are sent beside the ledger. Each is refused at its field, before anything
/// starts; the caps then hold for what is left (keysends and invoices, in parts or
/// whole, through the ledger).
pub(super) fn check_uncapped_workloads(
    ctx: &Ctx,
    raw: &super::raw::RawScenario,
) -> Result<(), ScenarioError> {
    let mainnet = (raw.external.as_ref())
        .and_then(|e| e.value.allow_mainnet.as_ref())
        .is_some_and(|a| a.value);
    if !mainnet {
        return Ok(());
    }
    let w = &raw.workload.value;
    let uncapped = [
        (matches!(w.kind.value, super::raw::RawPaymentKind::Stream))
            .then_some((w.kind.referenced, "kind: stream")),
        (w.rebalance.as_ref()).map(|r| (r.referenced, "rebalance:")),
        (w.attack.as_ref()).map(|a| (a.referenced, "attack:")),
    ];
    match uncapped.into_iter().flatten().next() {
        None => Ok(()),
        Some((at, what)) => Err(ctx.error(
            &at,
            format!(
                "{what} with allow_mainnet: true: its payments do not pass the spend caps \
                 (max_payment_msat, max_total_msat) one by one"
            ),
            "run it on regtest (a runtime that starts its own chain), or pay keysends or \
             invoices on mainnet",
        )),
    }
}

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
    fn a_stream_a_rebalance_or_an_attack_on_mainnet_is_refused_at_its_field() {
        // The stream is otherwise valid: without this check it is accepted (seen). On
        // two nodes the rebalance has no circle and the attack no accomplice to hold,
        // which their own checks refuse later; this check comes first, at the field.
        let base = mainnet(10, "");
        let stream = base.replace(
            "  kind: keysend\n  senders: [alice]\n  receiver: bob\n",
            "  kind: stream\n  senders: [alice]\n  recipients: [{ node: bob, split: 100 }]\n",
        );
        let rebalance = base.replace(
            "  concurrency: 1\n",
            "  concurrency: 1\n  rebalance: { node: alice, first_hop: bob, last_hop: bob, amount_sat: 1, every: 10s }\n",
        );
        let attack = base.replace(
            "  concurrency: 1\n",
            "  concurrency: 1\n  attack: { attacker: alice, accomplice: bob, share: 1.0, amount_msat: 1000, hold: 5s, for: 5s }\n",
        );
        for (text, what, line) in [
            (&stream, "kind: stream", 8),
            (&rebalance, "rebalance:", 13),
            (&attack, "attack:", 13),
        ] {
            assert_ne!(text, &base, "{what}: the edit did not apply");
            let err = parse_error(text);
            assert!(
                err.contains(&format!("{what} with allow_mainnet: true")),
                "{what}: {err}"
            );
            assert!(err.contains(&format!("t.yaml:{line}:")), "{what}: {err}");
        }
        // Off mainnet (no allow_mainnet), the caps' check says nothing of them.
        let off = attack.replace("allow_mainnet: true, ", "");
        let err = parse_error(&off);
        assert!(!err.contains("allow_mainnet: true:"), "{err}");
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
