//! Charts of the nodes' resource use: CPU % and memory over time (one line per node
//! and the chain) and data-dir size over time, with the run's pauses and load
//! changes marked like on the TPS chart. Drawn with the helpers of [`super::charts`].

use super::charts::{self, Chart, Line, Marks};
use super::{Report, format};
use crate::metrics::{NodeResources, ResourceSample};
use anyhow::Result;
use plotters::style::RGBColor;

/// Line colours, one per node in report order, the chain last; repeated past eight.
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
];

const MIB: f64 = 1024.0 * 1024.0;

/// The name and resources of every node, then the chain's (`chain`).
pub fn with_resources(report: &Report) -> Vec<(&str, &NodeResources)> {
    report
        .nodes
        .iter()
        .map(|n| (n.name.as_str(), &n.resources))
        .chain(std::iter::once(("chain", &report.chain.resources)))
        .chain((report.services.iter()).map(|s| (s.name.as_str(), &s.resources)))
        .collect()
}

/// How the charts mark the run's events, as the TPS chart's caption says it.
macro_rules! marks_note {
    () => {
        " Amber bands: paused. Purple lines: load changed to the value written at their top."
    };
}

/// The resource charts, in the order the report shows them; none when the runtime
/// read no resources.
pub fn render_all(report: &Report) -> Result<Vec<Chart>> {
    let all = with_resources(report);
    if all.iter().all(|(_, r)| r.is_empty()) {
        return Ok(Vec::new());
    }
    let marks = Marks::of(&report.results.events);
    let warm_up = charts::warm_up_end(&report.results.series);
    let name_only = |name: &str, _: &NodeResources| name.to_string();
    Ok(vec![
        Chart {
            file_name: "cpu-over-time.svg",
            title: "CPU per node",
            caption: CPU_CAPTION,
            svg: chart(
                &all,
                "CPU, % of one core",
                |s| s.cpu_pct,
                name_only,
                warm_up,
                &marks,
            )?,
        },
        Chart {
            file_name: "memory-over-time.svg",
            title: "Memory per node",
            caption: MEMORY_CAPTION,
            svg: chart(
                &all,
                "memory, MiB",
                |s| s.mem_bytes.map(|b| b as f64 / MIB),
                name_only,
                warm_up,
                &marks,
            )?,
        },
        Chart {
            file_name: "data-dir-over-time.svg",
            title: "Data-dir size per node",
            caption: DATA_DIR_CAPTION,
            svg: chart(
                &all,
                "data dir, MiB",
                |s| s.data_dir_bytes.map(|b| b as f64 / MIB),
                |name, r| match r.bytes_per_payment {
                    Some(b) => format!("{name} ({}/payment)", signed_bytes(b)),
                    None => name.to_string(),
                },
                warm_up,
                &marks,
            )?,
        },
    ])
}

const CPU_CAPTION: &str = concat!(
    "CPU use of each node's processes (and the chain's), percent of one core: 200 means two cores busy.",
    marks_note!()
);
const MEMORY_CAPTION: &str = concat!(
    "Memory each node uses without page cache (resident set size for local processes).",
    marks_note!()
);
const DATA_DIR_CAPTION: &str = concat!(
    "Disk used by each node's data directory, read every few seconds; the legend gives its growth per successful payment.",
    marks_note!()
);

/// One line per node with samples of the figure `value` picks.
fn chart(
    all: &[(&str, &NodeResources)],
    y_desc: &str,
    value: fn(&ResourceSample) -> Option<f64>,
    label: fn(&str, &NodeResources) -> String,
    warm_up: Option<f64>,
    marks: &Marks,
) -> Result<String> {
    let labels: Vec<String> = all.iter().map(|(name, r)| label(name, r)).collect();
    let lines: Vec<Line> = all
        .iter()
        .zip(&labels)
        .enumerate()
        .map(|(i, ((_, r), label))| Line {
            label,
            color: PALETTE[i % PALETTE.len()],
            width: 2,
            points: r
                .samples
                .iter()
                .filter_map(|s| Some((s.t_s, value(s)?)))
                .collect(),
        })
        .collect();
    charts::draw(
        "seconds since start",
        y_desc,
        &lines,
        warm_up,
        marks,
        "not read by this runtime",
    )
}

/// Bytes with a sign when negative: `812 B`, `1.2 KiB`, `-100 B`.
pub fn signed_bytes(b: f64) -> String {
    let magnitude = format::bytes(b.abs().round() as u64);
    if b < 0.0 && magnitude != "0 B" {
        format!("-{magnitude}")
    } else {
        magnitude
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_bytes_keep_their_sign() {
        assert_eq!(signed_bytes(812.4), "812 B");
        assert_eq!(signed_bytes(-100.0), "-100 B");
        assert_eq!(signed_bytes(-0.2), "0 B");
        assert_eq!(signed_bytes(1536.0), "1.5 KiB");
    }
}
