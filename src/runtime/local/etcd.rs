//! etcd for nodes whose driver asks for it (LND: `--db.backend=etcd`): one server per
//! run, or a cluster of `etcd: { members: N }` members, each a process of its own
//! (its process group, its data and log in `<run_dir>/<member>/`, stopped by `down`
//! after the nodes). Every node gets its own key prefix (its name as the namespace).
//! Client and peer URLs are on 127.0.0.1 only, plain HTTP; clients need the run's
//! password (etcd's user auth, turned on once the members are healthy). The binary is the build
//! cache's (`scripts/build-nodes.sh`) or the one on PATH (Debian's `etcd-server`).
//! The command line and member names are shared with the docker runtime
//! (`shared::etcd`).

use super::super::RuntimeError;
pub use super::super::shared::etcd::NAME;
use super::super::shared::etcd::{Member, args, enable_auth, member_names};
use super::process::Proc;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

/// The server's binary.
pub const BINARY: &str = "etcd";
const READY_TIMEOUT: Duration = Duration::from_secs(60);
const HINT: &str = "install Debian's etcd-server package (scripts/setup.sh does)";

/// The version `etcd --version` states (`etcd Version: 3.4.23` -> `3.4.23`).
pub fn version_in(output: &str) -> Option<String> {
    output
        .lines()
        .find_map(|l| l.trim().strip_prefix("etcd Version:"))
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// True when the member at `addr` says it is healthy (it has a leader): more than a
/// port that accepts TCP, which a member of a cluster does before the quorum forms.
async fn healthy(addr: &str) -> bool {
    let ask = async {
        let mut stream = tokio::net::TcpStream::connect(addr).await.ok()?;
        let request = format!("GET /health HTTP/1.0\r\nHost: {addr}\r\n\r\n");
        stream.write_all(request.as_bytes()).await.ok()?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.ok()?;
        Some(answer.contains("\"health\":\"true\""))
    };
    matches!(
        tokio::time::timeout(Duration::from_secs(2), ask).await,
        Ok(Some(true))
    )
}

/// A running server or cluster.
pub struct Etcd {
    /// One per member, in member order.
    pub procs: Vec<Proc>,
    pub members: Vec<Member>,
    pub version: String,
    /// The password of the [`USER`](super::super::shared::etcd::USER) every client
    /// needs (16 random bytes, hex): no request without it is served.
    pub password: String,
}

/// Everything but the password, which a log line or a panic message must not carry.
impl std::fmt::Debug for Etcd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Etcd")
            .field("procs", &self.procs)
            .field("members", &self.members)
            .field("version", &self.version)
            .field("password", &crate::redact::REDACTED)
            .finish()
    }
}

impl Etcd {
    /// Starts `members` members on the free `ports` (two per member: client, peer), each
    /// in `<run_dir>/<member>/`, and waits until every one is healthy.
    pub async fn start(
        run_dir: &Path,
        run_name: &str,
        members: u32,
        ports: &[u16],
    ) -> Result<Etcd, RuntimeError> {
        let what = "etcd (a node has --db.backend=etcd)";
        let binary = super::find_binary(None, BINARY, what, HINT)?;
        let version = version_of(&binary).await;
        let cluster: Vec<Member> = member_names(members)
            .into_iter()
            .zip(ports.chunks(2))
            .map(|(name, p)| Member {
                name,
                client: format!("127.0.0.1:{}", p[0]),
                peer: format!("127.0.0.1:{}", p[1]),
                bind: "127.0.0.1".into(),
            })
            .collect();
        let token = format!("lnbench-{run_name}");
        let mut procs = Vec::with_capacity(cluster.len());
        for member in &cluster {
            let dir = run_dir.join(&member.name);
            std::fs::create_dir_all(&dir).map_err(|source| RuntimeError::Io {
                path: dir.clone(),
                source,
            })?;
            let data = dir.join("data").display().to_string();
            let args = args(member, &cluster, &data, &token);
            let what = format!("etcd member {}", member.name);
            procs.push(Proc::spawn(
                &member.name,
                &what,
                &binary,
                &args,
                dir.join("output.log"),
            )?);
        }
        let mut etcd = Etcd {
            procs,
            members: cluster,
            version,
            // Registered as a secret of the run: reports and log tails never show it.
            password: crate::runtime::shared::new_password(),
        };
        etcd.wait_healthy().await?;
        let first = &etcd.members[0];
        enable_auth(&first.client, &etcd.password)
            .await
            .map_err(|why| RuntimeError::Unsupported {
                what: format!("etcd member {}", first.name),
                why: format!("turning its authentication on failed: {why}"),
                hint: "an etcd of version 3.4 or later is needed".into(),
            })?;
        Ok(etcd)
    }

    async fn wait_healthy(&mut self) -> Result<(), RuntimeError> {
        let deadline = Instant::now() + READY_TIMEOUT;
        for (member, proc) in self.members.iter().zip(self.procs.iter_mut()) {
            let what = format!("etcd member {}", member.name);
            while !healthy(&member.client).await {
                if let Some(status) = proc.exited() {
                    return Err(RuntimeError::exited(what, status, &proc.log));
                }
                if Instant::now() >= deadline {
                    return Err(RuntimeError::not_ready(what, READY_TIMEOUT, &proc.log));
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        Ok(())
    }
}

async fn version_of(binary: &PathBuf) -> String {
    let out = tokio::process::Command::new(binary)
        .arg("--version")
        .kill_on_drop(true)
        .output();
    match tokio::time::timeout(Duration::from_secs(10), out).await {
        Ok(Ok(out)) => version_in(&String::from_utf8_lossy(&out.stdout)).unwrap_or_default(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::super::shared::etcd::{USER, post};

    #[test]
    fn its_debug_form_has_no_password() {
        let etcd = Etcd {
            procs: Vec::new(),
            members: Vec::new(),
            version: "3.4.23".into(),
            password: "0123456789abcdef".into(),
        };
        let debug = format!("{etcd:?}");
        assert!(!debug.contains("0123456789abcdef"), "{debug}");
        assert!(debug.contains(crate::redact::REDACTED), "{debug}");
        assert!(debug.contains("3.4.23"), "{debug}");
    }

    #[test]
    fn the_version_is_read_from_its_first_line() {
        let out = "etcd Version: 3.4.23\nGit SHA: Not provided\nGo Version: go1.19.8\n";
        assert_eq!(version_in(out).as_deref(), Some("3.4.23"));
        assert_eq!(version_in("nothing"), None);
    }

    /// The run's etcd holds LND's wallet and macaroon root key: a client on the machine
    /// without the run's credentials can neither write nor read a key.
    #[tokio::test]
    async fn a_client_without_the_credentials_is_refused() {
        if super::super::find_binary(None, BINARY, "etcd", HINT).is_err() {
            eprintln!("not run: no etcd binary (install etcd-server)");
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let ports = super::super::ports::free_ports(2).unwrap();
        let etcd = Etcd::start(tmp.path(), "auth-test", 1, &ports)
            .await
            .unwrap();
        let addr = etcd.members[0].client.clone();
        // key "k", value "v" (base64).
        let put = r#"{"key":"aw==","value":"dg=="}"#;
        let answer = post(&addr, "/v3/kv/put", put, None).await.unwrap();
        assert!(
            !answer.starts_with("HTTP/1.0 200"),
            "a put without credentials was accepted: {answer}"
        );
        let answer = post(&addr, "/v3/kv/range", r#"{"key":"aw=="}"#, None)
            .await
            .unwrap();
        assert!(
            !answer.starts_with("HTTP/1.0 200"),
            "a read without credentials was answered: {answer}"
        );
        // A wrong password gets no token; the run's password does, and its token writes.
        let login = |pass: &str| serde_json::json!({ "name": USER, "password": pass }).to_string();
        let wrong = post(&addr, "/v3/auth/authenticate", &login("wrong"), None)
            .await
            .unwrap();
        assert!(!wrong.starts_with("HTTP/1.0 200"), "{wrong}");
        let right = post(&addr, "/v3/auth/authenticate", &login(&etcd.password), None)
            .await
            .unwrap();
        let body = right.split("\r\n\r\n").nth(1).unwrap_or_default();
        let token: serde_json::Value = serde_json::from_str(body).expect(&right);
        let token = token["token"].as_str().expect(&right);
        let answer = post(&addr, "/v3/kv/put", put, Some(token)).await.unwrap();
        assert!(answer.starts_with("HTTP/1.0 200"), "{answer}");
    }
}
