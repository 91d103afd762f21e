//! A small client of Toxiproxy's HTTP API (the TCP fault proxy the runtime starts):
//! proxies, their enabled state, and toxics (latency with jitter, bandwidth) on both
//! streams of a proxy. The API is served on a unix socket (`toxiproxy-unix`, built by
//! `scripts/build-nodes.sh`), never on TCP: only this user reaches it.

use crate::scenario::LinkShape;
use anyhow::{Context, Result, bail};
use serde_json::json;
use std::path::Path;
use std::time::Duration;

/// The names of the toxics this client sets, so a new shape replaces the old one.
const TOXICS: [&str; 4] = [
    "latency-up",
    "latency-down",
    "bandwidth-up",
    "bandwidth-down",
];

/// Tries of a call that got no answer.
const TRIES: u32 = 3;

/// Toxiproxy's API on a unix socket; every request goes there, whatever the URL's host.
#[derive(Debug, Clone)]
pub struct Toxiproxy {
    base: String,
    http: reqwest::Client,
}

impl Toxiproxy {
    /// A client of the API listening on the unix socket `socket`.
    pub fn new(socket: &Path) -> Result<Toxiproxy> {
        // reqwest needs the process's provider even for plain HTTP.
        crate::tls::install_crypto_provider();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .http1_only()
            // A fresh connection per call (see `call`): the calls are few.
            .pool_max_idle_per_host(0)
            .unix_socket(socket)
            .build()
            .context("creating the fault proxy's HTTP client")?;
        Ok(Toxiproxy {
            base: "http://toxiproxy".into(),
            http,
        })
    }

    /// True once the server answers `/version`.
    pub async fn answers(&self) -> bool {
        let url = format!("{}/version", self.base);
        matches!(self.http.get(url).send().await, Ok(r) if r.status().is_success())
    }

    /// Creates proxy `name`, listening on `listen`, forwarding to `upstream`.
    pub async fn create(&self, name: &str, listen: &str, upstream: &str) -> Result<()> {
        let body = json!({"name": name, "listen": listen, "upstream": upstream, "enabled": true});
        self.send(|| self.http.post(format!("{}/proxies", self.base)).json(&body))
            .await
            .with_context(|| format!("creating the proxy {name} ({listen} -> {upstream})"))
    }

    /// Disabling a proxy closes its connections and its listener; enabling opens it again.
    pub async fn set_enabled(&self, name: &str, enabled: bool) -> Result<()> {
        let body = json!({"enabled": enabled});
        let url = format!("{}/proxies/{name}", self.base);
        self.send(|| self.http.post(&url).json(&body))
            .await
            .with_context(|| {
                format!(
                    "{} the proxy {name}",
                    if enabled { "enabling" } else { "disabling" }
                )
            })
    }

    /// Replaces the proxy's toxics with `shape` on both streams (nothing for a clear one).
    pub async fn set_shape(&self, name: &str, shape: &LinkShape) -> Result<()> {
        for toxic in TOXICS {
            let url = format!("{}/proxies/{name}/toxics/{toxic}", self.base);
            let r = self.call(|| self.http.delete(&url)).await;
            // 404: it was not set.
            r.with_context(|| format!("removing {toxic} from the proxy {name}"))?;
        }
        for stream in ["upstream", "downstream"] {
            let short = if stream == "upstream" { "up" } else { "down" };
            if !shape.latency.is_zero() || !shape.jitter.is_zero() {
                let body = json!({
                    "name": format!("latency-{short}"),
                    "type": "latency",
                    "stream": stream,
                    "toxicity": 1.0,
                    "attributes": {
                        "latency": shape.latency.as_millis() as u64,
                        "jitter": shape.jitter.as_millis() as u64,
                    },
                });
                self.add_toxic(name, &body).await?;
            }
            if let Some(rate) = shape.bandwidth_kb_s {
                let body = json!({
                    "name": format!("bandwidth-{short}"),
                    "type": "bandwidth",
                    "stream": stream,
                    "toxicity": 1.0,
                    "attributes": {"rate": rate},
                });
                self.add_toxic(name, &body).await?;
            }
        }
        Ok(())
    }

    async fn add_toxic(&self, name: &str, body: &serde_json::Value) -> Result<()> {
        let url = format!("{}/proxies/{name}/toxics", self.base);
        self.send(|| self.http.post(&url).json(body))
            .await
            .with_context(|| format!("adding {} to the proxy {name}", body["name"]))
    }

    /// Sends the request `make` builds; again, up to [`TRIES`] in all, when it got no
    /// answer. On kubernetes the socket is a port-forward opened per connection, and
    /// one that failed as it opened closed the connection before any answer ("connection
    /// closed before message completed": a toxic not removed, in a CI run). Also says
    /// whether the answer came on a later try.
    async fn call(
        &self,
        make: impl Fn() -> reqwest::RequestBuilder,
    ) -> reqwest::Result<(reqwest::Response, bool)> {
        let mut tries = 1;
        loop {
            match make().send().await {
                Ok(response) => return Ok((response, tries > 1)),
                Err(e) if tries < TRIES && !e.is_timeout() => {
                    tokio::time::sleep(Duration::from_millis(200 * tries as u64)).await;
                    tries += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// [`Toxiproxy::call`], and an error unless the answer is a success. A conflict on
    /// a later try is one: the try before reached the server after all.
    async fn send(&self, make: impl Fn() -> reqwest::RequestBuilder) -> Result<()> {
        let (response, again) = self
            .call(make)
            .await
            .context("the fault proxy does not answer")?;
        let status = response.status();
        if again && status == reqwest::StatusCode::CONFLICT {
            return Ok(());
        }
        if !status.is_success() {
            let text = response.text().await.unwrap_or_default();
            bail!("the fault proxy answered {status}: {}", text.trim());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A server on a unix socket that closes its first `drop_first` connections
    /// unanswered (a port-forward that failed as it opened), then answers each
    /// request `status`. Counts the connections it took.
    fn flaky_server(
        socket: &Path,
        drop_first: usize,
        status: &'static str,
    ) -> std::sync::Arc<std::sync::atomic::AtomicUsize> {
        let listener = tokio::net::UnixListener::bind(socket).unwrap();
        let taken = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = taken.clone();
        tokio::spawn(async move {
            while let Ok((mut conn, _)) = listener.accept().await {
                let n = count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if n < drop_first {
                    continue;
                }
                let mut buf = [0u8; 4096];
                let _ = conn.read(&mut buf).await;
                let answer = format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\n\r\n");
                let _ = conn.write_all(answer.as_bytes()).await;
            }
        });
        taken
    }

    #[tokio::test]
    async fn a_call_whose_connection_closes_unanswered_is_tried_again() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("api.sock");
        let taken = flaky_server(&socket, 1, "404 Not Found");
        let proxy = Toxiproxy::new(&socket).unwrap();
        // Four removals (404: not set), the first connection closed unanswered.
        let clear = LinkShape {
            latency: Duration::ZERO,
            jitter: Duration::ZERO,
            bandwidth_kb_s: None,
        };
        proxy.set_shape("alice->bob", &clear).await.unwrap();
        // A fresh connection per call: the dropped one, then one per removal.
        assert_eq!(taken.load(std::sync::atomic::Ordering::SeqCst), 5);
    }

    #[tokio::test]
    async fn a_conflict_after_a_retry_is_the_first_try_gone_through_and_three_failures_fail() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("api.sock");
        flaky_server(&socket, 1, "409 Conflict");
        let proxy = Toxiproxy::new(&socket).unwrap();
        proxy
            .create("p", "127.0.0.1:1", "127.0.0.1:2")
            .await
            .unwrap();
        // Conflict on the first try is an error, as before.
        let err = proxy
            .create("p", "127.0.0.1:1", "127.0.0.1:2")
            .await
            .unwrap_err();
        assert!(format!("{err:#}").contains("409"), "{err:#}");

        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("api.sock");
        let taken = flaky_server(&socket, 10, "200 OK");
        let proxy = Toxiproxy::new(&socket).unwrap();
        let err = proxy.set_enabled("p", false).await.unwrap_err();
        assert!(format!("{err:#}").contains("does not answer"), "{err:#}");
        assert_eq!(
            taken.load(std::sync::atomic::Ordering::SeqCst),
            TRIES as usize
        );
    }
}
