//! Files the local runtime writes for a process before it starts (config files, the
//! chain's RPC certificate), and the chain's command-line client beside its binary.

use super::RuntimeError;
use std::path::Path;

/// Writes a P-256 certificate and key for btcd's RPC listener (btcd would make a
/// P-521 one, which rustls with ring cannot verify).
pub(in crate::runtime) fn write_rpc_cert(
    cert_path: &Path,
    key_path: &Path,
) -> Result<(), RuntimeError> {
    let (cert, key) =
        crate::tls::self_signed_pem(&["localhost", "127.0.0.1"]).map_err(|e| RuntimeError::Io {
            path: cert_path.to_path_buf(),
            source: std::io::Error::other(e),
        })?;
    for (path, pem) in [(cert_path, cert), (key_path, key)] {
        std::fs::write(path, pem).map_err(|source| RuntimeError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    }
    Ok(())
}

/// Adds `extra` to `files`: appended to the file of the same path, else a file of its own.
pub(in crate::runtime) fn merge(
    files: &mut Vec<crate::chain::ConfigFile>,
    extra: crate::chain::ConfigFile,
) {
    match files.iter_mut().find(|f| f.path == extra.path) {
        Some(f) => {
            if !f.content.ends_with('\n') && !f.content.is_empty() {
                f.content.push('\n');
            }
            f.content.push_str(&extra.content);
        }
        None => files.push(extra),
    }
}

/// Writes each config file into `dir`, readable by the owner only, refusing a path that
/// exists (a planted file or symlink is never written through).
pub(super) fn write_config_files(
    dir: &Path,
    files: &[crate::chain::ConfigFile],
) -> Result<(), RuntimeError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    for file in files {
        let path = dir.join(file.path);
        let io = |source| RuntimeError::Io {
            path: path.clone(),
            source,
        };
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(io)?;
        f.write_all(file.content.as_bytes()).map_err(io)?;
    }
    Ok(())
}

/// The files the local runtime writes into the chain's and each node's directory at
/// every start (with that run's passwords), as `<name>/<path>`: a snapshot leaves them
/// out, and the run it is restored into writes them again. With them, where a node on
/// the run's PostgreSQL notes the server's address (the restored run's is another).
pub fn written_at_start(scenario: &crate::scenario::Scenario) -> Vec<String> {
    use crate::chain::{CHAIN_NAME, ChainAccess, ChainLaunch};
    let chain = crate::chain::driver(scenario.chain.kind);
    let launch = ChainLaunch {
        dir: "",
        rpc_listen: "",
        p2p_listen: "",
        zmq_listen: None,
        user: "",
        pass: "",
        mining_addr: "",
    };
    let mut out: Vec<String> = (chain.config_files(&launch).iter())
        .map(|f| format!("{CHAIN_NAME}/{}", f.path))
        .collect();
    let access = ChainAccess::unset(scenario.chain.kind);
    for spec in &scenario.nodes {
        let launch = crate::node::driver::NodeLaunch {
            name: &spec.name,
            dir: "",
            rpc_listen: "",
            p2p_listen: "",
            chain: &access,
            binary: None,
        };
        let driver = crate::node::driver(spec.implementation);
        let files = driver.config_files(&launch);
        out.extend(files.iter().map(|f| format!("{}/{}", spec.name, f.path)));
        if super::super::shared::postgres::wants(spec) {
            // A node that wants a database has a PostgreSQL backend (validation).
            let noted = (driver.postgres())
                .map(|p| p.address_files())
                .unwrap_or_default()
                .iter();
            out.extend(noted.map(|f| format!("{}/{f}", spec.name)));
        }
    }
    out
}

/// The chain's command-line client beside its binary (the build cache holds both),
/// if it has one and it is there; else the node looks for it on its own PATH.
pub(super) fn cli_beside(chain_binary: &Path, cli: Option<&str>) -> Option<String> {
    let path = chain_binary.with_file_name(cli?);
    path.is_file().then(|| path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::ConfigFile;

    #[test]
    fn where_eclair_notes_its_postgresql_server_is_left_out_of_a_snapshot() {
        let text = |database: &str| {
            format!(
                "name: s\nruntime: local\nchain:\n  implementation: bitcoind\nnodes:\n  \
                 carol:\n    implementation: eclair\n{database}  bob:\n    implementation: cln\n\
                 channels:\n  - {{ from: carol, to: bob, capacity_sat: 1000000 }}\nworkload:\n  kind: invoice\n  senders: [carol]\n  receiver: bob\n  \
                 amount_msat: 1000\n  concurrency: 1\n  stop:\n    payments: 1\n"
            )
        };
        let left_out = |database: &str| {
            let scenario = crate::scenario::parse(
                Path::new("s.yaml"),
                &text(database),
                crate::runtime::capabilities,
            )
            .expect("scenario parses");
            written_at_start(&scenario)
        };
        let noted = "carol/regtest/last_jdbcurl".to_string();
        assert!(left_out("    database: postgres\n").contains(&noted));
        // On SQLite the address is the data dir's own: kept.
        let on_sqlite = left_out("");
        assert!(!on_sqlite.contains(&noted), "{on_sqlite:?}");
        assert!(
            on_sqlite.iter().any(|f| f.starts_with("carol/")),
            "{on_sqlite:?}"
        );
    }

    #[test]
    fn a_file_of_the_same_path_gets_the_lines_appended() {
        let file = |path, content: &str| ConfigFile {
            path,
            content: content.to_string(),
        };
        let mut files = vec![file("lnd.conf", "[Btcd]\nbtcd.rpcpass=x")];
        merge(&mut files, file("lnd.conf", "[etcd]\ndb.etcd.pass=y\n"));
        merge(&mut files, file("other.conf", "a=b\n"));
        assert_eq!(files.len(), 2);
        assert_eq!(
            files[0].content,
            "[Btcd]\nbtcd.rpcpass=x\n[etcd]\ndb.etcd.pass=y\n"
        );
        assert_eq!(files[1].path, "other.conf");
    }
}
