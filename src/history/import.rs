//! Report directories into records: a run's (`DIR/report.json`) or a sweep's
//! (`DIR/sweep.json` and each point's `DIR/<label>/report.json`, repeats included).

use super::record::{NotRecordable, RunRecord, point_of, run_of};
use serde_json::Value;
use std::path::Path;

fn read_json(path: &Path) -> Result<Value, NotRecordable> {
    let bad = |why: String| NotRecordable {
        path: path.display().to_string(),
        why,
    };
    let text = crate::files::read_text(path, crate::files::REPORT_MAX_BYTES)
        .map_err(|e| bad(format!("cannot read: {e}")))?;
    serde_json::from_str(&text).map_err(|e| {
        bad(format!(
            "line {} column {}: not JSON ({e}); give a report directory lnbench-tui wrote",
            e.line(),
            e.column()
        ))
    })
}

/// The run whose report is in `dir` (or `dir` is its report.json).
pub fn read_dir(dir: &Path) -> Result<RunRecord, NotRecordable> {
    let dir = if dir.is_file() {
        dir.parent().unwrap_or(Path::new("."))
    } else {
        dir
    };
    let canonical = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let dir = canonical.as_path();
    let source = dir.display().to_string();
    let single = dir.join(crate::report::json::FILE_NAME);
    let sweep = dir.join(crate::report::sweep::JSON_FILE);
    let mut run = if single.is_file() {
        let doc = read_json(&single)?;
        let mut run = run_of(&doc, &single.display().to_string())?;
        run.points
            .push(point_of(&doc, "", &single.display().to_string())?);
        run
    } else if sweep.is_file() {
        read_sweep(dir, &sweep)?
    } else {
        return Err(NotRecordable {
            path: dir.display().to_string(),
            why: format!(
                "neither {} nor {}: give the directory a run wrote with --report",
                crate::report::json::FILE_NAME,
                crate::report::sweep::JSON_FILE
            ),
        });
    };
    run.source = source;
    Ok(run)
}

fn read_sweep(dir: &Path, sweep: &Path) -> Result<RunRecord, NotRecordable> {
    let doc = read_json(sweep)?;
    let mut run = run_of(&doc, &sweep.display().to_string())?;
    let points = doc.get("points").and_then(Value::as_array);
    for p in points.into_iter().flatten() {
        let status = p.get("status").and_then(Value::as_str).unwrap_or_default();
        if !matches!(status, "done" | "partial") {
            continue;
        }
        let label = p.get("label").and_then(Value::as_str).unwrap_or_default();
        // A label is a folder name the tool made; never leave the sweep's directory.
        if label.is_empty() || label.contains('/') || label == ".." {
            return Err(NotRecordable {
                path: sweep.display().to_string(),
                why: format!("point label {label:?} is not a folder name"),
            });
        }
        let report = dir.join(label).join(crate::report::json::FILE_NAME);
        let point_doc = read_json(&report)?;
        run.points
            .push(point_of(&point_doc, label, &report.display().to_string())?);
    }
    if run.points.is_empty() {
        return Err(NotRecordable {
            path: sweep.display().to_string(),
            why: "no point of the sweep ran: nothing to record".into(),
        });
    }
    Ok(run)
}
