//! etcd for nodes whose driver asks for it (LND: `--db.backend=etcd`): one server per
//! run, or a cluster of `etcd: { members: N }` members, each a process of its own
//! (its process group, its data and log in `<run_dir>/<member>/`, stopped by `down`
//! after the nodes). Every node gets its own key prefix (its name as the namespace).
//! Client and peer URLs are on 127.0.0.1 only, plain HTTP. The binary is the build
//! cache's (`scripts/build-nodes.sh`) or the one on PATH (Debian's `etcd-server`).
//! The command line and member names are shared with the docker runtime.

use super::super::RuntimeError;
use super::process::Proc;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

/// The server's binary.
pub const BINARY: &str = "etcd";
/// The name of a single server (and the prefix of a cluster's members).
pub const NAME: &str = "etcd";
const READY_TIMEOUT: Duration = Duration::from_secs(60);
const HINT: &str = "install Debian's etcd-server package (scripts/setup.sh does)";

/// The members' names: `etcd` alone, `etcd-1` ... `etcd-N` in a cluster. Also their
/// directories, hostnames and the names their resources are reported under.
pub fn member_names(members: u32) -> Vec<String> {
    if members <= 1 {
        return vec![NAME.to_string()];
    }
    (1..=members).map(|i| format!("{NAME}-{i}")).collect()
}

/// Where one member listens and what it tells the others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub name: String,
    /// `host:port` clients (the nodes) dial.
    pub client: String,
    /// `host:port` the other members dial.
    pub peer: String,
    /// The address both listeners bind (`127.0.0.1`, or `0.0.0.0` in a container).
    pub bind: String,
}

/// The command line of `member` of `cluster` (every member, itself included), its data
/// in `data_dir`. LND's own guide asks for the larger transaction and request limits:
/// one LND transaction can touch thousands of keys.
pub fn args(member: &Member, cluster: &[Member], data_dir: &str, token: &str) -> Vec<String> {
    let port = |addr: &str| addr.rsplit(':').next().unwrap_or_default().to_string();
    let initial: Vec<String> = cluster
        .iter()
        .map(|m| format!("{}=http://{}", m.name, m.peer))
        .collect();
    [
        "--name",
        &member.name,
        "--data-dir",
        data_dir,
        "--listen-client-urls",
        &format!("http://{}:{}", member.bind, port(&member.client)),
        "--advertise-client-urls",
        &format!("http://{}", member.client),
        "--listen-peer-urls",
        &format!("http://{}:{}", member.bind, port(&member.peer)),
        "--initial-advertise-peer-urls",
        &format!("http://{}", member.peer),
        "--initial-cluster",
        &initial.join(","),
        "--initial-cluster-state",
        "new",
        "--initial-cluster-token",
        token,
        "--max-txn-ops",
        "16384",
        "--max-request-bytes",
        "104857600",
        "--logger",
        "zap",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// The member the `index`th node on etcd is given: one each, in turn. One endpoint per
/// node, not the list: LND's client balances its requests over the endpoints it is
/// given, and a transaction that read at a revision one member has, asking a member
/// still behind, gets "required revision is a future revision" (LND v0.21.1 then
/// stops, or crashes in its wallet). Writes still go through the cluster's quorum.
pub fn host_for(cluster: &[Member], index: usize) -> String {
    cluster[index % cluster.len()].client.clone()
}

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

    fn cluster(n: u32) -> Vec<Member> {
        member_names(n)
            .into_iter()
            .enumerate()
            .map(|(i, name)| Member {
                name,
                client: format!("127.0.0.1:{}", 2000 + i),
                peer: format!("127.0.0.1:{}", 3000 + i),
                bind: "127.0.0.1".into(),
            })
            .collect()
    }

    #[test]
    fn a_single_server_is_etcd_and_a_cluster_is_numbered() {
        assert_eq!(member_names(1), vec!["etcd"]);
        assert_eq!(member_names(3), vec!["etcd-1", "etcd-2", "etcd-3"]);
    }

    #[test]
    fn every_member_lists_the_whole_cluster_and_listens_on_loopback() {
        let all = cluster(3);
        let args = args(&all[1], &all, "/run/etcd-2/data", "lnbench-r1");
        let value = |flag: &str| {
            let at = args.iter().position(|a| a == flag).unwrap();
            args[at + 1].clone()
        };
        assert_eq!(value("--name"), "etcd-2");
        assert_eq!(value("--listen-client-urls"), "http://127.0.0.1:2001");
        assert_eq!(value("--listen-peer-urls"), "http://127.0.0.1:3001");
        assert_eq!(
            value("--initial-cluster"),
            "etcd-1=http://127.0.0.1:3000,etcd-2=http://127.0.0.1:3001,\
             etcd-3=http://127.0.0.1:3002"
        );
        assert_eq!(value("--data-dir"), "/run/etcd-2/data");
        let given: Vec<String> = (0..4).map(|i| host_for(&all, i)).collect();
        assert_eq!(
            given,
            [
                "127.0.0.1:2000",
                "127.0.0.1:2001",
                "127.0.0.1:2002",
                "127.0.0.1:2000"
            ]
        );
    }

    #[test]
    fn the_version_is_read_from_its_first_line() {
        let out = "etcd Version: 3.4.23\nGit SHA: Not provided\nGo Version: go1.19.8\n";
        assert_eq!(version_in(out).as_deref(), Some("3.4.23"));
        assert_eq!(version_in("nothing"), None);
    }
}
