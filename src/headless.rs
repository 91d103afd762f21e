//! The headless front end: one progress line a second while the run goes, and the
//! final summary table. Reads snapshots only; no aggregation here.

use crate::metrics::{Snapshot, Summary};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU8, Ordering};
use tokio::sync::watch;

/// `-v` counted: 0 by default, 1 with `-v`, 2 with `-vv`. Set once, before the run,
/// like the colour choice; read where progress lines are made.
static VERBOSITY: AtomicU8 = AtomicU8::new(0);

/// Sets how much the progress lines say (see [`progress_line_at`]).
pub fn set_verbosity(level: u8) {
    VERBOSITY.store(level, Ordering::Relaxed);
}

/// The log filter a verbosity asks for when `RUST_LOG` is not set: this crate's
/// warnings, its info lines with `-v`, its debug lines with `-vv`.
pub fn log_filter(verbosity: u8) -> &'static str {
    match verbosity {
        0 => "lnbench_tui=warn",
        1 => "lnbench_tui=info",
        _ => "lnbench_tui=debug",
    }
}

/// Writes a progress line for each new snapshot (the engine publishes about once a
/// second) until the sender is dropped. Write errors end the loop quietly: progress
/// is a courtesy, the run goes on.
pub async fn follow(mut snapshots: watch::Receiver<Snapshot>, mut out: impl std::io::Write) {
    let verbosity = VERBOSITY.load(Ordering::Relaxed);
    while snapshots.changed().await.is_ok() {
        let line = progress_line_at(&snapshots.borrow_and_update(), verbosity);
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
    progress_line_at(s, 0)
}

/// [`progress_line`], and with `verbosity` 1 or more: p90 and max of the whole run,
/// the last second's p50 and p99, and the failures by reason so far.
pub fn progress_line_at(s: &Snapshot, verbosity: u8) -> String {
    let mut line = progress_counts(s);
    if verbosity > 0 {
        let (c, l) = (&s.cumulative, &s.last_interval);
        let _ = write!(
            line,
            "  p90 {:.1} ms  max {:.1} ms  last second p50 {:.1} ms p99 {:.1} ms",
            ms(c.p90_us),
            ms(c.max_us),
            ms(l.p50_us),
            ms(l.p99_us),
        );
        let failures: Vec<String> = (s.failures.iter())
            .filter(|(_, n)| *n > 0)
            .map(|(kind, n)| format!("{} {n}", kind.as_str()))
            .collect();
        if !failures.is_empty() {
            let _ = write!(line, "  failed by reason: {}", failures.join(", "));
        }
    }
    if s.paused {
        line.push_str("  (paused)");
    } else {
        let _ = write!(line, "  ({})", s.stage.as_str());
    }
    line
}

/// The counts, rates and headline percentiles, and what is going on (warm-up,
/// dropped payments, faults).
fn progress_counts(s: &Snapshot) -> String {
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
    let live = s.live.line();
    if !live.is_empty() {
        let _ = write!(line, "  {live}");
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

    #[test]
    fn verbose_progress_lines_add_the_tail_the_last_second_and_reasons() {
        use crate::metrics::FailureKind;
        use crate::node::FailureReason;
        let s = Snapshot {
            failed: 3,
            failures: vec![
                (FailureKind::Node(FailureReason::NoRoute), 2),
                (FailureKind::RpcError, 1),
                (FailureKind::Node(FailureReason::Canceled), 0),
            ],
            last_interval: Percentiles {
                p50_us: 40_000,
                p99_us: 90_000,
                ..Percentiles::default()
            },
            ..snapshot()
        };
        let quiet = progress_line_at(&s, 0);
        assert_eq!(quiet, progress_line(&s));
        assert!(!quiet.contains("p90"), "{quiet}");
        let verbose = progress_line_at(&s, 1);
        assert!(
            verbose.starts_with(quiet.trim_end_matches("  (closed-loop)")),
            "{verbose}"
        );
        for part in [
            "p90 0.0 ms  max 0.0 ms",
            "last second p50 40.0 ms p99 90.0 ms",
            "failed by reason: no_route 2, rpc_error 1  (closed-loop)",
        ] {
            assert!(verbose.contains(part), "{part:?} not in {verbose}");
        }
        assert_eq!(progress_line_at(&s, 2), verbose);
    }

    #[test]
    fn each_verbosity_asks_for_more_log_lines() {
        assert_eq!(log_filter(0), "lnbench_tui=warn");
        assert_eq!(log_filter(1), "lnbench_tui=info");
        assert_eq!(log_filter(2), "lnbench_tui=debug");
        assert_eq!(log_filter(5), "lnbench_tui=debug");
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
            stream: None,
            mismatches: None,
            parts: None,
            drain: None,
            attack: None,
            rebalance: None,
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
            payment_log: None,
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
