//! What a run will do, before anything starts: a list of points, each on a network
//! (points with the same network number run one after the other on it). A scenario
//! without `sweep:` is one network with one point; with `sweep:`, its expanded points.
//! Which points cannot run here (skipped, with the reason) is known up front too.

use super::choose::preflight_points;
use crate::scenario::{Scenario, SweepParam, SweepPoint, SweepValue};
use anyhow::Result;

pub(crate) struct Plan {
    pub scenario: Scenario,
    /// Per point, why it will not run (a database its implementation lacks, a binary
    /// not built in a matrix), if so.
    pub skips: Vec<Option<String>>,
    /// An implementation matrix: a network that cannot come up fails its points and
    /// the others still run.
    pub matrix: bool,
}

/// Per point of `scenario`'s sweep, why it will not run on this machine, as a run
/// would skip it (`validate` lists these): the file's reasons, and in a matrix the
/// runtime's checks (a binary or an image not built). Outside a matrix a point whose
/// checks fail is not a skip (the run fails), so only the file's reasons are given.
pub(crate) fn skips_here(scenario: &Scenario) -> Vec<Option<String>> {
    let plan = Plan {
        scenario: scenario.clone(),
        skips: Vec::new(),
        matrix: is_matrix(scenario),
    };
    (0..plan.len())
        .map(|i| match plan.skip_of(i) {
            Ok(why) => why,
            Err(_) => plan.sweep_point(i).and_then(|p| p.skip.clone()),
        })
        .collect()
}

fn is_matrix(scenario: &Scenario) -> bool {
    (scenario.sweep.iter())
        .flat_map(|s| &s.params)
        .any(SweepParam::is_implementation)
}

impl Plan {
    /// The plan of `scenario`. Outside a matrix a missing binary fails the whole
    /// plan, as does a matrix where no point can run.
    pub fn new(scenario: Scenario) -> Result<Plan> {
        let matrix = is_matrix(&scenario);
        let mut plan = Plan {
            scenario,
            skips: Vec::new(),
            matrix,
        };
        plan.skips = plan.find_skips()?;
        Ok(plan)
    }

    fn find_skips(&self) -> Result<Vec<Option<String>>> {
        let mut skips = Vec::with_capacity(self.len());
        for i in 0..self.len() {
            skips.push(self.skip_of(i)?);
        }
        if let Some(first) =
            (skips.iter().flatten().next()).filter(|_| skips.iter().all(Option::is_some))
        {
            anyhow::bail!("no point of the sweep can run here; the first: {first}");
        }
        Ok(skips)
    }

    /// Why point `i` will not run here, if so: what the file says (a database its
    /// implementation lacks), else, in a matrix, what the runtime's checks before the
    /// start find (a binary not built, an image not there). Outside a matrix those are
    /// errors.
    fn skip_of(&self, i: usize) -> Result<Option<String>> {
        let skip = self.sweep_point(i).and_then(|p| p.skip.clone());
        Ok(match (skip, preflight_points(self.scenario_of(i))) {
            (Some(why), _) => Some(why),
            (None, Ok(())) => None,
            (None, Err(e)) if self.matrix => Some(crate::redact::redact_text(&format!("{e:#}"))),
            (None, Err(e)) => return Err(e),
        })
    }

    /// True when the scenario has `sweep:` (points have labels and report folders,
    /// and a combined report is written).
    pub fn is_sweep(&self) -> bool {
        self.scenario.sweep.is_some()
    }

    pub fn len(&self) -> usize {
        self.scenario.sweep.as_ref().map_or(1, |s| s.points.len())
    }

    fn sweep_point(&self, i: usize) -> Option<&SweepPoint> {
        self.scenario.sweep.as_ref().map(|s| &s.points[i])
    }

    /// The scenario point `i` runs.
    pub fn scenario_of(&self, i: usize) -> &Scenario {
        self.sweep_point(i).map_or(&self.scenario, |p| &p.scenario)
    }

    /// True when the sweep climbs a history ladder (`history:` swept).
    pub fn is_history_ladder(&self) -> bool {
        (self.scenario.sweep.iter()).any(|s| s.params.contains(&SweepParam::History))
    }

    /// `concurrency=4` (also its report folder); `None` for a run without sweep.
    pub fn label(&self, i: usize) -> Option<&str> {
        self.sweep_point(i).map(|p| p.label.as_str())
    }

    /// The network number of point `i` (0 for a run without sweep).
    pub fn network_of(&self, i: usize) -> usize {
        self.sweep_point(i).map_or(0, |p| p.network)
    }

    /// The networks with a point to run, in order, each as the indices of its points
    /// that will run.
    pub fn networks(&self) -> Vec<Vec<usize>> {
        let mut networks: Vec<Vec<usize>> = Vec::new();
        let mut last = None;
        for i in (0..self.len()).filter(|i| self.skips[*i].is_none()) {
            let network = self.network_of(i);
            match networks.last_mut() {
                Some(points) if last == Some(network) => points.push(i),
                _ => networks.push(vec![i]),
            }
            last = Some(network);
        }
        networks
    }

    /// A sweep's first lines: its points, and those skipped with the reason.
    pub fn announce(&self, networks: usize) {
        let Some(sweep) = &self.scenario.sweep else {
            return;
        };
        crate::lines::errln!(
            "sweep {}: {} points on {networks} network(s): {}",
            self.scenario.name,
            self.len(),
            (sweep.points.iter())
                .map(|p| p.label.as_str())
                .collect::<Vec<_>>()
                .join(" | ")
        );
        for (point, why) in sweep.points.iter().zip(&self.skips) {
            if let Some(why) = why {
                crate::lines::errln!("skipped {}: {why}", point.label);
            }
        }
    }

    /// `  · left: concurrency=7, concurrency=10` (at most three named) after point
    /// `i`, or nothing for the last point.
    pub fn points_left(&self, i: usize) -> String {
        const NAMED: usize = 3;
        let rest = match &self.scenario.sweep {
            Some(s) => &s.points[i + 1..],
            None => return String::new(),
        };
        if rest.is_empty() {
            return String::new();
        }
        let named: Vec<&str> = rest.iter().take(NAMED).map(|p| p.label.as_str()).collect();
        let more = match rest.len().saturating_sub(NAMED) {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        format!("  · left: {}{more}", named.join(", "))
    }

    /// True when point `i` is a repeat that follows another on the same network, so
    /// the scenario's settle pause (`repeat: { settle: 10s }`) comes before it.
    pub fn settles_before(&self, i: usize) -> bool {
        let Some(sweep) = &self.scenario.sweep else {
            return false;
        };
        let repeat = |p: &SweepPoint| {
            p.values.iter().find_map(|(param, v)| match (param, v) {
                (SweepParam::Repeat, SweepValue::Count(k)) => Some(*k),
                _ => None,
            })
        };
        let point = &sweep.points[i];
        let follows = i > 0 && sweep.points[i - 1].network == point.network;
        follows && repeat(point).is_some_and(|k| k >= 2)
    }
}

#[cfg(test)]
mod tests {
    use super::Plan;
    use crate::scenario::parse;
    use std::path::Path;

    fn scenario(extra: &str) -> crate::scenario::Scenario {
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/scenarios/valid/alice-pays-bob.yaml"),
        )
        .unwrap();
        let mut s = parse(
            Path::new("s.yaml"),
            &format!("{text}{extra}"),
            crate::runtime::capabilities,
        )
        .unwrap();
        // A runtime with no checks before the start: these tests need no binary here.
        s.runtime = crate::scenario::RuntimeKind::Kubernetes;
        for point in s.sweep.iter_mut().flat_map(|sweep| &mut sweep.points) {
            point.scenario.runtime = s.runtime;
        }
        s
    }

    #[test]
    fn a_scenario_without_sweep_is_one_network_of_one_point() {
        let plan = Plan::new(scenario("")).unwrap();
        assert!(!plan.is_sweep());
        assert_eq!(plan.networks(), vec![vec![0]]);
        assert_eq!(plan.label(0), None);
        assert_eq!(plan.points_left(0), "");
        assert!(!plan.settles_before(0));
    }

    #[test]
    fn the_points_left_are_named_up_to_three() {
        let plan = Plan::new(scenario("sweep:\n  concurrency: [1, 2, 3, 4, 5]\n")).unwrap();
        // Only the load changes: one network runs all five points.
        assert_eq!(plan.networks(), vec![vec![0, 1, 2, 3, 4]]);
        assert_eq!(
            plan.points_left(0),
            "  · left: concurrency=2, concurrency=3, concurrency=4 and 1 more"
        );
        assert_eq!(
            plan.points_left(2),
            "  · left: concurrency=4, concurrency=5"
        );
        assert_eq!(plan.points_left(4), "");
    }
}
