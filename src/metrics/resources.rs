//! Resource use of the nodes and the chain backend, as runtimes read it.

use serde::Serialize;

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
