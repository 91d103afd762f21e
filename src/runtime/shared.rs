//! Helpers every runtime that starts nodes uses, whatever it starts them in: log tails,
//! random names and secrets, private files and directories, the run directory's
//! removal, async work from `Drop`, which database servers the nodes need, and the
//! list `lnbench-tui down` prints. One home, so no runtime imports another's.

pub mod container;
pub mod etcd;
pub mod images;
pub mod proxy;

use super::RuntimeError;
use crate::scenario::NodeSpec;
use bitcoin::hex::DisplayHex;
use rand::RngCore;
use std::io::Write;
use std::path::Path;

/// The last `lines` lines of a log file (empty if it cannot be read), redacted
/// ([`crate::redact::redact_text`]): errors quote it, and errors reach the terminal
/// and the report.
pub fn tail(path: &Path, lines: usize) -> String {
    // Only the end matters, and only the end is read: logs can be large.
    let Ok(bytes) = crate::files::read_tail(path, 64 * 1024) else {
        return String::new();
    };
    let text = String::from_utf8_lossy(&bytes);
    let all: Vec<&str> = text.lines().collect();
    crate::redact::redact_text(&all[all.len().saturating_sub(lines)..].join("\n"))
}

/// A cleanup at drop that failed (`Some(error)`) or did not finish in time (`None`):
/// what is left carries this process's token, so its lock file stays for `down`, and
/// the user is told to run it.
pub(crate) fn cleanup_left_behind(error: Option<&dyn std::fmt::Display>) {
    crate::leftovers::lock::left_behind();
    match error {
        Some(e) => crate::lines::errln!("cleanup: {e}; run `lnbench-tui down` to remove leftovers"),
        None => crate::lines::errln!(
            "cleanup did not finish; run `lnbench-tui down` to remove leftovers"
        ),
    }
}

/// A new random password (16 bytes in hex), registered as a secret of the run, so
/// that no report, error or log tail the tool prints shows it.
pub fn new_password() -> String {
    let password = random_hex(16);
    crate::redact::register_secret(&password);
    password
}

/// `bytes` random bytes as lowercase hex (run ids, passwords).
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buf);
    buf.to_lower_hex_string()
}

/// Writes `bytes` to `path`, readable and writable by the owner only (0600), also
/// when the file existed with wider permissions.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(bytes)
}

/// For `Drop`, which cannot await: runs the future `work` makes on a thread of its own
/// with its own async runtime, and waits for it at most `limit`. None when it did not
/// finish by then (or no thread or runtime could be made).
pub(crate) fn block_on_thread<T, F>(
    name: &str,
    limit: std::time::Duration,
    work: impl FnOnce() -> F + Send + 'static,
) -> Option<T>
where
    F: std::future::Future<Output = T>,
    T: Send + 'static,
{
    let (done, wait) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            let _ = done.send(rt.block_on(work()));
        })
        .ok()?;
    wait.recv_timeout(limit).ok()
}

/// A private (0700) directory `<run dir>/<name>` for the credentials of a node (or
/// the chain) that runs in a container or a pod.
pub(crate) fn private_dir(
    run_dir: &std::path::Path,
    name: &str,
) -> Result<std::path::PathBuf, RuntimeError> {
    use std::os::unix::fs::PermissionsExt;
    let dir = run_dir.join(name);
    let io = |source| RuntimeError::Io {
        path: dir.clone(),
        source,
    };
    std::fs::create_dir_all(&dir).map_err(io)?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).map_err(io)?;
    Ok(dir)
}

/// Removes a run directory at teardown (gone already is fine).
pub(crate) async fn remove_run_dir(run_dir: &std::path::Path) -> Result<(), RuntimeError> {
    match tokio::fs::remove_dir_all(run_dir).await {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(RuntimeError::Io {
            path: run_dir.to_path_buf(),
            source,
        }),
    }
}

/// Which nodes need PostgreSQL from the runtime.
pub mod postgres {
    use super::NodeSpec;

    /// In a node's data dir of a snapshot: its PostgreSQL database as a plain SQL
    /// dump, loaded into the restored run's new database before the node starts.
    pub const SNAPSHOT_DUMP: &str = "snapshot-postgres.sql";

    /// Whether any of `nodes` needs a database from the runtime (its driver says so
    /// from its arguments).
    pub fn wanted_by(nodes: &[NodeSpec]) -> bool {
        nodes.iter().any(wants)
    }

    /// Whether `node` needs a database from the runtime: `database: postgres`, or its
    /// arguments ask for one of an implementation with a PostgreSQL backend.
    pub fn wants(node: &NodeSpec) -> bool {
        node.database == crate::node::Database::Postgres
            || (crate::node::driver(node.implementation).postgres())
                .is_some_and(|p| p.wanted_by(&node.args))
    }

    /// The PostgreSQL backend of `node`'s implementation, which a node that
    /// [`wants`] a database needs; the error names the implementation that has none
    /// (validation refuses `database: postgres` for it first).
    pub fn backend(
        node: &NodeSpec,
    ) -> Result<&'static dyn crate::node::driver::Postgres, crate::runtime::RuntimeError> {
        crate::node::driver(node.implementation)
            .postgres()
            .ok_or_else(|| crate::runtime::RuntimeError::Unsupported {
                what: format!("node {} on PostgreSQL", node.name),
                why: format!("{} has no PostgreSQL backend", node.implementation),
                hint: "remove database: postgres from this node".into(),
            })
    }
}

/// One removed thing, for `down`'s list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    /// `container`, `network` or `volume`.
    pub kind: &'static str,
    pub name: String,
    /// The run it belonged to.
    pub run: String,
}

impl std::fmt::Display for Removed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} (run {})", self.kind, self.name, self.run)
    }
}

/// What `lnbench-tui down` did.
#[derive(Debug, Default)]
pub struct Down {
    pub removed: Vec<Removed>,
    /// Runs left alone, with why: `(run id, reason)`.
    pub kept: Vec<(String, String)>,
    /// Other users' runs removed (under `all`): `(run id, whose)`.
    pub others: Vec<(String, String)>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn tail_gives_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("output.log");
        std::fs::write(&log, "1\n2\n3\n4\n").unwrap();
        assert_eq!(tail(&log, 2), "3\n4");
        assert_eq!(tail(&log, 10), "1\n2\n3\n4");
        assert_eq!(tail(&dir.path().join("none"), 3), "");
    }

    #[test]
    fn a_log_tail_shows_no_secret_of_the_run() {
        let password = new_password();
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("output.log");
        let text = format!(
            "[INF] starting\n[DBG] rpc auth with {password}\n[DBG] rpcpass = hunter2hunter2\n"
        );
        std::fs::write(&log, text).unwrap();
        let tail = tail(&log, 10);
        assert!(tail.starts_with("[INF] starting"), "{tail}");
        assert!(!tail.contains(&password), "{tail}");
        assert!(!tail.contains("hunter2hunter2"), "{tail}");
    }

    #[test]
    fn write_private_is_owner_only_even_over_a_wider_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("credential");
        std::fs::write(&path, b"old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_private(&path, b"secret").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(std::fs::read(&path).unwrap(), b"secret");
    }

    #[test]
    fn block_on_thread_gives_the_result_or_none_after_the_limit() {
        let quick = block_on_thread("quick", Duration::from_secs(10), || async { 7 });
        assert_eq!(quick, Some(7));
        let slow = block_on_thread("slow", Duration::from_millis(50), || async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            7
        });
        assert_eq!(slow, None);
    }
}
