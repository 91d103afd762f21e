//! Whether each run's machine was quiet (`results.machine`, sampled as
//! [`crate::metrics::host`] says). `compare` flags a run measured while other work
//! shared the machine, with its outside load, and says that a difference may be the
//! machine's rather than the nodes' when either side of it was disturbed.

use super::input::Input;
use super::repeats::Repeats;
use super::table::{ChangeCell, MISSING, Row, Verdict};
use crate::metrics::host::{OUTSIDE_LOAD_LIMIT_PCT, STEAL_LIMIT_PCT};
use crate::report::stats::median;

/// The table row's name.
pub const METRIC: &str = "machine";

/// The Δ cell of a pair where either side was disturbed.
pub const MAY_BE_THE_MACHINE: &str = "may be the machine";

/// A run's machine as `compare` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    pub disturbed: bool,
    /// Outside load, percent of one core: the run's average, or the median of its
    /// repeats' averages.
    pub outside_load_pct: f64,
    /// Steal time, percent of all CPU time (for repeats, their median).
    pub steal_pct: f64,
    /// For repeated runs: how many repeats were disturbed, of how many were sampled.
    pub repeats: Option<(usize, usize)>,
}

impl Machine {
    /// `DISTURBED: outside load 85 % of a core, steal 0.4 %`; for repeats,
    /// `DISTURBED: 2 of 5 repeats; outside load 14 % of a core, steal 0.1 % (medians)`.
    pub fn text(&self) -> String {
        let word = if self.disturbed { "DISTURBED" } else { "quiet" };
        let figures = format!(
            "outside load {:.0} % of a core, steal {:.1} %",
            self.outside_load_pct, self.steal_pct
        );
        match self.repeats {
            Some((disturbed, of)) if self.disturbed => {
                format!("{word}: {disturbed} of {of} repeats; {figures} (medians)")
            }
            Some((_, of)) => format!("{word}: {of} repeats; {figures} (medians)"),
            None => format!("{word}: {figures}"),
        }
    }
}

/// The machine of `run`: its repeats' where it is a repeated run whose repeats were
/// sampled, else its report's; `None` where the host was not sampled (a report from
/// before `results.machine`, or a run too short to sample).
pub fn of(run: &Input, repeats: Option<&Repeats>) -> Option<Machine> {
    if let Some(r) = repeats.filter(|r| !r.outside_load_pct.is_empty()) {
        return Some(Machine {
            disturbed: r.disturbed > 0,
            outside_load_pct: median(&r.outside_load_pct),
            steal_pct: median(&r.steal_pct),
            repeats: Some((r.disturbed, r.outside_load_pct.len())),
        });
    }
    let m = run.report.results.machine.as_ref()?;
    Some(Machine {
        disturbed: m.disturbed,
        outside_load_pct: m.outside_load_pct,
        steal_pct: m.steal_pct,
        repeats: None,
    })
}

/// The table's `machine` row: each run's machine, and for each later run whether its
/// difference from the first may be the machine's. `None` when no run was sampled.
pub fn row(machines: &[Option<Machine>]) -> Option<Row> {
    if machines.iter().all(Option::is_none) {
        return None;
    }
    let text = |m: &Option<Machine>| {
        m.as_ref()
            .map_or_else(|| "not sampled".into(), Machine::text)
    };
    let disturbed = |m: &Option<Machine>| m.as_ref().is_some_and(|m| m.disturbed);
    let base = &machines[0];
    Some(Row {
        metric: METRIC,
        values: machines.iter().map(text).collect(),
        changes: (machines.iter().skip(1))
            .map(|m| match (base, m) {
                _ if disturbed(base) || disturbed(m) => ChangeCell {
                    text: MAY_BE_THE_MACHINE.into(),
                    // Shown as a worse figure is: the difference is worth less.
                    verdict: Some(Verdict::Worse),
                },
                (Some(_), Some(_)) => ChangeCell {
                    text: "both quiet".into(),
                    verdict: Some(Verdict::Noise),
                },
                _ => ChangeCell {
                    text: MISSING.into(),
                    verdict: None,
                },
            })
            .collect(),
    })
}

/// For each later run where it or the baseline was disturbed: the verdict that their
/// difference may be the machine, with the outside load that says so.
pub fn warnings(machines: &[Option<Machine>], labels: &[String]) -> Vec<String> {
    let disturbed = |i: usize| machines[i].as_ref().filter(|m| m.disturbed);
    let mut out = Vec::new();
    for i in 1..machines.len() {
        let sides: Vec<String> = [0, i]
            .into_iter()
            .filter_map(|k| disturbed(k).map(|m| format!("{} was {}", labels[k], m.text())))
            .collect();
        if sides.is_empty() {
            continue;
        }
        out.push(format!(
            "{}. A difference between {} and {} may be the machine, not the nodes: measure \
             again on a quiet machine (outside load under {OUTSIDE_LOAD_LIMIT_PCT:.0} % of a \
             core, steal under {STEAL_LIMIT_PCT:.0} %).",
            sides.join("; "),
            labels[0],
            labels[i]
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(disturbed: bool, outside: f64) -> Option<Machine> {
        Some(Machine {
            disturbed,
            outside_load_pct: outside,
            steal_pct: 0.2,
            repeats: None,
        })
    }

    fn labels(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("run{i}")).collect()
    }

    #[test]
    fn no_sampled_run_no_row() {
        assert!(row(&[None, None]).is_none());
        assert!(warnings(&[None, None], &labels(2)).is_empty());
    }

    #[test]
    fn a_disturbed_side_makes_the_difference_the_machines() {
        let runs = [
            machine(false, 3.0),
            machine(true, 85.0),
            machine(false, 4.0),
            None,
        ];
        let r = row(&runs).unwrap();
        assert_eq!(
            r.values[0],
            "quiet: outside load 3 % of a core, steal 0.2 %"
        );
        assert_eq!(
            r.values[1],
            "DISTURBED: outside load 85 % of a core, steal 0.2 %"
        );
        assert_eq!(r.values[3], "not sampled");
        let changes: Vec<&str> = r.changes.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(changes, [MAY_BE_THE_MACHINE, "both quiet", MISSING]);
        let w = warnings(&runs, &labels(4));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("run1 was DISTURBED: outside load 85 % of a core")
                && w[0].contains("between run0 and run1 may be the machine"),
            "{}",
            w[0]
        );
    }

    #[test]
    fn a_disturbed_baseline_casts_doubt_on_every_difference() {
        let runs = [machine(true, 40.0), machine(false, 2.0), None];
        let r = row(&runs).unwrap();
        assert!(r.changes.iter().all(|c| c.text == MAY_BE_THE_MACHINE));
        let w = warnings(&runs, &labels(3));
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].starts_with("run0 was DISTURBED"), "{}", w[0]);
        let both = warnings(&[machine(true, 40.0), machine(true, 30.0)], &labels(2));
        assert!(
            both[0].contains("run0 was DISTURBED") && both[0].contains("; run1 was DISTURBED"),
            "{both:?}"
        );
    }

    #[test]
    fn repeats_count_their_disturbed_ones_and_give_medians() {
        let repeats = Repeats {
            outside_load_pct: vec![2.0, 60.0, 4.0, 3.0, 80.0],
            steal_pct: vec![0.0, 0.1, 0.0, 0.2, 0.0],
            disturbed: 2,
            ..Repeats::default()
        };
        let input = super::super::input::from_text(
            "report.json".into(),
            &std::fs::read_to_string(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/fixtures/reports/real-lnd-a/report.json"),
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(of(&input, None), None, "the fixture predates sampling");
        let m = of(&input, Some(&repeats)).unwrap();
        assert_eq!(
            m.text(),
            "DISTURBED: 2 of 5 repeats; outside load 4 % of a core, steal 0.0 % (medians)"
        );
        let unsampled = Repeats::default();
        assert_eq!(of(&input, Some(&unsampled)), None);
    }
}
