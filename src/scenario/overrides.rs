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
