//! The fault proxy's API socket, for every runtime that starts Toxiproxy (a local
//! process, a container with the directory mounted): only this user may reach it.

use crate::runtime::RuntimeError;
use std::path::{Path, PathBuf};

/// The fault proxy's image for the docker and kubernetes runtimes, tagged with the
/// Toxiproxy release scripts/build-nodes.sh builds.
pub const IMAGE: &str = "lnbench/toxiproxy:v2.5.0";

/// What the fault proxy is called in errors, on every runtime.
pub const WHAT: &str = "the fault proxy (links: or link faults)";

/// The longest path a unix socket may have (`sun_path` holds 108 bytes with its NUL).
pub const SOCKET_PATH_MAX: usize = 107;

/// `<dir>/api/api.sock`: the directory is created fresh with mode 0700 (an existing
/// one, or a symlink planted there, is refused); the server creates the socket.
pub fn api_socket(dir: &Path) -> Result<PathBuf, RuntimeError> {
    use std::os::unix::fs::DirBuilderExt;
    let private = dir.join("api");
    let socket = private.join("api.sock");
    let io = |source| RuntimeError::Io {
        path: private.clone(),
        source,
    };
    if socket.as_os_str().len() > SOCKET_PATH_MAX {
        return Err(RuntimeError::Unsupported {
            what: WHAT.into(),
            why: format!(
                "its API socket {} is longer than a unix socket's {SOCKET_PATH_MAX} bytes",
                socket.display()
            ),
            hint: "give --run-dir a shorter parent".into(),
        });
    }
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&private)
        .map_err(io)?;
    Ok(socket)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The image's tag is the Toxiproxy release scripts/build-nodes.sh builds.
    #[test]
    fn the_image_is_tagged_with_the_built_release() {
        let go_mod = include_str!("../../../scripts/toxiproxy-unix/go.mod");
        let release = (go_mod.lines())
            .find_map(|l| l.trim().strip_prefix("github.com/Shopify/toxiproxy/v2 "))
            .expect("Toxiproxy in go.mod");
        assert_eq!(IMAGE, format!("lnbench/toxiproxy:{release}"));
    }
}
