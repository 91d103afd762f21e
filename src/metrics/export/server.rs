//! The HTTP side of `--metrics-listen`: `GET /metrics` answers the OpenMetrics text,
//! one request per connection (hyper's HTTP/1), nothing else. No TLS and no authentication, so the
//! default host is loopback; the figures hold no secret (node names, counts, sizes).

use super::Exporter;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Response, StatusCode};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

/// The host a bare port (`--metrics-listen 9464`) listens on.
pub const DEFAULT_HOST: &str = "127.0.0.1";
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
            answer(stream, &exporter).await;
            drop(slot);
        });
    }
}

/// One request on `stream`, through hyper's HTTP/1: the head within [`READ_TIMEOUT`],
/// the answer within [`WRITE_TIMEOUT`] more, then the connection closes.
async fn answer(stream: TcpStream, exporter: &Exporter) {
    let exporter = exporter.clone();
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let response = respond(&exporter, request.method(), request.uri().path());
        std::future::ready(Ok::<_, std::convert::Infallible>(response))
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(READ_TIMEOUT)
        .keep_alive(false)
        .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
    let _ = tokio::time::timeout(READ_TIMEOUT + WRITE_TIMEOUT, connection).await;
}

/// The answer to `method` on `path` (hyper leaves the body out for HEAD).
fn respond(exporter: &Exporter, method: &Method, path: &str) -> Response<String> {
    let text = "text/plain; charset=utf-8";
    let (status, content_type, body) = match (method, path) {
        (&Method::GET | &Method::HEAD, "/metrics") => {
            (StatusCode::OK, CONTENT_TYPE, exporter.render())
        }
        (&Method::GET | &Method::HEAD, "/") => (
            StatusCode::OK,
            text,
            "lnbench-tui: metrics at /metrics\n".to_string(),
        ),
        (&Method::GET | &Method::HEAD, _) => (
            StatusCode::NOT_FOUND,
            text,
            "not found: metrics are at /metrics\n".to_string(),
        ),
        _ => (
            StatusCode::METHOD_NOT_ALLOWED,
            text,
            "only GET\n".to_string(),
        ),
    };
    let mut response = Response::new(body);
    *response.status_mut() = status;
    (response.headers_mut()).insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

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
        // One request, its whole answer (the server closes after it).
        let ask = |request: String| async move {
            let mut s = TcpStream::connect(addr).await.unwrap();
            s.write_all(request.as_bytes()).await.unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).await.unwrap();
            out
        };
        let get = |path: &str| format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n");
        let ok = ask(get("/metrics")).await;
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(ok.contains("application/openmetrics-text"), "{ok}");
        assert!(ok.trim_end().ends_with("# EOF"), "{ok}");
        let missing = ask(get("/other")).await;
        assert!(missing.starts_with("HTTP/1.1 404"), "{missing}");
        // HEAD: the same head, no body.
        let head = ask("HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n".into()).await;
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert!(
            head.ends_with("\r\n\r\n") && !head.contains("# EOF"),
            "{head}"
        );
        // Anything but GET and HEAD is refused.
        let refused =
            ask("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n".into()).await;
        assert!(refused.starts_with("HTTP/1.1 405"), "{refused}");
        server.abort();
    }
}
