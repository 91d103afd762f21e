//! Port-forwarding through the API server: a listener on 127.0.0.1 per pod port (or a
//! unix socket in a private directory), each accepted connection carried to the pod
//! over a port-forward stream of its own. This is how the tool reaches node RPCs from
//! outside the cluster, and the fault proxy's API, which listens on its pod's loopback.

use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use std::path::Path;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, UnixListener};
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
                    let Ok((conn, _)) = accepted else { break };
                    let _ = conn.set_nodelay(true);
                    connections.spawn(carry(pods.clone(), pod.clone(), port, conn));
                }
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
    });
    Ok((format!("127.0.0.1:{}", local.port()), task))
}

/// Listens on the unix socket `socket` (its directory must be this user's, mode 0700;
/// the socket is made mode 0600) and forwards every connection to `port` of pod `pod`.
/// Aborting the task closes the listener and every connection it carries.
pub fn forward_unix(
    pods: Api<Pod>,
    pod: String,
    port: u16,
    socket: &Path,
) -> std::io::Result<JoinHandle<()>> {
    use std::os::unix::fs::PermissionsExt;
    let listener = UnixListener::bind(socket)?;
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))?;
    Ok(tokio::spawn(async move {
        let mut connections = JoinSet::new();
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((conn, _)) = accepted else { break };
                    connections.spawn(carry(pods.clone(), pod.clone(), port, conn));
                }
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
    }))
}

/// Carries one connection to `port` of `pod` over a port-forward stream until either
/// side closes it.
async fn carry<S>(pods: Api<Pod>, pod: String, port: u16, mut conn: S)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let Ok(mut forwarder) = pods.portforward(&pod, &[port]).await else {
        return;
    };
    if let Some(mut upstream) = forwarder.take_stream(port) {
        let _ = tokio::io::copy_bidirectional(&mut conn, &mut upstream).await;
    }
    forwarder.abort();
}
