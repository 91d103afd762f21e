//! Copying a directory tree while hashing each file (sha256), for saving and
//! restoring snapshots in one pass over the data.

use super::SnapshotError;
use super::manifest::FileEntry;
use bitcoin::hashes::{Hash, HashEngine, sha256};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// What a snapshot leaves out of a data dir (`rel` is relative to it): the runtime's
/// log of the process (`output.log`) and log directories. Everything else is kept.
pub fn keep_in_snapshot(rel: &str) -> bool {
    rel != "output.log" && !rel.split('/').any(|part| part == "logs")
}

/// Copies every regular file under `from` that `keep` accepts (by its path relative
/// to `from`, `/`-separated) to the same place under `into`, with its permissions
/// from its first byte (a wallet, a macaroon or an `hsm_secret` is never readable
/// by others mid-copy) in directories only this user can enter ([`private_dir`]).
/// Returns each file's relative path with its size and sha256, in path order.
/// Symlinks, sockets and other special files are left out.
pub fn copy_tree(
    from: &Path,
    into: &Path,
    keep: &dyn Fn(&str) -> bool,
) -> Result<Vec<(String, FileEntry)>, SnapshotError> {
    let mut out = Vec::new();
    walk(from, into, "", keep, &mut out)?;
    Ok(out)
}

fn walk(
    from: &Path,
    into: &Path,
    prefix: &str,
    keep: &dyn Fn(&str) -> bool,
    out: &mut Vec<(String, FileEntry)>,
) -> Result<(), SnapshotError> {
    let mut entries: Vec<_> = std::fs::read_dir(from)
        .map_err(SnapshotError::io(from))?
        .collect::<Result<_, _>>()
        .map_err(SnapshotError::io(from))?;
    entries.sort_by_key(|e| e.file_name());
    private_dir(into)?;
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = format!("{prefix}{name}");
        if !keep(&rel) {
            continue;
        }
        let path = entry.path();
        let kind = entry.file_type().map_err(SnapshotError::io(&path))?;
        if kind.is_dir() {
            walk(&path, &into.join(&name), &format!("{rel}/"), keep, out)?;
        } else if kind.is_file() {
            let entry = copy_file(&path, &into.join(&name))?;
            out.push((rel, entry));
        }
    }
    Ok(())
}

/// Copies one file, hashing what it copies, and gives the copy the original's mode.
fn copy_file(from: &Path, to: &Path) -> Result<FileEntry, SnapshotError> {
    let mut src = crate::files::open_regular(from).map_err(SnapshotError::io(from))?;
    let mode = src
        .metadata()
        .map_err(SnapshotError::io(from))?
        .permissions()
        .mode();
    // The original's mode at creation (the umask may only take bits away, which the
    // `set_permissions` below gives back), and never through a link planted there.
    let mut dst = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode & 0o777)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(to)
        .map_err(SnapshotError::io(to))?;
    let mut engine = sha256::Hash::engine();
    let mut buf = vec![0u8; 1 << 16];
    let mut bytes = 0u64;
    loop {
        let n = src.read(&mut buf).map_err(SnapshotError::io(from))?;
        if n == 0 {
            break;
        }
        engine.input(&buf[..n]);
        dst.write_all(&buf[..n]).map_err(SnapshotError::io(to))?;
        bytes += n as u64;
    }
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(mode))
        .map_err(SnapshotError::io(to))?;
    Ok(FileEntry {
        bytes,
        sha256: sha256::Hash::from_engine(engine).to_string(),
    })
}

/// Creates `dir` and its missing parents 0700: a snapshot's tree holds wallets and
/// keys, so nobody else enters it, from the first directory made.
pub fn private_dir(dir: &Path) -> Result<(), SnapshotError> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(SnapshotError::io(dir))
}

/// A file's sha256 (hex) without copying it.
pub fn hash_file(path: &Path) -> Result<String, SnapshotError> {
    let mut src = crate::files::open_regular(path).map_err(SnapshotError::io(path))?;
    let mut engine = sha256::Hash::engine();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = src.read(&mut buf).map_err(SnapshotError::io(path))?;
        if n == 0 {
            break;
        }
        engine.input(&buf[..n]);
    }
    Ok(sha256::Hash::from_engine(engine).to_string())
}
