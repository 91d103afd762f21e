//! The charts of a run's results (TPS, latency, the latency spectrum), in the order
//! the report shows them; the nodes' resources have theirs in `resources_charts`.

use super::charts::{self, Chart};
use super::spectrum;
use crate::metrics::Summary;
use anyhow::Result;

/// Every chart of a run, in the order the report shows them.
pub fn render_all(results: &Summary) -> Result<Vec<Chart>> {
    Ok(vec![
        Chart {
            file_name: "tps-over-time.svg",
            title: "TPS over time",
            caption: "Successful payments per active second in each interval (light) and their moving average (dark). Grey: warm-up, not counted. Amber bands: paused. Purple lines: load changed to the value written at their top.",
            svg: charts::tps_over_time_marked(&results.series, &results.events)?,
        },
        Chart {
            file_name: "tps-vs-payments.svg",
            title: "TPS vs payments processed",
            caption: "TPS against the number of successful payments so far: a falling line means the nodes slow down as their databases grow.",
            svg: charts::tps_vs_payments(&results.series)?,
        },
        Chart {
            file_name: "latency-over-time.svg",
            title: "Latency over time",
            caption: "p50, p90 and p99 latency of the successful payments of each interval, milliseconds. Amber bands: paused. Purple lines: load changed to the value written at their top.",
            svg: charts::latency_over_time_marked(&results.series, &results.events)?,
        },
        Chart {
            file_name: "latency-spectrum.svg",
            title: "Latency percentile spectrum",
            caption: "Latency of the successful payments of the whole run at each percentile, milliseconds; the percentile axis is logarithmic in 1 / (1 − p), so 90%, 99%, 99.9% … each get the same width (as HdrHistogram plots it). The line ends at the max.",
            svg: spectrum::latency_spectrum(&results.latency_spectrum)?,
        },
    ])
}
