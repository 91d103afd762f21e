//! `latency.hlog` is read by the standard HdrHistogram tool: Java's
//! `HistogramLogProcessor` (the reference implementation's jar, put in the cache by
//! `scripts/setup.sh --dev`) finds the same count and max as the run's summary.

mod common;

use lnbench_tui::metrics::{IntervalLog, Recorder, hlog};
use lnbench_tui::node::fake::{FakeConfig, FakeLatency, FakeNode};
use lnbench_tui::report;
use lnbench_tui::scenario::{Load, StopCondition};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The HdrHistogram jar: `$HDRHISTOGRAM_JAR`, or where `scripts/setup.sh --dev` puts it.
fn jar() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("HDRHISTOGRAM_JAR") {
        return Some(PathBuf::from(path));
    }
    let cache = std::env::var_os("LNBENCH_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/lnbench-tui")))?;
    let path = cache.join("jars").join("HdrHistogram.jar");
    path.exists().then_some(path)
}

/// `#[Max     =      12345.000, Total count    =         678]` from the tool's output.
fn max_and_count(output: &str) -> (f64, u64) {
    let line = output
        .lines()
        .find(|l| l.starts_with("#[Max"))
        .unwrap_or_else(|| panic!("no #[Max line in:\n{output}"));
    let field = |name: &str| -> String {
        let at = line.find(name).unwrap() + name.len();
        let rest = line[at..].trim_start().trim_start_matches('=').trim_start();
        rest.chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect()
    };
    (
        field("Max").parse().unwrap(),
        field("Total count").parse().unwrap(),
    )
}

#[tokio::test]
async fn the_java_tool_reads_our_count_and_max() {
    let Some(jar) = jar() else {
        assert!(
            std::env::var("CI").is_err(),
            "the HdrHistogram jar is missing: scripts/setup.sh --dev installs it"
        );
        eprintln!("skipped: no HdrHistogram jar (scripts/setup.sh --dev installs it)");
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let (recorder, _snapshots) = Recorder::new();
    let streamed = work.path().join("run").join(hlog::FILE_NAME);
    std::fs::create_dir_all(streamed.parent().unwrap()).unwrap();
    recorder.log_intervals_to(IntervalLog::create(&streamed, recorder.started_wall()).unwrap());
    let sender = FakeNode::new(FakeConfig {
        latency: FakeLatency::Uniform {
            min: Duration::from_micros(300),
            max: Duration::from_millis(40),
        },
        seed: 11,
        ..FakeConfig::instant("alice")
    });
    let plan = common::fake_plan(
        sender,
        Load::Closed { concurrency: 8 },
        StopCondition {
            payments: None,
            duration: Some(Duration::from_millis(2500)),
            liquidity_failures: None,
        },
    );
    let (_tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let summary = lnbench_tui::engine::run(
        plan,
        recorder,
        rx,
        tokio_util::sync::CancellationToken::new(),
    )
    .await
    .expect("engine runs")
    .summary;
    assert!(summary.ok > 100, "{}", summary.ok);
    let dir = work.path().join("report");
    let paths = report::write_all(
        &common::sample_report("name: fake\n", summary.clone()),
        &dir,
    )
    .unwrap();
    let log = dir.join(hlog::FILE_NAME);
    assert_eq!(paths.last(), Some(&log));

    // -o: intervals go to `processed`, the whole run's distribution to `processed.hgrm`.
    let processed = work.path().join("processed");
    let out = Command::new("java")
        .arg("-cp")
        .arg(&jar)
        .arg("org.HdrHistogram.HistogramLogProcessor")
        .arg("-i")
        .arg(&log)
        .args(["-outputValueUnitRatio", "1", "-o"])
        .arg(&processed)
        .output()
        .expect("java runs");
    assert!(
        out.status.success(),
        "HistogramLogProcessor failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let hgrm = std::fs::read_to_string(processed.with_extension("hgrm")).unwrap();
    let (max, count) = max_and_count(&hgrm);
    assert_eq!(count, summary.latency.count, "{hgrm}");
    assert_eq!(max, summary.latency.max_us as f64, "{hgrm}");
    // The tool's interval lines: one per second of the run (two whole ones and the
    // rest), each with its own count; together they hold every payment.
    let intervals = std::fs::read_to_string(&processed).unwrap();
    // e.g. `1.006: I:346 ( 22943.000 37567.000 48127.000 ) T:346 ( ... )`
    let counts: Vec<u64> = intervals
        .lines()
        .filter_map(|l| l.split(" I:").nth(1))
        .map(|rest| rest.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert!(counts.len() >= 3, "{intervals}");
    assert_eq!(
        counts.iter().sum::<u64>(),
        summary.latency.count,
        "{intervals}"
    );
}
