//! Toxiproxy's API is reachable by the run only: the local runtime's fault proxy
//! serves its HTTP API on a unix socket in a 0700 directory of the run, and listens on
//! TCP only for the proxies the run creates (they carry the nodes' traffic).

mod common;

use common::built_or_not_run;
use lnbench_tui::links::toxiproxy::Toxiproxy;
use lnbench_tui::runtime::local::{LocalRuntime, TOXIPROXY};
use lnbench_tui::runtime::{Runtime, Servers};
use lnbench_tui::scenario::LinkShape;
use std::collections::HashSet;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::Path;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The TCP ports process `pid` listens on: its socket inodes (`/proc/<pid>/fd`) matched
/// against the LISTEN rows of `/proc/net/tcp` and `/proc/net/tcp6`.
fn tcp_listen_ports(pid: u32) -> Vec<u16> {
    let inodes: HashSet<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("the fault proxy's fds")
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter_map(|l| {
            let l = l.to_string_lossy().into_owned();
            Some(l.strip_prefix("socket:[")?.strip_suffix(']')?.to_string())
        })
        .collect();
    let mut ports = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for row in text.lines().skip(1) {
            let f: Vec<&str> = row.split_whitespace().collect();
            // local_address is f[1] (`0100007F:1F90`), st is f[3] (0A: LISTEN), inode f[9].
            if f.len() > 9 && f[3] == "0A" && inodes.contains(f[9]) {
                let port = f[1].rsplit(':').next().unwrap();
                ports.push(u16::from_str_radix(port, 16).unwrap());
            }
        }
    }
    ports.sort_unstable();
    ports
}

/// `GET path` over the unix socket `socket`, without the project's client: the body.
async fn get_over_socket(socket: &Path, path: &str) -> String {
    let mut stream = tokio::net::UnixStream::connect(socket)
        .await
        .expect("connect");
    let request = format!("GET {path} HTTP/1.0\r\nHost: toxiproxy\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.0 200"), "{response}");
    response
        .split("\r\n\r\n")
        .nth(1)
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn the_fault_proxy_api_is_a_private_unix_socket_and_no_tcp_port() {
    if !built_or_not_run(
        "the_fault_proxy_api_is_a_private_unix_socket_and_no_tcp_port",
        TOXIPROXY,
        "scripts/build-nodes.sh",
    ) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let mut rt = LocalRuntime::new(work.path().join("run"), false);
    let host = rt
        .start_link_proxy(1)
        .await
        .expect("the fault proxy starts");
    let pid = *rt.pids().last().expect("the fault proxy's pid");

    // (a) No TCP listener once the API answers: it is on the socket only.
    assert_eq!(
        tcp_listen_ports(pid),
        Vec::<u16>::new(),
        "the fault proxy listens on TCP with no proxy created (its API: {:?})",
        host.api
    );

    // (b) The socket is ours, 0600, in a directory of the run with mode 0700.
    let socket = Path::new(&host.api);
    let dir = socket.parent().expect("the socket's directory");
    assert!(
        dir.starts_with(work.path().join("run")),
        "{}",
        dir.display()
    );
    let dir_meta = std::fs::symlink_metadata(dir).unwrap();
    assert!(dir_meta.is_dir());
    assert_eq!(dir_meta.permissions().mode() & 0o777, 0o700);
    let meta = std::fs::symlink_metadata(socket).unwrap();
    assert!(meta.file_type().is_socket());
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(meta.uid(), dir_meta.uid());

    // (c) The client creates a proxy and sets a toxic through the socket.
    let upstream = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream = upstream.local_addr().unwrap().to_string();
    let client = Toxiproxy::new(&host.api).unwrap();
    let listen = &host.ports[0].listen;
    client
        .create("alice->bob", listen, &upstream)
        .await
        .unwrap();
    let shape = LinkShape {
        latency: Duration::from_millis(50),
        ..LinkShape::default()
    };
    client.set_shape("alice->bob", &shape).await.unwrap();
    let toxics = get_over_socket(socket, "/proxies/alice->bob/toxics").await;
    let toxics: serde_json::Value = serde_json::from_str(&toxics).unwrap();
    let latency: Vec<_> = (toxics.as_array().unwrap().iter())
        .filter(|t| t["type"] == "latency")
        .map(|t| {
            (
                t["stream"].as_str().unwrap(),
                t["attributes"]["latency"].as_u64(),
            )
        })
        .collect();
    assert_eq!(
        latency,
        [("upstream", Some(50)), ("downstream", Some(50))],
        "{toxics}"
    );
    // The proxy listens on loopback TCP: the one TCP listener of the process.
    let port: u16 = listen.rsplit(':').next().unwrap().parse().unwrap();
    assert_eq!(tcp_listen_ports(pid), vec![port]);

    rt.down().await.unwrap();
    assert!(!socket.exists(), "the socket is gone with the run");
}

/// The server itself refuses a socket directory others can enter, and a socket path
/// that exists already: it never serves the API where another user could reach it.
#[test]
fn the_server_refuses_a_socket_directory_others_can_enter() {
    let test = "the_server_refuses_a_socket_directory_others_can_enter";
    if !built_or_not_run(test, TOXIPROXY, "scripts/build-nodes.sh") {
        return;
    }
    let server = common::cache_dir().join("bin").join(TOXIPROXY);
    let work = tempfile::tempdir().unwrap();
    let open = work.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
    let taken = work.path().join("taken");
    std::fs::create_dir(&taken).unwrap();
    std::fs::set_permissions(&taken, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(taken.join("api.sock"), "").unwrap();
    for (socket, why) in [
        (open.join("api.sock"), "must be 0700"),
        (taken.join("api.sock"), "exists already"),
    ] {
        let out = std::process::Command::new(&server)
            .arg("-socket")
            .arg(&socket)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{}: {stderr}", socket.display());
        assert!(stderr.contains(why), "{stderr}");
    }
    assert!(!open.join("api.sock").exists());
}
