//! The HTTP side of `--metrics-listen`: `GET /metrics` answers the OpenMetrics text,
//! one request per connection, nothing else. No TLS and no authentication, so the
//! default host is loopback; the figures hold no secret (node names, counts, sizes).

use super::Exporter;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

/// The host a bare port (`--metrics-listen 9464`) listens on.
pub const DEFAULT_HOST: &str = "127.0.0.1";
/// The longest request head read; a scraper's is a few hundred bytes.
const MAX_HEAD: usize = 8 * 1024;
/// How long a client may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a client may take to take the answer.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);
/// Connections served at once; more are answered 503 and closed at once, so clients
/// that open connections and send nothing cannot pile up tasks and sockets.
const MAX_CONNECTIONS: usize = 16;
const BUSY: &[u8] =
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// `--metrics-listen`'s value: `HOST:PORT`, `[v6]:PORT`, or a bare `PORT` on loopback.
pub fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    let text = text.trim();
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse::<SocketAddr>().map_err(|_| {
        format!(
            "{text:?} is not an address to listen on: give HOST:PORT such as \
             {DEFAULT_HOST}:9464, or a port alone (loopback)"
        )
    })
}

/// Answers scrapes on `listener` until the task is dropped or aborted.
pub async fn serve(listener: TcpListener, exporter: Exporter) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok((stream, _peer)) = listener.accept().await else {
            // Out of file descriptors and the like: try again shortly.
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            // Best effort and never waiting: the socket's buffer takes these bytes.
            let _ = stream.try_write(BUSY);
            continue;
        };
        let exporter = exporter.clone();
        tokio::spawn(async move {
            let _ = answer(stream, &exporter).await;
            drop(slot);
        });
    }
}

async fn answer(mut stream: TcpStream, exporter: &Exporter) -> std::io::Result<()> {
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    let read = async {
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
            let n = stream.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        Ok::<_, std::io::Error>(())
    };
    if tokio::time::timeout(READ_TIMEOUT, read).await.is_err() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&head);
    let mut words = text.lines().next().unwrap_or_default().split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let (status, content_type, body) = match (method, path) {
        ("GET" | "HEAD", "/metrics") => ("200 OK", CONTENT_TYPE, exporter.render()),
        ("GET" | "HEAD", "/") => (
            "200 OK",
            "text/plain; charset=utf-8",
            "lnbench-tui: metrics at /metrics\n".to_string(),
        ),
        ("GET" | "HEAD", _) => (
            "404 Not Found",
            "text/plain; charset=utf-8",
            "not found: metrics are at /metrics\n".to_string(),
        ),
        _ => (
            "405 Method Not Allowed",
            "text/plain; charset=utf-8",
            "only GET\n".to_string(),
        ),
    };
    let mut response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if method != "HEAD" {
        response.extend_from_slice(body.as_bytes());
    }
    let write = async {
        stream.write_all(&response).await?;
        stream.shutdown().await
    };
    match tokio::time::timeout(WRITE_TIMEOUT, write).await {
        Ok(written) => written,
        Err(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_port_listens_on_loopback() {
        assert_eq!(
            parse_listen("9464").unwrap(),
            "127.0.0.1:9464".parse().unwrap()
        );
        assert_eq!(
            parse_listen("0.0.0.0:9000").unwrap(),
            "0.0.0.0:9000".parse().unwrap()
        );
        assert_eq!(parse_listen("[::1]:9").unwrap(), "[::1]:9".parse().unwrap());
        assert!(parse_listen("localhost").is_err());
    }

    async fn get(addr: SocketAddr, path: &str) -> String {
        let mut s = TcpStream::connect(addr).await.unwrap();
        // A refused connection may be closed before the request is written.
        let request = format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n");
        let _ = s.write_all(request.as_bytes()).await;
        let mut out = String::new();
        let _ = s.read_to_string(&mut out).await;
        out
    }

    /// Clients that connect and send half a request hold at most MAX_CONNECTIONS slots:
    /// the next connection is closed at once, not served, and one of the held ones that finally
    /// sends its request is still answered.
    #[tokio::test]
    async fn connections_past_the_cap_are_refused_and_held_ones_still_answered() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(serve(listener, Exporter::new("demo")));
        let mut idle = Vec::new();
        for _ in 0..MAX_CONNECTIONS {
            let mut s = TcpStream::connect(addr).await.unwrap();
            s.write_all(b"GET /metr").await.unwrap();
            idle.push(s);
        }
        let refused = tokio::time::timeout(Duration::from_secs(20), get(addr, "/metrics"))
            .await
            .expect("the connection past the cap was neither answered nor closed");
        // The 503 is best effort: a close with the request unread may reset it away.
        assert!(
            refused.is_empty() || refused.starts_with("HTTP/1.1 503"),
            "{refused}"
        );
        let mut held = idle.pop().unwrap();
        held.write_all(b"ics HTTP/1.1\r\n\r\n").await.unwrap();
        let mut out = String::new();
        held.read_to_string(&mut out).await.unwrap();
        assert!(out.starts_with("HTTP/1.1 200 OK"), "{out}");
        server.abort();
    }

    #[tokio::test]
    async fn serves_metrics_over_http() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let exporter = Exporter::new("demo");
        let server = tokio::spawn(serve(listener, exporter));
        let get = |path: &'static str| async move {
            let mut s = TcpStream::connect(addr).await.unwrap();
            s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
                .await
                .unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).await.unwrap();
            out
        };
        let ok = get("/metrics").await;
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(ok.contains("application/openmetrics-text"), "{ok}");
        assert!(ok.trim_end().ends_with("# EOF"), "{ok}");
        let missing = get("/other").await;
        assert!(missing.starts_with("HTTP/1.1 404"), "{missing}");
        server.abort();
    }
}
