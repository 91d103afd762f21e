//! Waiting on many nodes at once: each check polled with back-off, all of them
//! concurrently, progress shown as "n of N". Setup of a network of tens of nodes
//! would otherwise wait on each node in turn.

use super::StepLog;
use anyhow::{Result, bail};
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use std::future::Future;
use std::time::{Duration, Instant};

/// The first pause between two checks; it grows by half each time up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(100);
const MAX_PAUSE: Duration = Duration::from_secs(2);

/// Polls `check` until it returns `Some`, pausing a little longer each time, or fails
/// after `timeout` with `what` in the message.
pub async fn poll_backoff<T, F, Fut>(what: String, timeout: Duration, mut check: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Option<T>>>,
{
    let deadline = Instant::now() + timeout;
    let mut pause = FIRST_PAUSE;
    loop {
        if let Some(v) = check().await? {
            return Ok(v);
        }
        if Instant::now() >= deadline {
            bail!("{what}: still not done after {} s", timeout.as_secs());
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 3 / 2).min(MAX_PAUSE);
    }
}

/// Runs every future at once and shows "`what`: n of N" as they finish; the first
/// error ends the wait (the others are dropped).
pub async fn all<T>(
    what: &str,
    tasks: Vec<impl Future<Output = Result<T>>>,
    log: &mut StepLog,
) -> Result<Vec<T>> {
    let total = tasks.len();
    let mut running: FuturesUnordered<_> = tasks.into_iter().collect();
    let mut done = Vec::with_capacity(total);
    while let Some(result) = running.next().await {
        done.push(result?);
        log.progress(&format!("{what}: {} of {total}", done.len()));
    }
    Ok(done)
}
