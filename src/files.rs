//! Files written whole or not at all: a reader (a browser, CI) never sees half a
//! report or half a flame graph.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// Writes `dir/name` atomically (through a temporary file), creating `dir`.
pub(crate) fn write_file(dir: &Path, name: &str, text: &str) -> Result<PathBuf> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create report directory {}", dir.display()))?;
    let path = dir.join(name);
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, &path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}
