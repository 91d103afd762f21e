//! Files written whole or not at all: a reader (a browser, CI) never sees half a
//! report or half a flame graph. And the directories the command line names for
//! them, checked before a run starts so an hour's results are not lost at its end.
//! And files read with a bound: a scenario or a file it names is a regular file of
//! limited size, never a FIFO that hangs the reader or /dev/zero that fills memory.

use anyhow::{Context, Result};
use std::fs::File;
use std::path::{Path, PathBuf};

/// The most a report (report.json, sweep.json, a flame graph's data) read back by
/// `compare` or `history import` may weigh.
pub(crate) const REPORT_MAX_BYTES: u64 = 256 * 1024 * 1024;

/// The most a node's credential file (TLS certificate, macaroon, API key or
/// password), a run's owner file or a snapshot's small files may weigh.
pub(crate) const SMALL_MAX_BYTES: u64 = 1024 * 1024;

/// Reads `path` as UTF-8 text if it is a regular file of at most `max_bytes`, as
/// [`read_bytes`] does.
pub(crate) fn read_text(path: &Path, max_bytes: u64) -> std::io::Result<String> {
    let bytes = read_bytes(path, max_bytes)?;
    String::from_utf8(bytes)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()))
}

/// Reads `path` if it is a regular file of at most `max_bytes`. A FIFO, a device or
/// a directory is refused without reading (the file is opened non-blocking and
/// checked on the open handle, so no swap between check and read gets past), and so
/// is a file that grows past the limit while it is read.
pub(crate) fn read_bytes(path: &Path, max_bytes: u64) -> std::io::Result<Vec<u8>> {
    use std::io::{Error, ErrorKind, Read};
    let file = open_regular(path)?;
    let meta = file.metadata()?;
    let too_big = |size: u64| {
        Error::new(
            ErrorKind::InvalidData,
            format!("{size} bytes or more, above the limit of {max_bytes} bytes"),
        )
    };
    if meta.len() > max_bytes {
        return Err(too_big(meta.len()));
    }
    let mut bytes = Vec::new();
    file.take(max_bytes + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Opens `path` for reading if it is a regular file. The open is non-blocking (a
/// FIFO with no writer would block the open itself) and the check is made on the
/// open handle, so no swap between check and read gets past; for a regular file the
/// flag changes nothing.
pub(crate) fn open_regular(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, a device or a directory): give a file",
        ));
    }
    Ok(file)
}

/// The last `max_bytes` of the regular file `path` (all of it when smaller), read
/// from there: a log of gigabytes costs no more than its tail.
pub(crate) fn read_tail(path: &Path, max_bytes: u64) -> std::io::Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = open_regular(path)?;
    let len = file.metadata()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(max_bytes)))?;
    let mut bytes = Vec::new();
    file.take(max_bytes).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Writes `dir/name` atomically (through a temporary file), creating `dir`.
///
/// The temporary file has a random name and is created only if nothing is at that
/// path (`create_new`, which does not follow a symlink): a symlink planted in a
/// shared report directory cannot redirect the write to a file of its choosing.
pub(crate) fn write_file(dir: &Path, name: &str, text: &str) -> Result<PathBuf> {
    write_bytes(dir, name, text.as_bytes())
}

/// [`write_file`] for bytes that are not text (a raw profile).
pub(crate) fn write_bytes(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf> {
    use std::io::Write;
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create report directory {}", dir.display()))?;
    let path = dir.join(name);
    let tmp = dir.join(temp_name(name));
    let written = create_new(&tmp).and_then(|mut f| f.write_all(bytes));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {}", tmp.display()));
    }
    // A rename replaces a symlink at `path` itself; it never writes through it.
    if let Err(e) = std::fs::rename(&tmp, &path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {}", path.display()));
    }
    Ok(path)
}

/// Copies the file `from` to `dir/name` atomically, as [`write_file`] writes: for a
/// file streamed during the run (`payments.csv`), which may be too large to hold
/// in memory.
pub(crate) fn copy_file(dir: &Path, name: &str, from: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create report directory {}", dir.display()))?;
    let path = dir.join(name);
    let tmp = dir.join(temp_name(name));
    let copied = File::open(from).and_then(|mut source| {
        let mut target = create_new(&tmp)?;
        std::io::copy(&mut source, &mut target)
    });
    if let Err(e) = copied {
        let _ = std::fs::remove_file(&tmp);
        return Err(e)
            .with_context(|| format!("cannot copy {} to {}", from.display(), path.display()));
    }
    if let Err(e) = std::fs::rename(&tmp, &path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {}", path.display()));
    }
    Ok(path)
}

/// `.<name>.<8 random hex digits>.tmp`: hidden, and not guessable in advance.
fn temp_name(name: &str) -> String {
    format!(".{name}.{:08x}.tmp", rand::random::<u32>())
}

/// A new file at `path`; fails if anything (a file, a symlink) is there already.
fn create_new(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
}

/// A directory named on the command line (`--report`, `--run-dir`, `compare --out`)
/// that cannot take the files the tool writes there: bad input, exit code 2.
#[derive(Debug, thiserror::Error)]
#[error(
    "{flag} {}: not a directory this user can write (checked before anything starts)",
    dir.display()
)]
pub(crate) struct NotWritable {
    flag: &'static str,
    dir: PathBuf,
    #[source]
    source: std::io::Error,
}

/// Creates `dir` (and its parents) if needed and proves it writable by creating and
/// removing a probe file in it. `flag` names the option in the error.
pub(crate) fn check_writable(dir: &Path, flag: &'static str) -> Result<(), NotWritable> {
    let probe = || {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(temp_name("write-probe"));
        drop(create_new(&path)?);
        std::fs::remove_file(&path)
    };
    probe().map_err(|source| NotWritable {
        flag,
        dir: dir.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_regular_file_within_the_limit_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.yaml");
        std::fs::write(&file, "name: x\n").unwrap();
        assert_eq!(read_text(&file, 8).unwrap(), "name: x\n");
        let err = read_text(&file, 7).unwrap_err();
        assert!(
            err.to_string().contains("above the limit of 7 bytes"),
            "{err}"
        );
        // A FIFO with no writer would block a plain read forever.
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let err = read_text(&fifo, 1 << 20).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        // A device that never ends, and a directory.
        for path in [Path::new("/dev/zero"), dir.path()] {
            let err = read_text(path, 1 << 20).unwrap_err();
            assert!(
                err.to_string().contains("not a regular file"),
                "{path:?}: {err}"
            );
        }
    }

    #[test]
    fn a_planted_symlink_does_not_redirect_the_write() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("report");
        std::fs::create_dir(&dir).unwrap();
        let target = root.path().join("victim");
        std::fs::write(&target, "untouched").unwrap();
        // The temporary name the writer used to take, and the final name, both
        // planted as symlinks to a file outside the report.
        std::os::unix::fs::symlink(&target, dir.join(".report.json.tmp")).unwrap();
        std::os::unix::fs::symlink(&target, dir.join("report.json")).unwrap();
        let path = write_file(&dir, "report.json", "{}").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "untouched");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}");
        assert!(!std::fs::symlink_metadata(&path).unwrap().is_symlink());
        // Only the planted link and the report: no temporary file left behind.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
    }

    #[test]
    fn a_temporary_file_is_never_opened_through_a_symlink() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("victim");
        std::fs::write(&target, "untouched").unwrap();
        let link = root.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(create_new(&link).is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "untouched");
        assert_ne!(temp_name("a"), temp_name("a"));
    }

    #[test]
    fn a_directory_below_a_regular_file_is_not_writable_and_the_error_names_the_flag() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("file");
        std::fs::write(&file, "").unwrap();
        let err = check_writable(&file.join("report"), "--report").unwrap_err();
        assert!(err.to_string().starts_with("--report "), "{err}");
        // A directory that can be made is made, and left empty.
        let fine = root.path().join("a/b");
        check_writable(&fine, "--report").unwrap();
        assert_eq!(std::fs::read_dir(&fine).unwrap().count(), 0);
    }
}
