//! The server side of HTTP/1.1 for the fake APIs of tests: requests read one after the
//! other from a kept-alive connection.

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

pub struct Request {
    pub path: String,
    /// The `Authorization` header, empty when absent.
    pub auth: String,
    pub body: Vec<u8>,
}

/// The next request on `stream`; `buf` carries what was read past the last one. None
/// once the client closed the connection.
pub async fn request(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Request> {
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_string();
            let header = |name: &str| {
                head.lines()
                    .find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
                    })
                    .unwrap_or_default()
            };
            let length: usize = header("content-length").parse().unwrap_or(0);
            while buf.len() < end + 4 + length {
                read_more(stream, buf).await?;
            }
            let request = Request {
                path: head.split_whitespace().nth(1).unwrap_or("").to_string(),
                auth: header("authorization"),
                body: buf[end + 4..end + 4 + length].to_vec(),
            };
            buf.drain(..end + 4 + length);
            return Some(request);
        }
        read_more(stream, buf).await?;
    }
}

async fn read_more(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<()> {
    let mut more = [0u8; 4096];
    match stream.read(&mut more).await {
        Ok(0) | Err(_) => None,
        Ok(n) => {
            buf.extend_from_slice(&more[..n]);
            Some(())
        }
    }
}
