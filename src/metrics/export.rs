//! `--metrics-listen`: the run's figures as a Prometheus / OpenMetrics endpoint
//! (prometheus-client), scraped while the run goes on.
//!
//! The recorder feeds the payment counters and the latency histogram as it merges
//! each worker's batch ([`super::Recorder::export_to`]), so the histogram's count is
//! the number of counted successful payments, as in the report. Gauges (TPS, load
//! setting, run phase, node resources) follow the snapshots and resource readings the
//! live view reads. Every series carries the scenario's name as the `scenario` label.
//! Names follow Prometheus' conventions: the unit last (`_seconds`, `_bytes`, `_ratio`,
//! `_per_second`), with a `# UNIT` line for base units, and `lnbench_build_info`.
//! `server.rs` serves the text over plain HTTP.

mod server;

pub use server::{DEFAULT_HOST, parse_listen, serve};

use super::{FailureKind, LoadSetting, ResourceReading, Snapshot, Stage};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};
use std::borrow::Cow;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::watch;

/// The phases `lnbench_run_phase` knows; one is 1 at a time, the others 0.
pub const PHASES: [&str; 10] = [
    "setup",
    "preparing",
    "warm-up",
    "ramp",
    "hold",
    "closed-loop",
    "draining",
    "restart",
    "teardown",
    "finished",
];

type Labels1 = [(&'static str, String); 1];
type Labels2 = [(&'static str, String); 2];
type FloatGauge = Gauge<f64, AtomicU64>;

/// The run's metrics and their registry; cheap to clone.
#[derive(Clone)]
pub struct Exporter {
    inner: Arc<Inner>,
}

struct Inner {
    registry: Registry,
    payments: Family<Labels2, Counter>,
    warm_up: Counter,
    latency: Histogram,
    tps: FloatGauge,
    tps_avg: FloatGauge,
    concurrency: Gauge,
    rate: FloatGauge,
    phase: Family<Labels1, Gauge>,
    info: Family<Labels1, Gauge>,
    resources_measured: Gauge,
    node_cpu: Family<Labels1, FloatGauge>,
    node_mem: Family<Labels1, Gauge>,
    node_data_dir: Family<Labels1, Gauge>,
    build_info: Family<Labels1, Gauge>,
    current_phase: Mutex<&'static str>,
    /// Held while a batch is counted and while the text is rendered, so a scrape never
    /// sees the histogram and the counters of half a batch.
    batch: Mutex<()>,
}

impl std::fmt::Debug for Exporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Exporter")
    }
}

/// The payment and load metrics of [`Exporter::new`].
fn register_load(registry: &mut Registry, inner: &Inner) {
    registry.register(
        "payments",
        "Counted payments by outcome (succeeded, failed) and failure reason",
        inner.payments.clone(),
    );
    registry.register(
        "warm_up_payments",
        "Warm-up payments (made, not counted in the results)",
        inner.warm_up.clone(),
    );
    registry.register_with_unit(
        "payment_latency",
        "Latency of counted successful payments (open loop: from the intended start)",
        Unit::Seconds,
        inner.latency.clone(),
    );
    // Payments per second is no OpenMetrics base unit: in the name, no UNIT line.
    registry.register(
        "payments_per_second",
        "Successful payments per second over the last interval (about 1 s)",
        inner.tps.clone(),
    );
    registry.register(
        "average_payments_per_second",
        "Successful payments per second over the counted load so far",
        inner.tps_avg.clone(),
    );
    registry.register(
        "concurrency",
        "Closed loop: payments kept in flight (0 in an open-loop run)",
        inner.concurrency.clone(),
    );
    registry.register(
        "scheduled_payments_per_second",
        "Open loop: payments per second scheduled now (0 in a closed-loop run)",
        inner.rate.clone(),
    );
}

/// The run's phase and info, the nodes' resources and the build's version.
fn register_run_and_nodes(registry: &mut Registry, inner: &Inner) {
    registry.register(
        "run_phase",
        "1 for the phase the run is in, 0 for the others",
        inner.phase.clone(),
    );
    registry.register(
        "run_info",
        "Always 1; the runtime the nodes run on as a label",
        inner.info.clone(),
    );
    registry.register(
        "resources_measured",
        "1 when the runtime reads node resources, 0 when they are not measured \
         (runtime: external)",
        inner.resources_measured.clone(),
    );
    registry.register_with_unit(
        "node_cpu",
        "CPU use of a node (or the chain) since the previous reading, in cores \
         (1 is one core busy all the time; above 1 on several)",
        // Unit::Ratios would write `_ratios`; the convention is `_ratio`.
        Unit::Other("ratio".into()),
        inner.node_cpu.clone(),
    );
    registry.register_with_unit(
        "node_memory",
        "Memory in use by a node (or the chain), without page cache",
        Unit::Bytes,
        inner.node_mem.clone(),
    );
    registry.register_with_unit(
        "node_data_dir",
        "Size of a node's (or the chain's) data directory",
        Unit::Bytes,
        inner.node_data_dir.clone(),
    );
    registry.register(
        "build_info",
        "Always 1; the version of lnbench-tui serving the metrics as a label",
        inner.build_info.clone(),
    );
}

impl Exporter {
    /// Metrics of a run of scenario `scenario`, all at zero, in phase `setup`.
    pub fn new(scenario: &str) -> Exporter {
        let labels = [(Cow::Borrowed("scenario"), Cow::Owned(scenario.to_string()))];
        let mut registry = Registry::with_prefix_and_labels("lnbench", labels.into_iter());
        let inner = Inner {
            payments: Family::default(),
            warm_up: Counter::default(),
            // 1 ms to ~131 s, doubling.
            latency: Histogram::new(exponential_buckets(0.001, 2.0, 18)),
            tps: FloatGauge::default(),
            tps_avg: FloatGauge::default(),
            concurrency: Gauge::default(),
            rate: FloatGauge::default(),
            phase: Family::default(),
            info: Family::default(),
            resources_measured: Gauge::default(),
            node_cpu: Family::default(),
            node_mem: Family::default(),
            node_data_dir: Family::default(),
            build_info: Family::default(),
            current_phase: Mutex::new("setup"),
            batch: Mutex::new(()),
            registry: Registry::default(),
        };
        register_load(&mut registry, &inner);
        register_run_and_nodes(&mut registry, &inner);
        inner
            .build_info
            .get_or_create(&[("version", env!("CARGO_PKG_VERSION").into())])
            .set(1);
        let exporter = Exporter {
            inner: Arc::new(Inner { registry, ..inner }),
        };
        exporter.set_phase("setup");
        exporter
    }

    /// The metrics now, in the OpenMetrics text format (ends with `# EOF`).
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _whole = (self.inner.batch.lock()).unwrap_or_else(PoisonError::into_inner);
        encode(&mut out, &self.inner.registry).expect("writing to a String cannot fail");
        out
    }

    /// Marks `phase` (one of [`PHASES`]) as the current one.
    pub fn set_phase(&self, phase: &'static str) {
        let mut current = (self.inner.current_phase.lock()).unwrap_or_else(PoisonError::into_inner);
        *current = phase;
        for p in PHASES {
            let value = i64::from(p == phase);
            self.inner
                .phase
                .get_or_create(&[("phase", p.into())])
                .set(value);
        }
    }

    /// The runtime's name (`local`, `docker ...`, `external`) and whether it reads
    /// node resources.
    pub fn set_runtime(&self, runtime: &str, resources_measured: bool) {
        let word = runtime.split_whitespace().next().unwrap_or(runtime);
        self.inner
            .info
            .get_or_create(&[("runtime", word.into())])
            .set(1);
        self.inner
            .resources_measured
            .set(i64::from(resources_measured));
    }

    /// One merged batch of a worker: latencies of successes (µs), failures by kind
    /// (indexed as [`FailureKind::ALL`]) and warm-up payments.
    pub fn record_batch(&self, latencies_us: &[u32], failures: &[u32], warm_up: u32) {
        let i = &self.inner;
        let _whole = i.batch.lock().unwrap_or_else(PoisonError::into_inner);
        for &us in latencies_us {
            i.latency.observe(f64::from(us) / 1e6);
        }
        if !latencies_us.is_empty() {
            let labels = [("outcome", "succeeded".into()), ("reason", String::new())];
            i.payments
                .get_or_create(&labels)
                .inc_by(latencies_us.len() as u64);
        }
        for (kind, &n) in FailureKind::ALL.iter().zip(failures) {
            if n > 0 {
                let labels = [
                    ("outcome", "failed".into()),
                    ("reason", kind.as_str().into()),
                ];
                i.payments.get_or_create(&labels).inc_by(u64::from(n));
            }
        }
        i.warm_up.inc_by(u64::from(warm_up));
    }

    /// Takes the gauges from one snapshot of the load.
    pub fn snapshot(&self, s: &Snapshot) {
        let i = &self.inner;
        i.tps.set(s.tps_now);
        i.tps_avg.set(s.tps_avg);
        match s.load {
            LoadSetting::Closed { concurrency } => {
                i.concurrency.set(i64::from(concurrency));
                i.rate.set(0.0);
            }
            LoadSetting::Open { rate } => {
                i.concurrency.set(0);
                i.rate.set(rate);
            }
        }
        // The run's own phases (restart, teardown) are set by the run, not the load.
        if s.stage != Stage::Finished {
            let stage = s.stage.as_str();
            if let Some(p) = PHASES.iter().find(|p| **p == stage) {
                self.set_phase(p);
            }
        }
    }

    /// Takes the latest resource readings of the nodes and the chain.
    pub fn readings(&self, readings: &[ResourceReading]) {
        let i = &self.inner;
        for r in readings {
            let labels = [("node", r.name.clone())];
            if let Some(cpu) = r.cpu_pct {
                i.node_cpu.get_or_create(&labels).set(cpu / 100.0);
            }
            if let Some(mem) = r.mem_bytes {
                i.node_mem.get_or_create(&labels).set(clamp(mem));
            }
            if let Some(size) = r.data_dir_bytes {
                i.node_data_dir.get_or_create(&labels).set(clamp(size));
            }
        }
    }

    /// Follows the load's snapshots and the resource readings until both senders are
    /// gone (the load and its watcher ended).
    pub fn follow(
        &self,
        mut snapshots: watch::Receiver<Snapshot>,
        mut readings: watch::Receiver<Vec<ResourceReading>>,
    ) -> tokio::task::JoinHandle<()> {
        let me = self.clone();
        tokio::spawn(async move {
            let (mut snaps_open, mut readings_open) = (true, true);
            while snaps_open || readings_open {
                tokio::select! {
                    r = snapshots.changed(), if snaps_open => match r {
                        Ok(()) => me.snapshot(&snapshots.borrow_and_update()),
                        Err(_) => snaps_open = false,
                    },
                    r = readings.changed(), if readings_open => match r {
                        Ok(()) => me.readings(&readings.borrow_and_update()),
                        Err(_) => readings_open = false,
                    },
                }
            }
        })
    }
}

fn clamp(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_feed_counters_and_the_histogram() {
        let x = Exporter::new("demo");
        x.set_runtime("docker (lnbench/lnd:v0.21.1-beta)", true);
        let mut failures = [0u32; FailureKind::COUNT];
        failures[0] = 2; // no_route
        x.record_batch(&[1_000, 250_000, 3_000_000], &failures, 4);
        let text = x.render();
        assert!(text.ends_with("# EOF\n"), "{text}");
        let build = format!(
            "lnbench_build_info{{scenario=\"demo\",version=\"{}\"}} 1",
            env!("CARGO_PKG_VERSION")
        );
        for line in [
            "lnbench_payments_total{scenario=\"demo\",outcome=\"succeeded\",reason=\"\"} 3",
            "lnbench_payments_total{scenario=\"demo\",outcome=\"failed\",reason=\"no_route\"} 2",
            "lnbench_warm_up_payments_total{scenario=\"demo\"} 4",
            "lnbench_payment_latency_seconds_count{scenario=\"demo\"} 3",
            "lnbench_run_phase{scenario=\"demo\",phase=\"setup\"} 1",
            "lnbench_run_phase{scenario=\"demo\",phase=\"hold\"} 0",
            "lnbench_run_info{scenario=\"demo\",runtime=\"docker\"} 1",
            "lnbench_resources_measured{scenario=\"demo\"} 1",
            &build,
            "# UNIT lnbench_payment_latency_seconds seconds",
        ] {
            assert!(text.lines().any(|l| l == line), "no {line:?} in:\n{text}");
        }
    }

    #[test]
    fn snapshots_set_gauges_and_the_phase() {
        let x = Exporter::new("demo");
        let s = Snapshot {
            stage: Stage::Hold,
            tps_now: 12.5,
            load: LoadSetting::Open { rate: 20.0 },
            ..Snapshot::default()
        };
        x.snapshot(&s);
        x.readings(&[ResourceReading {
            name: "alice".into(),
            cpu_pct: Some(37.5),
            mem_bytes: Some(1 << 20),
            disk_read_bytes: None,
            disk_write_bytes: None,
            net_rx_bytes: None,
            net_tx_bytes: None,
            data_dir_bytes: Some(4096),
        }]);
        let text = x.render();
        for line in [
            "lnbench_payments_per_second{scenario=\"demo\"} 12.5",
            "lnbench_scheduled_payments_per_second{scenario=\"demo\"} 20.0",
            "lnbench_run_phase{scenario=\"demo\",phase=\"hold\"} 1",
            "lnbench_run_phase{scenario=\"demo\",phase=\"setup\"} 0",
            "lnbench_node_cpu_ratio{scenario=\"demo\",node=\"alice\"} 0.375",
            "# UNIT lnbench_node_cpu_ratio ratio",
            "# UNIT lnbench_node_memory_bytes bytes",
            "lnbench_node_memory_bytes{scenario=\"demo\",node=\"alice\"} 1048576",
            "lnbench_node_data_dir_bytes{scenario=\"demo\",node=\"alice\"} 4096",
        ] {
            assert!(text.lines().any(|l| l == line), "no {line:?} in:\n{text}");
        }
        // The end of the load leaves the phase to the run (teardown follows).
        x.snapshot(&Snapshot {
            stage: Stage::Finished,
            ..Snapshot::default()
        });
        assert!(x.render().contains("phase=\"hold\"} 1"));
    }
}
