//! etcd for the nodes that ask for it, as every runtime that starts it runs it: which
//! nodes need it, the members' names, their command line and which member each node
//! is given.

use crate::scenario::NodeSpec;

/// The name of a single server (and the prefix of a cluster's members).
pub const NAME: &str = "etcd";
/// The user the nodes connect as. etcd's auth needs a `root` user with the `root`
/// role before it can be enabled; the run makes no other.
pub const USER: &str = "root";

/// One HTTP/1.0 POST of the JSON `body` to etcd's gateway at `addr` (`host:port`),
/// with an `Authorization` token if given; the whole answer.
pub async fn post(
    addr: &str,
    path: &str,
    body: &str,
    auth: Option<&str>,
) -> Result<String, String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let ask = async {
        let mut stream = tokio::net::TcpStream::connect(addr).await?;
        let auth = auth
            .map(|t| format!("Authorization: {t}\r\n"))
            .unwrap_or_default();
        let request = format!(
            "POST {path} HTTP/1.0\r\nHost: {addr}\r\n{auth}Content-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await?;
        Ok::<_, std::io::Error>(answer)
    };
    match tokio::time::timeout(std::time::Duration::from_secs(10), ask).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(e)) => Err(format!("etcd at {addr}: {path}: {e}")),
        Err(_) => Err(format!("etcd at {addr}: {path}: no answer within 10 s")),
    }
}

/// Turns etcd's authentication on (for the whole cluster, through the member at
/// `addr`): the `root` role, the [`USER`] with `password` and that role, then auth.
/// From then on every request without a valid token is refused.
pub async fn enable_auth(addr: &str, password: &str) -> Result<(), String> {
    let user = serde_json::json!({ "name": USER, "password": password }).to_string();
    let grant = serde_json::json!({ "user": USER, "role": "root" }).to_string();
    let steps = [
        ("/v3/auth/role/add", r#"{"name":"root"}"#.to_string()),
        ("/v3/auth/user/add", user),
        ("/v3/auth/user/grant", grant),
        ("/v3/auth/enable", "{}".to_string()),
    ];
    for (path, body) in steps {
        let answer = post(addr, path, &body, None).await?;
        if !answer.starts_with("HTTP/1.0 200") && !answer.starts_with("HTTP/1.1 200") {
            let status = answer.lines().next().unwrap_or_default();
            return Err(format!("etcd at {addr}: {path}: {status}"));
        }
    }
    Ok(())
}

/// Whether any of `nodes` needs etcd from the runtime (its driver says so from its
/// arguments).
pub fn wanted_by(nodes: &[NodeSpec]) -> bool {
    nodes.iter().any(wants)
}

/// Whether `node` needs etcd from the runtime.
pub fn wants(node: &NodeSpec) -> bool {
    backend(node).is_some()
}

/// The etcd backend of `node`'s implementation when the node needs the runtime's etcd
/// (its arguments ask for it): how to point it there. None for a node that does not,
/// whether its implementation has no etcd backend or its arguments ask for none.
pub fn backend(node: &NodeSpec) -> Option<&'static dyn crate::node::driver::Etcd> {
    (crate::node::driver(node.implementation).etcd()).filter(|e| e.wanted_by(&node.args))
}

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
}
