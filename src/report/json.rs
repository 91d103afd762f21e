//! `report.json`: the machine-readable report (schema in docs/report.schema.json).

use super::Report;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

pub const FILE_NAME: &str = "report.json";

/// Writes `dir/report.json` (creating `dir`), atomically and never through a planted
/// symlink ([`crate::files::write_file`]): a reader never sees half a file.
pub fn write(report: &Report, dir: &Path) -> Result<PathBuf> {
    // Every string passes through redaction (error texts quote node logs), also the
    // names `scrub::redacted` leaves: redacting twice changes nothing.
    let text = super::redact::redacted_json(report).context("serializing the report")?;
    crate::files::write_file(dir, FILE_NAME, &(text + "\n"))
}
