//! Helpers every runtime that starts nodes uses, whatever it starts them in: log tails,
//! random names and secrets, private files, which database servers the nodes need, and
//! the list `lnbench-tui down` prints. One home, so no runtime imports another's.

pub mod container;

use crate::scenario::NodeSpec;
use bitcoin::hex::DisplayHex;
use rand::RngCore;
use std::io::Write;
use std::path::Path;

/// The last `lines` lines of a log file (empty if it cannot be read).
pub fn tail(path: &Path, lines: usize) -> String {
    let Ok(bytes) = std::fs::read(path) else {
        return String::new();
    };
    // Only the end matters; logs can be large.
    let start = bytes.len().saturating_sub(64 * 1024);
    let text = String::from_utf8_lossy(&bytes[start..]);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
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

/// Which nodes need PostgreSQL from the runtime.
pub mod postgres {
    use super::NodeSpec;

    /// Whether any of `nodes` needs a database from the runtime (its driver says so
    /// from its arguments).
    pub fn wanted_by(nodes: &[NodeSpec]) -> bool {
        nodes.iter().any(wants)
    }

    /// Whether `node` needs a database from the runtime.
    pub fn wants(node: &NodeSpec) -> bool {
        node.database == crate::node::Database::Postgres
            || crate::node::driver(node.implementation).wants_postgres(&node.args)
    }
}

/// Which nodes need etcd from the runtime.
pub mod etcd {
    use super::NodeSpec;

    /// Whether any of `nodes` needs etcd from the runtime (its driver says so from its
    /// arguments).
    pub fn wanted_by(nodes: &[NodeSpec]) -> bool {
        nodes.iter().any(wants)
    }

    /// Whether `node` needs etcd from the runtime.
    pub fn wants(node: &NodeSpec) -> bool {
        crate::node::driver(node.implementation).wants_etcd(&node.args)
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
}
