//! toxiproxy-unix's `-listen 127.0.0.1:PORT` mode, the one the kubernetes runtime's
//! proxy pod runs (its API on the pod's loopback, reached through a port-forward): any
//! address but the loopback is refused, the API answers there, and a keep-alive
//! connection left idle longer than the server's read timeout (10 s) still serves the
//! next request, so a client that pools connections never sends one on a connection
//! the server is closing (a fault lifted 10 s after it began raced that close).

mod common;

use common::built_or_not_run;
use lnbench_tui::runtime::local::TOXIPROXY;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn binary() -> std::path::PathBuf {
    common::cache_dir().join("bin").join(TOXIPROXY)
}

/// The server, killed when dropped (a failing test leaves nothing running).
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the server on a free loopback port and waits until it accepts.
fn start() -> (Server, u16) {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(binary())
        .args(["-listen", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start toxiproxy-unix");
    let server = Server(child);
    for _ in 0..200 {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return (server, port);
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("toxiproxy-unix -listen 127.0.0.1:{port} did not accept");
}

/// Sends `GET /version` with keep-alive on `stream` and reads one response: its body.
fn version(stream: &mut BufReader<TcpStream>) -> std::io::Result<String> {
    let request = "GET /version HTTP/1.1\r\nHost: toxiproxy\r\n\r\n";
    stream.get_mut().write_all(request.as_bytes())?;
    let mut status = String::new();
    stream.read_line(&mut status)?;
    if !status.starts_with("HTTP/1.1 200") {
        return Err(std::io::Error::other(format!("status line {status:?}")));
    }
    let mut length = 0;
    loop {
        let mut line = String::new();
        stream.read_line(&mut line)?;
        if line == "\r\n" || line.is_empty() {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    stream.read_exact(&mut body)?;
    Ok(String::from_utf8_lossy(&body).into_owned())
}

#[test]
fn the_loopback_api_refuses_other_addresses_and_keeps_idle_connections() {
    let test = "the_loopback_api_refuses_other_addresses_and_keeps_idle_connections";
    if !built_or_not_run(test, TOXIPROXY, "scripts/build-nodes.sh") {
        return;
    }
    for wrong in [
        "0.0.0.0:8474",
        "10.0.0.1:8474",
        "127.0.0.1:0",
        "localhost:8474",
    ] {
        let out = Command::new(binary())
            .args(["-listen", wrong])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "-listen {wrong}: {stderr}");
        assert!(stderr.contains("give 127.0.0.1:PORT"), "{stderr}");
    }
    let both = Command::new(binary())
        .args([
            "-listen",
            "127.0.0.1:8474",
            "-socket",
            "/nonexistent/api.sock",
        ])
        .output()
        .unwrap();
    assert_eq!(both.status.code(), Some(2), "{both:?}");

    let (_server, port) = start();
    let mut conn = BufReader::new(TcpStream::connect(("127.0.0.1", port)).unwrap());
    assert!(version(&mut conn).unwrap().starts_with('v'));
    // Idle past the read timeout, then the same connection again.
    std::thread::sleep(Duration::from_secs(12));
    let again = version(&mut conn);
    assert!(
        again.as_deref().is_ok_and(|v| v.starts_with('v')),
        "the idle keep-alive connection was closed: {again:?}"
    );
}
