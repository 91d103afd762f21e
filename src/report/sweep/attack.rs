//! A sweep over `attack_slots:` (or any sweep of a scenario with `workload: attack:`):
//! each point's honest payments before, during and after the attack, beside the slots
//! the attacker held, so the curve of honest TPS and p99 against slots held reads off
//! one table.

use super::model::{PointAttack, PointReport, SweepReport};
use crate::metrics::attack::AttackWindow;
use crate::report::format;
use std::fmt::Write as _;

/// The table of honest figures per point; empty when no point ran an attack.
pub fn markdown(report: &SweepReport) -> String {
    let rows: Vec<(&PointReport, &PointAttack)> = (report.points.iter())
        .filter_map(|p| Some((p, p.results.as_ref()?.attack.as_ref()?)))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\nHonest payments around the attack (TPS, p99, failed in each window):\n\n\
         | point | slots held (max / target) | before | during | after |\n|---|---|---|---|---|\n",
    );
    for (p, a) in rows {
        let _ = writeln!(
            out,
            "| {} | {} / {} | {} | {} | {} |",
            p.label,
            a.slots_held_max,
            a.slots_target,
            window(&a.before),
            window(&a.during),
            window(&a.after)
        );
    }
    out
}

/// `5.2 TPS · p99 181 ms · 0 failed`.
fn window(w: &AttackWindow) -> String {
    let p99 = if w.ok > 0 {
        format::latency_us(w.latency.p99_us)
    } else {
        "-".into()
    };
    format!(
        "{} TPS · p99 {p99} · {} failed",
        format::tps(w.tps),
        w.failed
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::{point, report, schema_errors};
    use super::*;
    use crate::metrics::Percentiles;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn window(ok: u64, failed: u64, p99_ms: u64) -> AttackWindow {
        AttackWindow {
            from_s: 0.0,
            to_s: 10.0,
            ok,
            failed,
            tps: ok as f64 / 10.0,
            latency: Percentiles {
                count: ok,
                p99_us: p99_ms * 1000,
                ..Percentiles::default()
            },
            failures_by_reason: BTreeMap::new(),
        }
    }

    #[test]
    fn a_row_per_point_with_an_attack_and_none_without() {
        let mut points = vec![
            point(
                "attack.slots=2",
                &[("attack.slots", json!(2))],
                5.0,
                100,
                180,
            ),
            point(
                "attack.slots=6",
                &[("attack.slots", json!(6))],
                3.0,
                100,
                180,
            ),
        ];
        assert_eq!(markdown(&report(points.clone(), None)), "");
        for (p, (held, target, during_ok)) in points.iter_mut().zip([(2, 3, 48), (5, 6, 0)]) {
            p.results.as_mut().unwrap().attack = Some(PointAttack {
                slots_target: target,
                slots_held_max: held,
                before: window(50, 0, 180),
                during: window(during_ok, 50 - during_ok, 240),
                after: window(50, 0, 190),
            });
        }
        let r = report(points, None);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(schema_errors(&json), Vec::<String>::new());
        let md = markdown(&r);
        assert!(md.contains("| point | slots held (max / target) |"), "{md}");
        let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| attack")).collect();
        assert_eq!(rows.len(), 2, "{md}");
        assert!(rows[0].starts_with("| attack.slots=2 | 2 / 3 | 5"), "{md}");
        // No honest payment succeeded during the second: no p99, 50 failed.
        assert!(rows[1].contains("p99 - · 50 failed"), "{md}");
    }
}
