//! etcd for nodes whose driver asks for it (LND: `--db.backend=etcd`): one server per
//! run, or a cluster of `etcd: { members: N }` members, each a process of its own
//! (its process group, its data and log in `<run_dir>/<member>/`, stopped by `down`
//! after the nodes). Every node gets its own key prefix (its name as the namespace).
//! Client and peer URLs are on 127.0.0.1 only, plain HTTP. The binary is the build
//! cache's (`scripts/build-nodes.sh`) or the one on PATH (Debian's `etcd-server`).
//! The command line and member names are shared with the docker runtime
//! (`shared::etcd`).

use super::super::RuntimeError;
pub use super::super::shared::etcd::NAME;
use super::super::shared::etcd::{Member, args, member_names};
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
#[derive(Debug)]
pub struct Etcd {
    /// One per member, in member order.
    pub procs: Vec<Proc>,
    pub members: Vec<Member>,
    pub version: String,
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
        };
        etcd.wait_healthy().await?;
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

    #[test]
    fn the_version_is_read_from_its_first_line() {
        let out = "etcd Version: 3.4.23\nGit SHA: Not provided\nGo Version: go1.19.8\n";
        assert_eq!(version_in(out).as_deref(), Some("3.4.23"));
        assert_eq!(version_in("nothing"), None);
    }
}
