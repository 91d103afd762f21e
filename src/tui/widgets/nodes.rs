use crate::metrics::ResourceReading;
use crate::tui::{Theme, TuiInfo};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Span;
use ratatui::widgets::{Block, Row, Table, Widget};

/// Shown where a figure is unknown (not read yet, or not readable by the runtime).
pub const UNKNOWN: &str = "–";

/// One row per node (and the chain): what it is, its channels, and its latest
/// resource reading: CPU % of one core, memory, data-dir size.
pub struct NodeTable<'a> {
    pub info: &'a TuiInfo,
    /// The latest reading of each node, matched by name.
    pub readings: &'a [ResourceReading],
    pub theme: &'a Theme,
}

impl Widget for NodeTable<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let rows = self.info.nodes.iter().map(|n| {
            let reading = self.readings.iter().find(|r| r.name == n.name);
            let figure = |f: fn(&ResourceReading) -> Option<String>| {
                reading.and_then(f).unwrap_or_else(|| UNKNOWN.to_string())
            };
            Row::new([
                n.name.clone(),
                n.implementation.clone(),
                n.version.clone(),
                n.role.clone(),
                n.channels
                    .map_or_else(|| UNKNOWN.to_string(), |c| c.to_string()),
                figure(|r| r.cpu_pct.map(cpu)),
                figure(|r| r.mem_bytes.map(bytes)),
                figure(|r| r.data_dir_bytes.map(bytes)),
            ])
        });
        Table::new(
            rows,
            [
                Constraint::Fill(2),
                Constraint::Length(4),
                Constraint::Fill(3),
                Constraint::Length(8),
                Constraint::Length(3),
                Constraint::Length(5),
                Constraint::Length(5),
                Constraint::Length(5),
            ],
        )
        .header(
            Row::new([
                "node", "impl", "version", "role", "ch", "cpu", "mem", "disk",
            ])
            .style(t.label),
        )
        .block(
            Block::bordered()
                .border_style(t.border)
                .title(Span::styled(" Nodes ", t.title)),
        )
        .render(area, buf);
    }
}

/// CPU % in at most 5 columns: `4.2%`, `37%`, `1600%`.
pub fn cpu(pct: f64) -> String {
    if pct < 9.95 {
        format!("{pct:.1}%")
    } else {
        format!("{pct:.0}%")
    }
}

/// Bytes in at most 5 columns, binary units: `512B`, `4.0K`, `45.3M`, `512M`, `1.2G`.
pub fn bytes(b: u64) -> String {
    const UNITS: [&str; 7] = ["B", "K", "M", "G", "T", "P", "E"];
    let mut value = b as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{b}B")
    } else if value < 99.95 {
        format!("{value:.1}{}", UNITS[unit])
    } else {
        format!("{value:.0}{}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_fit_their_columns() {
        assert_eq!(cpu(4.24), "4.2%");
        assert_eq!(cpu(37.4), "37%");
        assert_eq!(cpu(1600.0), "1600%");
        assert_eq!(bytes(512), "512B");
        assert_eq!(bytes(4096), "4.0K");
        assert_eq!(bytes(47_500_000), "45.3M");
        assert_eq!(bytes(512 * 1024 * 1024), "512M");
        assert_eq!(bytes(1_288_490_189), "1.2G");
        for b in [0, 999, 1000, 1023, 1024, 102_300, 1_048_575, u64::MAX] {
            assert!(bytes(b).chars().count() <= 5, "{b}: {}", bytes(b));
        }
    }
}
