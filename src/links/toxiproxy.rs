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
        self.send(self.http.post(format!("{}/proxies", self.base)).json(&body))
            .await
            .with_context(|| format!("creating the proxy {name} ({listen} -> {upstream})"))
    }

    /// Disabling a proxy closes its connections and its listener; enabling opens it again.
    pub async fn set_enabled(&self, name: &str, enabled: bool) -> Result<()> {
        let body = json!({"enabled": enabled});
        let url = format!("{}/proxies/{name}", self.base);
        self.send(self.http.post(url).json(&body))
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
            let r = self.http.delete(url).send().await;
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
        self.send(self.http.post(url).json(body))
            .await
            .with_context(|| format!("adding {} to the proxy {name}", body["name"]))
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> Result<()> {
        let response = request
            .send()
            .await
            .context("the fault proxy does not answer")?;
        let status = response.status();
        if !status.is_success() {
            let text = response.text().await.unwrap_or_default();
            bail!("the fault proxy answered {status}: {}", text.trim());
        }
        Ok(())
    }
}
