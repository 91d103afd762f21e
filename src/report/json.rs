//! `report.json`: the machine-readable report (schema in docs/report.schema.json).

use super::Report;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

pub const FILE_NAME: &str = "report.json";

/// Writes `dir/report.json` (creating `dir`), atomically: a reader never sees half a file.
pub fn write(report: &Report, dir: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create report directory {}", dir.display()))?;
    let path = dir.join(FILE_NAME);
    let tmp = dir.join(format!(".{FILE_NAME}.tmp"));
    // Every string passes through redaction (error texts quote node logs), also the
    // names `scrub::redacted` leaves: redacting twice changes nothing.
    let text = super::redact::redacted_json(report).context("serializing the report")?;
    std::fs::write(&tmp, text + "\n").with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, &path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}
