//! The command line's overrides of a scenario (`--payments`, `--duration`,
//! `--profile`), applied once to the scenario and to each of its sweep points (each
//! point is a scenario of its own).

use super::{ProfileSpec, Scenario};
use std::time::Duration;

/// What the command line overrides; `None` / `false` leaves the file's value.
#[derive(Debug, Clone, Copy, Default)]
pub struct Overrides {
    pub payments: Option<u64>,
    pub duration: Option<Duration>,
    /// Profile every node when the scenario has no `profile:`.
    pub profile: bool,
}

impl Scenario {
    /// Applies `o` to this scenario and to every point of its sweep.
    pub fn apply_overrides(&mut self, o: &Overrides) {
        apply(self, o);
        if let Some(sweep) = &mut self.sweep {
            for point in &mut sweep.points {
                apply(&mut point.scenario, o);
            }
        }
    }
}

/// Reads `--duration` by the rules of `stop: duration:` in a file: above zero, at most
/// 30 days. (The flag overrides the field, so it must not let through what the field
/// refuses.)
pub fn duration_flag(text: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(text.trim())
        .map_err(|e| format!("{e}; write a duration with its unit, e.g. 30s, 5m or 1h30m"))?;
    if d.is_zero() {
        return Err(
            "a load of 0s sends nothing; write a duration above zero, e.g. 30s or 5m \
             (as stop: duration: in a scenario)"
                .into(),
        );
    }
    if d > super::workload::MAX_DURATION {
        return Err("longer than 30 days; write at most 30d, e.g. 5m or 24h".into());
    }
    Ok(d)
}

/// `--payments N`: what `stop: payments:` takes, 1 to [`MAX_STOP_PAYMENTS`].
///
/// [`MAX_STOP_PAYMENTS`]: super::workload::MAX_STOP_PAYMENTS
pub fn payments_flag(text: &str) -> Result<u64, String> {
    let max = super::workload::MAX_STOP_PAYMENTS;
    let n: u64 = (text.trim().parse())
        .map_err(|e| format!("{e}; write a whole number of payments, e.g. 2000"))?;
    match n {
        0 => Err("0 payments sends nothing; write 1 or more (as stop: payments:)".into()),
        n if n > max => Err(format!(
            "more than {max} payments; write at most {max}, or stop by --duration"
        )),
        n => Ok(n),
    }
}

fn apply(scenario: &mut Scenario, o: &Overrides) {
    let stop = &mut scenario.workload.stop;
    stop.payments = o.payments.or(stop.payments);
    stop.duration = o.duration.or(stop.duration);
    if o.profile && scenario.profile.is_none() {
        scenario.profile = Some(ProfileSpec::every_node(&scenario.nodes));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn payments_flag_refuses_what_stop_payments_refuses() {
        assert_eq!(payments_flag("2000"), Ok(2000));
        assert!(payments_flag("0").unwrap_err().contains("1 or more"));
        assert!(
            payments_flag("1000000001")
                .unwrap_err()
                .contains("at most 1000000000")
        );
        assert_eq!(payments_flag("1000000000"), Ok(1_000_000_000));
        assert!(payments_flag("-3").unwrap_err().contains("whole number"));
    }

    #[test]
    fn duration_flag_refuses_what_stop_duration_refuses() {
        assert_eq!(duration_flag("30s"), Ok(Duration::from_secs(30)));
        assert!(duration_flag("0s").unwrap_err().contains("above zero"));
        assert!(duration_flag("31days").unwrap_err().contains("30 days"));
        assert!(duration_flag("5").unwrap_err().contains("30s, 5m"));
    }

    #[test]
    fn overrides_reach_the_scenario_and_every_point() {
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/scenarios/valid/alice-pays-bob.yaml"),
        )
        .unwrap();
        let text = format!("{text}sweep:\n  concurrency: [1, 2]\n");
        let mut s = super::super::tests::parse(Path::new("s.yaml"), &text).unwrap();
        s.apply_overrides(&Overrides {
            payments: Some(7),
            duration: None,
            profile: true,
        });
        let points = &s.sweep.as_ref().unwrap().points;
        for sc in std::iter::once(&s).chain(points.iter().map(|p| &p.scenario)) {
            assert_eq!(sc.workload.stop.payments, Some(7));
            assert!(sc.profile.is_some());
        }
        // Nothing given: the file's values stay.
        let before = s.workload.stop;
        s.apply_overrides(&Overrides::default());
        assert_eq!(s.workload.stop, before);
    }
}
