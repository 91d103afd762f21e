//! Port-forwarding through the API server: a listener on 127.0.0.1 per pod port,
//! each accepted connection carried to the pod over a port-forward stream of its own.
//! This is how the tool reaches node RPCs from outside the cluster.

use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use tokio::net::TcpListener;
use tokio::task::{JoinHandle, JoinSet};

/// Listens on an ephemeral port of 127.0.0.1 and forwards every connection to `port`
/// of pod `pod`. Returns the local address and the task; aborting the task closes the
/// listener and every connection it carries.
pub async fn forward(
    pods: Api<Pod>,
    pod: String,
    port: u16,
) -> std::io::Result<(String, JoinHandle<()>)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let local = listener.local_addr()?;
    let task = tokio::spawn(async move {
        // Dropped with the task: the connections end with the listener.
        let mut connections = JoinSet::new();
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((mut conn, _)) = accepted else { break };
                    let _ = conn.set_nodelay(true);
                    let (pods, pod) = (pods.clone(), pod.clone());
                    connections.spawn(async move {
                        let Ok(mut forwarder) = pods.portforward(&pod, &[port]).await else {
                            return;
                        };
                        if let Some(mut upstream) = forwarder.take_stream(port) {
                            let _ = tokio::io::copy_bidirectional(&mut conn, &mut upstream).await;
                        }
                        forwarder.abort();
                    });
                }
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
    });
    Ok((format!("127.0.0.1:{}", local.port()), task))
}
