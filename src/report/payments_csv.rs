//! `payments.csv`: one row per counted payment (see [`crate::metrics::payments`] for
//! the columns). The run streams the rows into its run directory; the report copies
//! that file in whole, so a report never holds every payment in memory.

use super::Report;
use crate::files::copy_file;
use crate::metrics::PaymentLogFile;
use crate::metrics::payments::FILE_NAME;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// Copies the run's payment log into `dir/payments.csv`. None when the run kept
/// none (a report snapshot taken mid-run, a report built without a run). A log whose
/// writing failed is not copied; the failure is printed instead, since the rest of
/// the report is still good.
pub fn write(report: &Report, dir: &Path) -> Result<Option<PathBuf>> {
    match &report.results.payment_log {
        Some(log) => copy(log, dir),
        None => Ok(None),
    }
}

/// Copies `log` into `dir/payments.csv`, unless its writing failed (then None, and
/// a warning).
pub fn copy(log: &PaymentLogFile, dir: &Path) -> Result<Option<PathBuf>> {
    if let Some(error) = &log.error {
        crate::lines::errln!("warning: {FILE_NAME} not written: {error}");
        return Ok(None);
    }
    copy_file(dir, FILE_NAME, &log.path).map(Some)
}
