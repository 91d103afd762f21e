//! Background tasks and probes around one container: its log followed into a file,
//! its exit recorded, a command run in it, and a TLS handshake through its published
//! port.

use bollard::Docker;
use bollard::query_parameters::{LogsOptionsBuilder, WaitContainerOptionsBuilder};
use futures::StreamExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// Containers found stopped, as `(name, status)`, in the order they stopped. Never
/// locked across an await.
pub type Exits = Arc<Mutex<Vec<(String, String)>>>;

/// Appends the container's output to `path` (owner-only: logs can name secrets)
/// until the container stops.
pub async fn follow_log(docker: Docker, id: String, path: PathBuf) {
    follow_log_since(docker, id, path, 0).await;
}

/// Like [`follow_log`], only the lines since `since` (UNIX seconds; 0: all), for a
/// restarted container whose earlier lines the log holds already.
pub async fn follow_log_since(docker: Docker, id: String, path: PathBuf, since: i32) {
    let Ok(mut file) = tokio::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&path)
        .await
    else {
        return;
    };
    let options = LogsOptionsBuilder::default()
        .follow(true)
        .stdout(true)
        .stderr(true)
        .since(since)
        .build();
    let mut stream = docker.logs(&id, Some(options));
    while let Some(Ok(chunk)) = stream.next().await {
        if file.write_all(&chunk.into_bytes()).await.is_err() {
            break;
        }
        let _ = file.flush().await;
    }
    let _ = file.flush().await;
}

/// Records the container's exit, when it comes.
pub async fn watch_exit(docker: Docker, id: String, name: String, exits: Exits) {
    let options = WaitContainerOptionsBuilder::default()
        .condition("not-running")
        .build();
    let mut stream = docker.wait_container(&id, Some(options));
    let status = match stream.next().await {
        Some(Ok(r)) => format!("exit code {}", r.status_code),
        // bollard reports a non-zero exit code as an error.
        Some(Err(bollard::errors::Error::DockerContainerWaitError { code, .. })) => {
            format!("exit code {code}")
        }
        Some(Err(e)) => format!("unknown status: {e}"),
        None => "stopped".into(),
    };
    exits
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((name, status));
}

/// The first line `cmd` prints in the container (e.g. `btcd --version`), empty if it
/// cannot run there (an image without that binary on its PATH).
pub async fn exec_first_line(docker: &Docker, id: &str, cmd: &[&str]) -> String {
    let run = async {
        let exec = docker
            .create_exec(
                id,
                bollard::exec::CreateExecOptions {
                    cmd: Some(cmd.to_vec()),
                    attach_stdout: Some(true),
                    attach_stderr: Some(true),
                    ..Default::default()
                },
            )
            .await
            .ok()?;
        let bollard::exec::StartExecResults::Attached { mut output, .. } =
            docker.start_exec(&exec.id, None).await.ok()?
        else {
            return None;
        };
        let mut text = Vec::new();
        while let Some(Ok(chunk)) = output.next().await {
            text.extend_from_slice(&chunk.into_bytes());
        }
        Some(
            String::from_utf8_lossy(&text)
                .lines()
                .next()?
                .trim()
                .to_string(),
        )
    };
    tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .ok()
        .flatten()
        .unwrap_or_default()
}
