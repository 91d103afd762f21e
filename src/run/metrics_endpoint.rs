//! `--metrics-listen`: binds the endpoint before anything starts and serves it for
//! the rest of the process (a sweep's points share it; counters keep growing).

use crate::metrics::export::{self, Exporter};
use anyhow::{Context, Result};
use std::net::SocketAddr;

/// The exporter of a run of `scenario`, served on `listen`; None without the flag.
pub(crate) async fn start(listen: Option<SocketAddr>, scenario: &str) -> Result<Option<Exporter>> {
    let Some(addr) = listen else {
        return Ok(None);
    };
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| {
        format!("--metrics-listen: cannot listen on {addr} (a port in use? pick another)")
    })?;
    let bound = listener.local_addr().unwrap_or(addr);
    if !bound.ip().is_loopback() {
        crate::lines::errln!(
            "warning: metrics are served on {bound}, beyond this machine, without TLS or \
             authentication (node names and figures, no secrets)"
        );
    }
    crate::lines::errln!("metrics: http://{bound}/metrics");
    let exporter = Exporter::new(scenario);
    tokio::spawn(export::serve(listener, exporter.clone()));
    Ok(Some(exporter))
}

/// Marks `phase` in the exporter, if there is one.
pub(crate) fn phase(metrics: Option<&Exporter>, phase: &'static str) {
    if let Some(m) = metrics {
        m.set_phase(phase);
    }
}
