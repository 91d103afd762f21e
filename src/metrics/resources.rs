//! Resource use of the nodes and the chain backend, as runtimes read it, and the
//! bounded per-node record of it that reports and live views read.
//!
//! A run calls [`ResourceLog::record`] with the runtime's readings about once a
//! second during the load. Each node keeps a whole-run series of
//! [`ResourceSample`]s, bounded like the TPS series: past [`MAX_RESOURCE_POINTS`]
//! samples, neighbours are merged in pairs. Averages, peaks and the data-dir size at
//! start and end are kept apart from the series, so merging never changes them.

use super::series::{Mergeable, Series};
use serde::Serialize;
use tokio::time::Instant;

/// Most samples kept per node for the whole run: an hour at one sample a second,
/// then the resolution halves. Fewer than the TPS series keeps, because there is one
/// series per node and the chart draws at most a few thousand points anyway.
pub const MAX_RESOURCE_POINTS: usize = 3_600;

/// One node's (or the chain's) resource use at one moment. A runtime fills what it can
/// read; `None` means "not available here", never zero.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct ResourceReading {
    /// Instance name (`alice-2`), or `chain`.
    pub name: String,
    /// CPU use since the previous reading, in percent of one core (200 = two cores busy).
    /// `None` on the first reading, which has nothing to compare with.
    pub cpu_pct: Option<f64>,
    /// Memory in use, without page cache, bytes.
    pub mem_bytes: Option<u64>,
    /// Bytes read from and written to block devices since the node started.
    pub disk_read_bytes: Option<u64>,
    pub disk_write_bytes: Option<u64>,
    /// Network bytes received and sent since the node started.
    pub net_rx_bytes: Option<u64>,
    pub net_tx_bytes: Option<u64>,
    /// Size of the node's data directory, bytes (sampled every few seconds).
    pub data_dir_bytes: Option<u64>,
}

/// The name under which [`tool_reading`]s go into a [`ResourceLog`]; no node can
/// have it (node names have no parentheses).
pub const TOOL_READING: &str = "(lnbench-tui)";

/// The tool's own memory now (its RSS, from `/proc/self`), as a reading named
/// [`TOOL_READING`], so the tool's memory over a run is kept like a node's.
pub fn tool_reading() -> ResourceReading {
    ResourceReading {
        name: TOOL_READING.into(),
        mem_bytes: super::process::ProcessStats::now().rss_bytes,
        ..ResourceReading::default()
    }
}

/// One point of a node's resource series in the report.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct ResourceSample {
    /// Seconds since the load started (the clock of the TPS series and run events).
    pub t_s: f64,
    /// Mean CPU % of the readings merged into this sample.
    pub cpu_pct: Option<f64>,
    /// Peak memory of the readings merged into this sample.
    pub mem_bytes: Option<u64>,
    /// Counters since the node started, and the data-dir size: the latest reading's.
    pub disk_read_bytes: Option<u64>,
    pub disk_write_bytes: Option<u64>,
    pub net_rx_bytes: Option<u64>,
    pub net_tx_bytes: Option<u64>,
    pub data_dir_bytes: Option<u64>,
    /// Readings with a CPU figure merged into `cpu_pct`, to weigh the mean.
    #[serde(skip)]
    cpu_readings: u32,
}

impl ResourceSample {
    fn of(t_s: f64, r: &ResourceReading) -> Self {
        ResourceSample {
            t_s,
            cpu_pct: r.cpu_pct,
            mem_bytes: r.mem_bytes,
            disk_read_bytes: r.disk_read_bytes,
            disk_write_bytes: r.disk_write_bytes,
            net_rx_bytes: r.net_rx_bytes,
            net_tx_bytes: r.net_tx_bytes,
            data_dir_bytes: r.data_dir_bytes,
            cpu_readings: u32::from(r.cpu_pct.is_some()),
        }
    }
}

impl Mergeable for ResourceSample {
    fn absorb(&mut self, later: &Self) {
        self.t_s = later.t_s;
        let n = self.cpu_readings + later.cpu_readings;
        self.cpu_pct = match (self.cpu_pct, later.cpu_pct) {
            (Some(a), Some(b)) => Some(
                (a * f64::from(self.cpu_readings) + b * f64::from(later.cpu_readings))
                    / f64::from(n),
            ),
            (a, b) => a.or(b),
        };
        self.cpu_readings = n;
        self.mem_bytes = self.mem_bytes.max(later.mem_bytes);
        // Cumulative counters and sizes: the later value stands for the merged span.
        self.disk_read_bytes = later.disk_read_bytes.or(self.disk_read_bytes);
        self.disk_write_bytes = later.disk_write_bytes.or(self.disk_write_bytes);
        self.net_rx_bytes = later.net_rx_bytes.or(self.net_rx_bytes);
        self.net_tx_bytes = later.net_tx_bytes.or(self.net_tx_bytes);
        self.data_dir_bytes = later.data_dir_bytes.or(self.data_dir_bytes);
    }
}

/// A node's (or the chain's) resource use over the load, as report.json holds it
/// (`nodes[i].resources`, `chain.resources`). Figures are `None` when the runtime
/// gave nothing to compute them from.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct NodeResources {
    pub samples: Vec<ResourceSample>,
    /// Mean CPU % over every reading of the load.
    pub cpu_pct_avg: Option<f64>,
    /// Highest memory reading of the load.
    pub mem_bytes_peak: Option<u64>,
    /// First data-dir size read during the load, and the last (read afresh when the
    /// load ended, when the runtime can).
    pub data_dir_bytes_start: Option<u64>,
    pub data_dir_bytes_end: Option<u64>,
    /// Data-dir growth over the load divided by the run's successful payments (can
    /// be negative when the node shrank its files, e.g. rotated a log).
    pub bytes_per_payment: Option<f64>,
    /// Its envelope (`resources:`) and what the kernel counted against it; absent
    /// when the scenario set none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub envelope: Option<super::EnvelopeReading>,
}

impl NodeResources {
    /// Highest CPU % among the samples (of merged samples, their mean).
    pub fn cpu_pct_peak(&self) -> Option<f64> {
        self.samples
            .iter()
            .filter_map(|s| s.cpu_pct)
            .reduce(f64::max)
    }

    /// Data-dir growth over the load, bytes.
    pub fn data_dir_growth(&self) -> Option<i64> {
        let (start, end) = (self.data_dir_bytes_start?, self.data_dir_bytes_end?);
        Some(i64::try_from(end).ok()? - i64::try_from(start).ok()?)
    }

    /// True when the runtime never gave a reading for this node.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }
}

/// One node's record.
#[derive(Debug, Clone)]
struct NodeLog {
    name: String,
    series: Series<ResourceSample>,
    cpu_sum: f64,
    cpu_readings: u64,
    mem_peak: Option<u64>,
    data_dir_first: Option<u64>,
    data_dir_last: Option<u64>,
}

impl NodeLog {
    fn new(name: &str, cap: usize) -> Self {
        NodeLog {
            name: name.to_string(),
            series: Series::new(cap),
            cpu_sum: 0.0,
            cpu_readings: 0,
            mem_peak: None,
            data_dir_first: None,
            data_dir_last: None,
        }
    }

    fn push(&mut self, t_s: f64, r: &ResourceReading) {
        self.series.push(ResourceSample::of(t_s, r));
        if let Some(cpu) = r.cpu_pct.filter(|c| c.is_finite()) {
            self.cpu_sum += cpu;
            self.cpu_readings += 1;
        }
        self.mem_peak = self.mem_peak.max(r.mem_bytes);
        if let Some(size) = r.data_dir_bytes {
            self.data_dir_first.get_or_insert(size);
            self.data_dir_last = Some(size);
        }
    }
}

/// The readings of a run: a bounded series per node and the latest reading of each.
#[derive(Debug, Clone)]
pub struct ResourceLog {
    started: Instant,
    cap: usize,
    /// In the order the nodes were first read.
    nodes: Vec<NodeLog>,
    latest: Vec<ResourceReading>,
    /// Envelopes read when the load ended ([`ResourceLog::record_envelopes`]).
    envelopes: Vec<super::EnvelopeReading>,
}

impl Default for ResourceLog {
    fn default() -> Self {
        ResourceLog::new()
    }
}

impl ResourceLog {
    /// A log whose clock (`t_s`) starts now: create it when the load starts.
    pub fn new() -> Self {
        ResourceLog::with_cap(MAX_RESOURCE_POINTS)
    }

    /// A log keeping at most `cap` samples per node before halving the resolution.
    pub fn with_cap(cap: usize) -> Self {
        ResourceLog {
            started: Instant::now(),
            cap,
            nodes: Vec::new(),
            latest: Vec::new(),
            envelopes: Vec::new(),
        }
    }

    /// Records the readings taken now.
    pub fn record(&mut self, readings: Vec<ResourceReading>) {
        let t_s = self.started.elapsed().as_secs_f64();
        self.record_at(t_s, readings);
    }

    /// Records readings taken `t_s` seconds after the load started.
    pub fn record_at(&mut self, t_s: f64, readings: Vec<ResourceReading>) {
        for reading in readings {
            let i = match self.nodes.iter().position(|n| n.name == reading.name) {
                Some(i) => i,
                None => {
                    self.nodes.push(NodeLog::new(&reading.name, self.cap));
                    self.nodes.len() - 1
                }
            };
            self.nodes[i].push(t_s, &reading);
            match self.latest.iter_mut().find(|l| l.name == reading.name) {
                Some(slot) => *slot = reading,
                None => self.latest.push(reading),
            }
        }
    }

    /// Keeps the envelopes the runtime read (each replaces an earlier one of its name).
    pub fn record_envelopes(&mut self, envelopes: Vec<super::EnvelopeReading>) {
        for e in envelopes {
            self.envelopes.retain(|old| old.name != e.name);
            self.envelopes.push(e);
        }
    }

    /// The latest reading of every node read so far, for live views.
    pub fn latest(&self) -> &[ResourceReading] {
        &self.latest
    }

    /// The report of `name` (empty if it was never read); bytes per payment divides
    /// its data-dir growth by `successful_payments`.
    pub fn report(&self, name: &str, successful_payments: u64) -> NodeResources {
        let envelope = self.envelopes.iter().find(|e| e.name == name).cloned();
        let Some(node) = self.nodes.iter().find(|n| n.name == name) else {
            return NodeResources {
                envelope,
                ..NodeResources::default()
            };
        };
        let mut report = NodeResources {
            samples: node.series.complete(),
            cpu_pct_avg: (node.cpu_readings > 0).then(|| node.cpu_sum / node.cpu_readings as f64),
            mem_bytes_peak: node.mem_peak,
            data_dir_bytes_start: node.data_dir_first,
            data_dir_bytes_end: node.data_dir_last,
            bytes_per_payment: None,
            envelope,
        };
        report.bytes_per_payment = report
            .data_dir_growth()
            .filter(|_| successful_payments > 0)
            .map(|growth| growth as f64 / successful_payments as f64);
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(name: &str, cpu: Option<f64>, mem: u64, dir: Option<u64>) -> ResourceReading {
        ResourceReading {
            name: name.into(),
            cpu_pct: cpu,
            mem_bytes: Some(mem),
            disk_write_bytes: Some(mem / 2),
            data_dir_bytes: dir,
            ..ResourceReading::default()
        }
    }

    #[test]
    fn each_node_gets_its_series_and_the_latest_reading() {
        let mut log = ResourceLog::new();
        log.record_at(
            0.0,
            vec![
                reading("alice", None, 100, Some(1_000)),
                reading("chain", None, 50, Some(500)),
            ],
        );
        log.record_at(1.0, vec![reading("alice", Some(20.0), 300, None)]);
        log.record_at(2.0, vec![reading("alice", Some(40.0), 200, Some(3_000))]);
        assert_eq!(log.latest().len(), 2);
        assert_eq!(log.latest()[0].cpu_pct, Some(40.0));
        assert_eq!(log.latest()[1].name, "chain");

        let alice = log.report("alice", 100);
        assert_eq!(alice.samples.len(), 3);
        assert_eq!(alice.samples[2].t_s, 2.0);
        assert_eq!(alice.cpu_pct_avg, Some(30.0));
        assert_eq!(alice.cpu_pct_peak(), Some(40.0));
        assert_eq!(alice.mem_bytes_peak, Some(300));
        assert_eq!(alice.data_dir_bytes_start, Some(1_000));
        assert_eq!(alice.data_dir_bytes_end, Some(3_000));
        assert_eq!(alice.bytes_per_payment, Some(20.0));

        let chain = log.report("chain", 100);
        assert_eq!(chain.cpu_pct_avg, None, "first readings have no CPU figure");
        assert_eq!(chain.bytes_per_payment, Some(0.0));
        assert!(log.report("carol", 100).is_empty());
    }

    #[test]
    fn bytes_per_payment_needs_payments_and_two_sizes_and_may_shrink() {
        let mut log = ResourceLog::new();
        log.record_at(0.0, vec![reading("a", None, 1, None)]);
        log.record_at(1.0, vec![reading("a", None, 1, Some(5_000))]);
        assert_eq!(log.report("a", 10).bytes_per_payment, Some(0.0));
        log.record_at(2.0, vec![reading("a", None, 1, Some(4_000))]);
        assert_eq!(log.report("a", 10).bytes_per_payment, Some(-100.0));
        assert_eq!(log.report("a", 0).bytes_per_payment, None, "no payments");
        let mut none = ResourceLog::new();
        none.record_at(0.0, vec![reading("a", Some(1.0), 1, None)]);
        assert_eq!(none.report("a", 10).bytes_per_payment, None, "no sizes");
    }

    #[test]
    fn a_long_run_stays_bounded_and_keeps_peaks_means_and_last_values() {
        let mut log = ResourceLog::with_cap(8);
        for i in 1..=100u64 {
            let mem = if i == 37 { 9_999 } else { 1_000 };
            let cpu = if i % 2 == 0 { 10.0 } else { 30.0 };
            log.record_at(i as f64, vec![reading("a", Some(cpu), mem, Some(i * 10))]);
        }
        let a = log.report("a", 50);
        assert!(a.samples.len() <= 9, "{}", a.samples.len());
        assert_eq!(a.samples.last().unwrap().t_s, 100.0);
        assert_eq!(a.samples.last().unwrap().data_dir_bytes, Some(1_000));
        assert_eq!(
            a.samples.iter().filter_map(|s| s.mem_bytes).max(),
            Some(9_999)
        );
        // Every merged sample holds as many even as odd seconds: a mean of 20 %.
        for s in &a.samples[..a.samples.len() - 1] {
            assert!((s.cpu_pct.unwrap() - 20.0).abs() < 1e-9, "{s:?}");
        }
        assert!((a.cpu_pct_avg.unwrap() - 20.0).abs() < 1e-9);
        assert_eq!(a.mem_bytes_peak, Some(9_999));
        assert_eq!(a.data_dir_bytes_start, Some(10));
        assert_eq!(a.bytes_per_payment, Some(19.8));
    }

    #[test]
    fn merging_weighs_cpu_by_readings_and_skips_missing_ones() {
        let mut a = ResourceSample::of(1.0, &reading("a", None, 5, Some(1)));
        a.absorb(&ResourceSample::of(2.0, &reading("a", Some(30.0), 3, None)));
        assert_eq!((a.cpu_pct, a.cpu_readings), (Some(30.0), 1));
        let mut b = ResourceSample::of(3.0, &reading("a", Some(60.0), 4, Some(2)));
        b.absorb(&ResourceSample::of(
            4.0,
            &reading("a", Some(60.0), 4, Some(3)),
        ));
        a.absorb(&b);
        assert_eq!(a.cpu_pct, Some(50.0));
        assert_eq!(a.mem_bytes, Some(5));
        assert_eq!(a.data_dir_bytes, Some(3));
        assert_eq!(a.t_s, 4.0);
    }

    #[test]
    fn samples_serialize_with_the_report_field_names_and_nulls() {
        let s = ResourceSample::of(1.5, &reading("a", None, 7, None));
        let json = serde_json::to_value(s).unwrap();
        let keys: std::collections::BTreeSet<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(
            keys,
            std::collections::BTreeSet::from([
                "t_s",
                "cpu_pct",
                "mem_bytes",
                "disk_read_bytes",
                "disk_write_bytes",
                "net_rx_bytes",
                "net_tx_bytes",
                "data_dir_bytes"
            ])
        );
        assert_eq!(json["cpu_pct"], serde_json::Value::Null);
        assert_eq!(json["mem_bytes"], 7);
    }
}
