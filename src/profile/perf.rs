//! Native nodes (btcd, Bitcoin Core, Core Lightning, LDK): `perf record` on the
//! process seen from this host, sampling on the software `cpu-clock` event (virtual
//! machines often expose no hardware counters), call graphs by frame pointers; the
//! samples are folded from `perf script`'s text with inferno's perf collapser.

use super::flame::{Folded, parse_folded};
use crate::metrics::process::{parent_pid, read_stat};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Samples per second and CPU: low enough to cost little, enough for a 10 s window.
pub const FREQUENCY_HZ: u32 = 199;

/// The `perf` binary: `$LNBENCH_PERF`, else `perf` on the PATH.
pub fn binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("LNBENCH_PERF") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("perf"))
        .find(|p| p.is_file())
}

/// `pid` and every process below it now (Core Lightning's plugins, a shell's child),
/// read from `/proc`: perf's `-p` follows threads, not processes started earlier.
pub fn with_descendants(pid: u32) -> Vec<u32> {
    let mut parent_of: Vec<(u32, u32)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for e in entries.flatten() {
            let Some(child) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            if let Some(ppid) = read_stat(child).and_then(|s| parent_pid(&s)) {
                parent_of.push((child, ppid));
            }
        }
    }
    let mut all = vec![pid];
    let mut i = 0;
    while i < all.len() {
        let p = all[i];
        all.extend(
            parent_of
                .iter()
                .filter(|(c, pp)| *pp == p && !all.contains(c))
                .map(|(c, _)| *c)
                .collect::<Vec<_>>(),
        );
        i += 1;
    }
    all
}

/// Records process `pid` and its descendants for `duration` into `out` (perf.data);
/// `stop` ends it early (the load ended). Returns how long it recorded. A child that
/// exits between the `/proc` walk and perf attaching (Core Lightning's `bitcoin-cli`
/// calls live for milliseconds) makes perf refuse the list: it is walked again, up to
/// three times.
pub async fn record(
    perf: &Path,
    pid: u32,
    duration: Duration,
    out: &Path,
    stop: &CancellationToken,
) -> Result<Duration> {
    let started = std::time::Instant::now();
    let mut attempt = 0;
    let mut child = loop {
        attempt += 1;
        let pids: Vec<String> = (with_descendants(pid).iter())
            .filter(|p| Path::new(&format!("/proc/{p}")).exists())
            .map(u32::to_string)
            .collect();
        let mut child = tokio::process::Command::new(perf)
            .args(["record", "--quiet", "-e", "cpu-clock", "-g", "-F"])
            .arg(FREQUENCY_HZ.to_string())
            .arg("-p")
            .arg(pids.join(","))
            .arg("-o")
            .arg(out)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot start {}", perf.display()))?;
        // perf refuses a list at once; one that runs for a second has attached.
        let early = tokio::select! {
            status = child.wait() => Some(status?),
            () = tokio::time::sleep(Duration::from_secs(1)) => None,
            () = stop.cancelled() => None,
        };
        match early {
            None => break child,
            Some(status) => {
                let mut err = String::new();
                if let Some(mut e) = child.stderr.take() {
                    use tokio::io::AsyncReadExt;
                    let _ = e.read_to_string(&mut err).await;
                }
                if attempt >= 3 || !Path::new(&format!("/proc/{pid}")).exists() {
                    bail!("perf record ended early ({status}): {}", err.trim());
                }
            }
        }
    };
    let child_pid = child.id();
    let left = duration.saturating_sub(started.elapsed());
    tokio::select! {
        status = child.wait() => {
            // perf ended on its own: the process is gone, or perf failed.
            let status = status?;
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                use tokio::io::AsyncReadExt;
                let _ = e.read_to_string(&mut err).await;
            }
            bail!("perf record ended early ({status}): {}", err.trim());
        }
        () = tokio::time::sleep(left) => {}
        () = stop.cancelled() => {}
    }
    // SIGINT: perf writes its file and exits.
    if let Some(id) = child_pid.and_then(|p| i32::try_from(p).ok()) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(id), nix::sys::signal::SIGINT);
    }
    let waited = tokio::time::timeout(Duration::from_secs(30), child.wait()).await;
    let recorded = started.elapsed();
    match waited {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => return Err(e).context("waiting for perf record"),
        Err(_) => bail!("perf record did not stop within 30 s of SIGINT"),
    }
    if !out.is_file() {
        bail!("perf record wrote no {}", out.display());
    }
    Ok(recorded)
}

/// `perf script` of `data`, folded.
pub async fn fold(perf: &Path, data: &Path) -> Result<Folded> {
    let output = tokio::process::Command::new(perf)
        .arg("script")
        .arg("-i")
        .arg(data)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .with_context(|| format!("cannot run {} script", perf.display()))?;
    if !output.status.success() {
        bail!("perf script failed ({})", output.status);
    }
    let script = output.stdout;
    tokio::task::spawn_blocking(move || collapse(&script)).await?
}

/// Folds `perf script` text.
pub fn collapse(script: &[u8]) -> Result<Folded> {
    use inferno::collapse::Collapse;
    let mut folder =
        inferno::collapse::perf::Folder::from(inferno::collapse::perf::Options::default());
    let mut out = Vec::new();
    folder
        .collapse(script, &mut out)
        .context("folding perf script output")?;
    let text = String::from_utf8_lossy(&out);
    Ok(parse_folded(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descendants_include_children_started_before() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let me = std::process::id();
        let all = with_descendants(me);
        assert_eq!(all[0], me);
        assert!(all.contains(&child.id()), "{all:?}");
        child.kill().unwrap();
        let _ = child.wait();
    }

    #[test]
    fn perf_script_text_folds_root_first() {
        let script = b"btcd 1 1.0:     250000 cpu-clock: \n\
            \t  4a1 runtime.memmove+0x1 (/bin/btcd)\n\
            \t  3b2 main.work+0x2 (/bin/btcd)\n\
            \t  2c3 main.main+0x3 (/bin/btcd)\n\
            \n\
            btcd 1 1.1:     250000 cpu-clock: \n\
            \t  3b2 main.work+0x2 (/bin/btcd)\n\
            \t  2c3 main.main+0x3 (/bin/btcd)\n\n";
        let folded = collapse(script).unwrap();
        // Weighted by the sample's period: nanoseconds of cpu-clock.
        assert_eq!(
            folded["btcd;main.main;main.work;runtime.memmove"], 250_000,
            "{folded:?}"
        );
        assert_eq!(folded["btcd;main.main;main.work"], 250_000);
    }
}
