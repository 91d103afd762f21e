//! `--metrics-listen` end to end: a real LND pair on btcd, paid through the binary,
//! scraped every 200 ms while the run goes on; each scrape parsed by a strict
//! OpenMetrics parser (tests/common/openmetrics.rs).

use crate::common::scenario_run::lnd_pair;

use crate::common::openmetrics::{Scrape, free_port, parse, scrape};
use crate::common::running::Running;
use crate::common::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const PAYMENTS: u64 = 600;

fn scenario_yaml() -> String {
    lnd_pair("metrics-pair", "runtime: local\n", 5000000, 4)
        + "  amount_msat: 1000
  concurrency: 4
  stop:
    payments: 600
    duration: 10m
  payment_timeout: 60s
"
}

fn succeeded(s: &Scrape) -> f64 {
    s.value(
        "lnbench_payments_total",
        &[("outcome", "succeeded"), ("scenario", "metrics-pair")],
    )
    .unwrap_or(0.0)
}

#[test]
fn metrics_endpoint_follows_a_real_lnd_run() {
    require_node_binaries();
    let work = tempfile::tempdir().expect("temp dir");
    let scenario = work.path().join("scenario.yaml");
    std::fs::write(&scenario, scenario_yaml()).unwrap();
    let runs = work.path().join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    let report_dir = work.path().join("report");
    let addr = format!("127.0.0.1:{}", free_port());

    let mut cmd = lnbench_command();
    cmd.arg(&scenario)
        .args(["--report"])
        .arg(&report_dir)
        .arg("--run-dir")
        .arg(&runs)
        .args(["--metrics-listen", &addr]);
    let mut run = Running::spawn(cmd);

    // Scrape until the process is gone; every answer is parsed on the spot.
    let done = Arc::new(AtomicBool::new(false));
    let scraper = {
        let (done, addr) = (done.clone(), addr.clone());
        std::thread::spawn(move || {
            let mut scrapes = Vec::new();
            while !done.load(Ordering::Relaxed) {
                if let Some(body) = scrape(&addr) {
                    scrapes.push(parse(&body));
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            scrapes
        })
    };
    let (status, log) = run.wait_exit(Duration::from_secs(900));
    done.store(true, Ordering::Relaxed);
    let scrapes = scraper.join().expect("scraper thread");
    assert!(status.success(), "exit {status:?}:\n{log}");
    assert!(
        log.contains(&format!("metrics: http://{addr}/metrics")),
        "{log}"
    );

    let text = std::fs::read_to_string(report_dir.join("report.json")).unwrap();
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(report["results"]["ok"], PAYMENTS, "{:#}", report["results"]);

    assert!(scrapes.len() >= 5, "only {} scrapes:\n{log}", scrapes.len());
    // Counters only grow, and grew while the load ran (several values between 0 and
    // the end), the histogram counting exactly the successful payments each time.
    let counts: Vec<f64> = scrapes.iter().map(succeeded).collect();
    for pair in counts.windows(2) {
        assert!(
            pair[0] <= pair[1],
            "the payment counter went down: {counts:?}"
        );
    }
    let during: std::collections::BTreeSet<u64> = counts
        .iter()
        .filter(|c| **c > 0.0 && **c < PAYMENTS as f64)
        .map(|c| *c as u64)
        .collect();
    assert!(
        during.len() >= 2,
        "the counter did not grow during the load: {counts:?}"
    );
    eprintln!(
        "{} scrapes, {} distinct counts between 0 and {PAYMENTS} during the load",
        scrapes.len(),
        during.len()
    );
    for s in &scrapes {
        let histogram = s
            .value("lnbench_payment_latency_seconds_count", &[])
            .expect("latency histogram");
        assert_eq!(histogram, succeeded(s), "histogram count vs payments");
        assert_eq!(
            s.sum("lnbench_payments_total", &[("outcome", "failed")]),
            0.0
        );
    }
    let last = scrapes.last().unwrap();
    assert_eq!(succeeded(last), PAYMENTS as f64, "last scrape: {counts:?}");
    assert_eq!(
        last.value("lnbench_payment_latency_seconds_count", &[]),
        Some(PAYMENTS as f64)
    );
    assert_eq!(last.types["lnbench_payment_latency_seconds"], "histogram");
    assert_eq!(last.types["lnbench_payments"], "counter");
    assert_eq!(
        last.value("lnbench_run_info", &[("runtime", "local")]),
        Some(1.0)
    );
    assert_eq!(last.value("lnbench_resources_measured", &[]), Some(1.0));

    // Gauges: TPS and concurrency during the load, the phase, node resources.
    let any = |f: &dyn Fn(&Scrape) -> bool| scrapes.iter().any(f);
    assert!(
        any(&|s| s.value("lnbench_payments_per_second", &[]).unwrap_or(0.0) > 0.0),
        "TPS never above 0"
    );
    assert!(any(&|s| s.value("lnbench_concurrency", &[]) == Some(4.0)));
    assert!(any(&|s| s
        .value("lnbench_run_phase", &[("phase", "closed-loop")])
        == Some(1.0)));
    for node in ["alice", "bob", "chain"] {
        assert!(
            any(&|s| s
                .value("lnbench_node_memory_bytes", &[("node", node)])
                .unwrap_or(0.0)
                > 0.0),
            "no memory figure of {node}"
        );
        assert!(any(&|s| s
            .value("lnbench_node_data_dir_bytes", &[("node", node)])
            .is_some()));
    }
    for s in &scrapes {
        let on: f64 = s.sum("lnbench_run_phase", &[]);
        assert_eq!(on, 1.0, "exactly one phase at a time");
    }

    let left = processes_mentioning(&runs);
    assert!(
        left.is_empty(),
        "processes of the run still alive: {left:?}"
    );
}
