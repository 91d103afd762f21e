//! The headless front end: one progress line a second while the run goes, and the
//! final summary table. Reads snapshots only; no aggregation here.

use crate::metrics::{Snapshot, Summary};
use std::fmt::Write as _;
use tokio::sync::watch;

/// Writes a progress line for each new snapshot (the engine publishes about once a
/// second) until the sender is dropped. Write errors end the loop quietly: progress
/// is a courtesy, the run goes on.
pub async fn follow(mut snapshots: watch::Receiver<Snapshot>, mut out: impl std::io::Write) {
    while snapshots.changed().await.is_ok() {
        let line = progress_line(&snapshots.borrow_and_update());
        if writeln!(out, "{line}").and_then(|_| out.flush()).is_err() {
            return;
        }
    }
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// `[  12s] ok 1234  failed 0  tps now 101.0 avg 98.7  p50 45.1 ms  p99 120.3 ms`
pub fn progress_line(s: &Snapshot) -> String {
    let mut line = format!(
        "[{:>5}s] ok {}  failed {}  tps now {:.1} avg {:.1}  p50 {:.1} ms  p99 {:.1} ms",
        s.elapsed.as_secs(),
        s.ok,
        s.failed,
        s.tps_now,
        s.tps_avg,
        ms(s.cumulative.p50_us),
        ms(s.cumulative.p99_us),
    );
    if s.warm_up > 0 {
        let _ = write!(line, "  warm-up {}", s.warm_up);
    }
    if s.dropped > 0 {
        let _ = write!(line, "  dropped {}", s.dropped);
    }
    if !s.faults.is_empty() {
        let _ = write!(line, "  fault: {}", s.faults.join(", "));
    }
    if s.paused {
        line.push_str("  (paused)");
    } else {
        let _ = write!(line, "  ({})", s.stage.as_str());
    }
    line
}

/// The final table: counts, duration, TPS, latency percentiles, failures by reason
/// and the tool's own CPU per payment.
pub fn summary_table(s: &Summary) -> String {
    let mut t = String::new();
    let row = |t: &mut String, name: &str, value: String| {
        let _ = writeln!(t, "  {name:<22} {value}");
    };
    t.push_str("Payments\n");
    row(&mut t, "ok", s.ok.to_string());
    row(&mut t, "failed", s.failed.to_string());
    if s.indeterminate > 0 {
        // Timed out or in flight at the end: the reconciliation lines say their fate.
        row(&mut t, "indeterminate", s.indeterminate.to_string());
    }
    if s.warm_up_excluded > 0 {
        row(&mut t, "warm-up (excluded)", s.warm_up_excluded.to_string());
    }
    if s.dropped > 0 {
        row(&mut t, "dropped (not started)", s.dropped.to_string());
    }
    row(
        &mut t,
        "duration",
        format!("{:.1} s active ({:.1} s paused)", s.active_s, s.paused_s),
    );
    row(&mut t, "TPS (average)", format!("{:.1}", s.tps_avg));
    t.push_str("Latency (successful payments)\n");
    let l = &s.latency;
    for (name, us) in [
        ("p50", l.p50_us),
        ("p90", l.p90_us),
        ("p99", l.p99_us),
        ("p99.9", l.p999_us),
        ("max", l.max_us),
    ] {
        row(&mut t, name, format!("{:.1} ms", ms(us)));
    }
    if !s.failures_by_reason.is_empty() {
        t.push_str("Failures by reason\n");
        for (reason, n) in &s.failures_by_reason {
            row(&mut t, reason, n.to_string());
        }
    }
    if let Some(m) = &s.machine {
        t.push_str("Machine\n");
        row(&mut t, "load", m.verdict.clone());
    }
    t.push_str("Tool\n");
    let cpu = match s.tool_cpu_per_payment_us() {
        Some(us) => format!("{us:.1} µs CPU per payment"),
        None => "unknown".to_string(),
    };
    row(&mut t, "cpu", cpu);
    if let Some(peak) = s.tool_process.peak_rss_bytes {
        row(
            &mut t,
            "peak memory",
            format!("{:.1} MB", peak as f64 / 1e6),
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Percentiles, Stage};
    use std::time::Duration;

    fn snapshot() -> Snapshot {
        Snapshot {
            elapsed: Duration::from_millis(12_400),
            stage: Stage::Closed,
            ok: 1234,
            tps_now: 101.0,
            tps_avg: 98.66,
            cumulative: Percentiles {
                p50_us: 45_100,
                p99_us: 120_300,
                ..Percentiles::default()
            },
            ..Snapshot::default()
        }
    }

    #[test]
    fn progress_line_shows_counts_rates_and_percentiles() {
        assert_eq!(
            progress_line(&snapshot()),
            "[   12s] ok 1234  failed 0  tps now 101.0 avg 98.7  p50 45.1 ms  p99 120.3 ms  (closed-loop)"
        );
        let paused = Snapshot {
            paused: true,
            dropped: 3,
            ..snapshot()
        };
        assert!(progress_line(&paused).ends_with("dropped 3  (paused)"));
    }

    #[tokio::test]
    async fn follow_prints_each_snapshot_and_ends_with_the_sender() {
        let (tx, rx) = watch::channel(Snapshot::default());
        let task = tokio::spawn(async move {
            let mut out = Vec::new();
            follow(rx, &mut out).await;
            String::from_utf8(out).unwrap()
        });
        tx.send(snapshot()).unwrap();
        // A value not yet seen is still delivered after the sender is gone.
        drop(tx);
        let out = task.await.unwrap();
        assert_eq!(out.lines().count(), 1, "{out}");
        assert!(out.contains("ok 1234"), "{out}");
    }

    #[test]
    fn summary_table_lists_everything_a_reader_needs() {
        let summary = Summary {
            started_unix_ms: 0,
            ended_unix_ms: 10_000,
            elapsed_s: 10.0,
            active_s: 9.5,
            paused_s: 0.5,
            ok: 950,
            failed: 2,
            warm_up_excluded: 10,
            indeterminate: 0,
            routes: Vec::new(),
            mismatches: None,
            dropped: 0,
            tps_avg: 100.0,
            latency: Percentiles {
                count: 950,
                p50_us: 1_500,
                p90_us: 2_000,
                p99_us: 3_000,
                p999_us: 4_000,
                max_us: 5_000,
                mean_us: 1_600.0,
            },
            latency_spectrum: Vec::new(),
            phases: Vec::new(),
            failures_by_reason: [("no_route", 2)].into_iter().collect(),
            series_resolution_s: 1,
            series: Vec::new(),
            events: Vec::new(),
            events_dropped: 0,
            tool_cpu_s: Some(0.0962),
            interval_log: None,
            tool_process: Default::default(),
            machine: None,
        };
        let table = summary_table(&summary);
        for expected in [
            "ok                     950",
            "failed                 2",
            "warm-up (excluded)     10",
            "duration               9.5 s active (0.5 s paused)",
            "TPS (average)          100.0",
            "p99.9                  4.0 ms",
            "max                    5.0 ms",
            "no_route               2",
            "cpu                    100.0 µs CPU per payment",
        ] {
            assert!(table.contains(expected), "missing {expected:?} in\n{table}");
        }
        assert!(!table.contains("dropped"));
    }
}
