//! Repeated runs as `compare` inputs: a sweep directory whose points were repeated
//! (`repeat:` / `--repeat`), one repeated point of it (`DIR#concurrency=10` when it
//! holds several). The run shown is the repeat with the median TPS; the repeats'
//! figures let the table call a change significant or within noise
//! ([`crate::report::stats::significance`]).

use super::input::{Input, InputError, load, read};
use super::table::{Better, ChangeCell, Row, Verdict};
use crate::report::stats::{median, significance};
use crate::report::sweep::SWEEP_SCHEMA_VERSION;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Each repeat's figures of the point compared.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Repeats {
    pub tps: Vec<f64>,
    pub p50_us: Vec<f64>,
    pub p90_us: Vec<f64>,
    pub p99_us: Vec<f64>,
    /// The outside load and steal time of each repeat whose host was sampled.
    pub outside_load_pct: Vec<f64>,
    pub steal_pct: Vec<f64>,
    /// Repeats that were disturbed.
    pub disturbed: usize,
}

#[derive(Deserialize)]
struct SweepFile {
    schema_version: u64,
    #[serde(default)]
    spread: Vec<SpreadGroup>,
}

#[derive(Deserialize)]
struct SpreadGroup {
    group: String,
    repeats: Vec<Repeat>,
}

#[derive(Deserialize)]
struct Repeat {
    label: String,
    tps_avg: f64,
    p50_us: u64,
    p90_us: u64,
    p99_us: u64,
    /// Absent in sweeps from before the host was sampled, and where it was not.
    #[serde(default)]
    outside_load_pct: Option<f64>,
    #[serde(default)]
    steal_pct: Option<f64>,
    #[serde(default)]
    disturbed: bool,
}

/// `DIR` or `DIR#GROUP` when `arg` names a sweep directory with repeats; `None` for
/// anything else (a run's report, a missing path: [`load`] says what is wrong).
pub fn sweep_target(arg: &Path) -> Option<(PathBuf, Option<String>)> {
    let is_sweep = |d: &Path| {
        d.is_dir()
            && d.join(crate::report::sweep::JSON_FILE).is_file()
            && !d.join(crate::report::json::FILE_NAME).is_file()
    };
    if is_sweep(arg) {
        return Some((arg.to_path_buf(), None));
    }
    let text = arg.to_str()?;
    let (dir, group) = text.rsplit_once('#')?;
    is_sweep(Path::new(dir)).then(|| (PathBuf::from(dir), Some(group.to_string())))
}

/// The repeated point of the sweep in `dir` (`group` names it when there are
/// several): the report of its median-TPS repeat, with every repeat's figures.
pub fn load_repeated(dir: &Path, group: Option<&str>) -> Result<(Input, Repeats), InputError> {
    let path = dir.join(crate::report::sweep::JSON_FILE);
    let text = read(&path)?;
    let sweep: SweepFile =
        serde_json::from_str(&text).map_err(|source| InputError::NotAReport {
            path: path.clone(),
            source,
        })?;
    if sweep.schema_version != u64::from(SWEEP_SCHEMA_VERSION) {
        return Err(InputError::Repeats {
            path,
            why: format!(
                "sweep schema_version {}, this lnbench-tui reads version {SWEEP_SCHEMA_VERSION}",
                sweep.schema_version
            ),
        });
    }
    let names: Vec<&str> = sweep.spread.iter().map(|g| g.group.as_str()).collect();
    let chosen = match (group, sweep.spread.as_slice()) {
        (_, []) => {
            return Err(InputError::Repeats {
                path,
                why: "a sweep without repeats; give one point's folder (DIR/<label>), or run with --repeat N".into(),
            });
        }
        (None, [only]) => only,
        (None, _) => {
            return Err(InputError::Repeats {
                path,
                why: format!(
                    "{} repeated points ({}); name one: {}#{}",
                    names.len(),
                    names.join(", "),
                    dir.display(),
                    names[0]
                ),
            });
        }
        (Some(g), groups) => {
            groups
                .iter()
                .find(|s| s.group == g)
                .ok_or_else(|| InputError::Repeats {
                    path: path.clone(),
                    why: format!("no repeated point {g} (there are: {})", names.join(", ")),
                })?
        }
    };
    if chosen.repeats.is_empty() {
        return Err(InputError::Repeats {
            path,
            why: format!("point {} has no finished repeat", chosen.group),
        });
    }
    let tps: Vec<f64> = chosen.repeats.iter().map(|r| r.tps_avg).collect();
    let m = median(&tps);
    let shown = (chosen.repeats.iter())
        .min_by(|a, b| (a.tps_avg - m).abs().total_cmp(&(b.tps_avg - m).abs()))
        .expect("non-empty");
    let mut input = load(&dir.join(&shown.label))?;
    let dir_name = (std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()))
        .file_name()
        .map_or_else(
            || dir.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
    input.dir_name = match group {
        Some(g) => format!("{dir_name}#{g}"),
        None => dir_name,
    };
    let us = |f: fn(&Repeat) -> u64| chosen.repeats.iter().map(|r| f(r) as f64).collect();
    let repeats = Repeats {
        tps,
        p50_us: us(|r| r.p50_us),
        p90_us: us(|r| r.p90_us),
        p99_us: us(|r| r.p99_us),
        outside_load_pct: chosen
            .repeats
            .iter()
            .filter_map(|r| r.outside_load_pct)
            .collect(),
        steal_pct: (chosen.repeats.iter())
            .filter(|r| r.outside_load_pct.is_some())
            .map(|r| r.steal_pct.unwrap_or(0.0))
            .collect(),
        disturbed: chosen.repeats.iter().filter(|r| r.disturbed).count(),
    };
    Ok((input, repeats))
}

type Pick = fn(&Repeats) -> &Vec<f64>;
/// A row judged by its repeats: its metric, its figures, which way is better, how a
/// value is written.
type Judged = (&'static str, Pick, Better, fn(f64) -> String);

/// Where both the baseline and a run have repeats, the rows of TPS and of the p50,
/// p90 and p99 latency show the median across repeats (`n=5`) and judge the change
/// against the noise: better or worse when significant (Mann-Whitney U, p < 0.05)
/// and beyond ±`noise_pct` %, else within noise. Repeats within one run understate
/// how much two runs differ, so a significant change within the threshold is not
/// flagged.
pub fn apply(rows: &mut [Row], repeats: &[Option<Repeats>], noise_pct: f64) {
    let metrics: [Judged; 4] = [
        (
            "TPS (avg)",
            |r| &r.tps,
            Better::Higher,
            crate::report::format::tps,
        ),
        ("latency p50", |r| &r.p50_us, Better::Lower, us),
        ("latency p90", |r| &r.p90_us, Better::Lower, us),
        ("latency p99", |r| &r.p99_us, Better::Lower, us),
    ];
    let Some(Some(base)) = repeats.first() else {
        return;
    };
    for (name, pick, better, text) in metrics {
        let Some(row) = rows.iter_mut().find(|r| r.metric == name) else {
            continue;
        };
        for (i, run) in repeats.iter().enumerate() {
            if let Some(r) = run {
                let values = pick(r);
                row.values[i] = format!("{} (median, n={})", text(median(values)), values.len());
            }
        }
        for (i, run) in repeats.iter().enumerate().skip(1) {
            let Some(s) = run.as_ref().and_then(|r| significance(pick(base), pick(r))) else {
                continue;
            };
            let up = s.change_pct > 0.0;
            let beyond = s.change_pct.abs() > noise_pct;
            let verdict = match (s.significant && beyond, up == (better == Better::Higher)) {
                (false, _) => Verdict::Noise,
                (true, true) => Verdict::Better,
                (true, false) => Verdict::Worse,
            };
            let flag = match verdict {
                Verdict::Noise if s.significant => format!(", within ±{noise_pct}%"),
                Verdict::Noise => String::new(),
                Verdict::Better => " better".into(),
                Verdict::Worse => " worse".into(),
            };
            row.changes[i - 1] = ChangeCell {
                text: format!("{}{flag}", s.words()),
                verdict: Some(verdict),
            };
        }
    }
}

fn us(v: f64) -> String {
    crate::report::format::latency_us(v.round().max(0.0) as u64)
}

#[cfg(test)]
mod tests;
