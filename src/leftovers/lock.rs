//! Whether a run's lnbench-tui is alive, told by a lock it holds rather than by its
//! pid and host name (a tool in a container shares the host's name and may be pid 1; a
//! renamed binary has another name). A live tool holds an exclusive `flock` on a file:
//! the owner file in a local run directory, and for Docker and Kubernetes a lock file
//! named by a random token in the cache (`<cache>/owners/<token>.lock`) whose token
//! the run's objects carry. The kernel drops the lock when the process dies, however
//! it dies, so `down` judges a run by trying to take it.

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// What a lock says about its holder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lock {
    /// Someone holds it: the run's tool is alive.
    Held,
    /// Nobody holds it: the run's tool is gone.
    Free,
    /// No such lock file here: the run was started from another machine or container
    /// (or its file was removed), and whether it is alive cannot be told from here.
    Missing,
}

/// Tries to take an exclusive lock on `path` without waiting, and gives it back at once.
pub fn probe(path: &Path) -> Lock {
    // In the shared temp dir: a FIFO planted there must not stall the probe.
    let file = match crate::files::open_regular(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lock::Missing,
        // Unreadable (another user's) or not a file: not ours to judge, so as if held.
        Err(_) => return Lock::Held,
    };
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(_unlocked_on_drop) => Lock::Free,
        Err((_, Errno::EWOULDBLOCK)) => Lock::Held,
        Err(_) => Lock::Held,
    }
}

/// Locks this process holds until it exits: a local run directory's owner file each.
static HELD: Mutex<Vec<(PathBuf, Flock<File>)>> = Mutex::new(Vec::new());

/// Takes the lock of `path` (a file this process just created) for the rest of the
/// process's life, or until [`drop_lock`].
pub fn hold(path: &Path) -> std::io::Result<()> {
    let file = std::fs::OpenOptions::new().read(true).open(path)?;
    let lock = Flock::lock(file, FlockArg::LockExclusiveNonblock)
        .map_err(|(_, e)| std::io::Error::from_raw_os_error(e as i32))?;
    HELD.lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((path.to_path_buf(), lock));
    Ok(())
}

/// Gives up the lock of `path`, if this process holds it.
pub fn drop_lock(path: &Path) {
    HELD.lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|(p, _)| p != path);
}

/// The directory of the token lock files: `<cache>/owners` (the cache of
/// [`crate::cache::cache_bin_dir`]). Unit tests get a directory of their own instead,
/// removed when the test process exits, so a test run leaves nothing in the cache.
pub fn owners_dir() -> Option<PathBuf> {
    #[cfg(test)]
    return Some(test_owners_dir());
    #[cfg(not(test))]
    Some(crate::cache::cache_bin_dir()?.parent()?.join("owners"))
}

/// The unit tests' token directory: one per user in the temporary directory, swept
/// of the free token files of earlier test processes when a test process first uses it.
#[cfg(test)]
fn test_owners_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("lnbench-test-owners-{}", super::uid()));
        remove_free_tokens_in(&dir);
        dir
    })
    .clone()
}

/// Removes the token lock files in `dir` that nobody holds (their tools are gone),
/// each while holding its lock; returns the files removed. Other files stay.
pub fn remove_free_tokens_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let token = name.to_str().and_then(|n| n.strip_suffix(".lock"));
        let Some(path) = token.and_then(|t| token_file(dir, t)) else {
            continue;
        };
        let Ok(file) = crate::files::open_regular(&path) else {
            continue;
        };
        if let Ok(_held) = Flock::lock(file, FlockArg::LockExclusiveNonblock)
            && std::fs::remove_file(&path).is_ok()
        {
            removed.push(path);
        }
    }
    removed.sort();
    removed
}

/// A token's lock file in `dir`; `None` for a token that is not 32 hex digits (a label
/// someone edited must not name a path).
pub fn token_file(dir: &Path, token: &str) -> Option<PathBuf> {
    (token.len() == 32 && token.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| dir.join(format!("{token}.lock")))
}

/// This process's token and its held lock file.
struct Token {
    token: String,
    path: PathBuf,
    _lock: Flock<File>,
}

static TOKEN: Mutex<Option<Token>> = Mutex::new(None);
/// Set when a teardown left something for `down`: the token's file then stays.
static LEFT_BEHIND: AtomicBool = AtomicBool::new(false);

/// Creates a fresh token's lock file in `dir` (0700, the file 0600, created only if
/// nothing is at its path) and takes its lock.
fn new_token_in(dir: &Path) -> std::io::Result<Token> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let token = format!("{:032x}", rand::random::<u128>());
    let path = token_file(dir, &token).expect("32 hex digits");
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(&path)?;
    let lock = Flock::lock(file, FlockArg::LockExclusiveNonblock)
        .map_err(|(_, e)| std::io::Error::from_raw_os_error(e as i32))?;
    Ok(Token {
        token,
        path,
        _lock: lock,
    })
}

/// This process's token (made, and its lock taken, on first use), for the labels of
/// what a Docker or Kubernetes run creates; `None` when there is no cache directory
/// to put its lock in (then `down` judges by host name and pid, as before tokens).
pub fn token() -> Option<String> {
    let mut slot = TOKEN.lock().unwrap_or_else(|e| e.into_inner());
    if slot.is_none() {
        *slot = new_token_in(&owners_dir()?)
            .map_err(|e| tracing::warn!("no owner lock for this run: {e}"))
            .ok();
    }
    slot.as_ref().map(|t| t.token.clone())
}

/// Whether the tool that holds `token` is alive, judged by its lock file in `dir`.
pub fn probe_token_in(dir: &Path, token: &str) -> Lock {
    token_file(dir, token).map_or(Lock::Missing, |p| probe(&p))
}

/// Whether the tool that holds `token` is alive (its lock file in [`owners_dir`]).
pub fn probe_token(token: &str) -> Lock {
    owners_dir().map_or(Lock::Missing, |d| probe_token_in(&d, token))
}

/// Notes that a teardown left something behind for `down`: the token's lock file then
/// stays at exit, so `down` can tell its runs are gone.
pub fn left_behind() {
    LEFT_BEHIND.store(true, Ordering::SeqCst);
}

/// At a clean exit: removes this process's token file, unless a teardown left
/// something that carries the token.
pub fn let_go() {
    let mut slot = TOKEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(t) = slot.take()
        && !LEFT_BEHIND.load(Ordering::SeqCst)
    {
        let _ = std::fs::remove_file(&t.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_token_lock_is_held_and_a_dropped_one_free() {
        let tmp = tempfile::tempdir().unwrap();
        let held = new_token_in(tmp.path()).unwrap();
        assert_eq!(probe_token_in(tmp.path(), &held.token), Lock::Held);
        let token = held.token.clone();
        drop(held);
        assert_eq!(probe_token_in(tmp.path(), &token), Lock::Free);
        let other = format!("{:032x}", 7u128);
        assert_eq!(probe_token_in(tmp.path(), &other), Lock::Missing);
        // A token that is not one cannot name a path.
        assert_eq!(
            probe_token_in(tmp.path(), "../../etc/passwd"),
            Lock::Missing
        );
    }

    #[test]
    fn the_token_file_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("owners");
        let held = new_token_in(&dir).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&held.path), 0o600);
    }

    #[test]
    fn only_free_token_files_are_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let held = new_token_in(tmp.path()).unwrap();
        let free = new_token_in(tmp.path()).unwrap();
        let free_path = free.path.clone();
        drop(free);
        let other = tmp.path().join("notes.lock");
        std::fs::write(&other, "").unwrap();
        assert_eq!(remove_free_tokens_in(tmp.path()), vec![free_path.clone()]);
        assert!(!free_path.exists());
        assert!(held.path.exists(), "a held token's file was removed");
        assert!(other.exists(), "a file that is no token's was removed");
        assert_eq!(probe_token_in(tmp.path(), &held.token), Lock::Held);
        assert!(remove_free_tokens_in(&tmp.path().join("absent")).is_empty());
    }
}
