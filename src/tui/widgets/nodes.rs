use crate::tui::{Theme, TuiInfo};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Span;
use ratatui::widgets::{Block, Row, Table, Widget};

/// One row per node. Resource columns stay `-` until the run publishes node stats.
pub struct NodeTable<'a> {
    pub info: &'a TuiInfo,
    pub theme: &'a Theme,
}

impl Widget for NodeTable<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let rows = self.info.nodes.iter().map(|n| {
            Row::new([
                n.name.as_str(),
                n.implementation.as_str(),
                n.version.as_str(),
                n.role.as_str(),
                "-",
                "-",
                "-",
            ])
        });
        Table::new(
            rows,
            [
                Constraint::Fill(2),
                Constraint::Length(6),
                Constraint::Fill(3),
                Constraint::Length(8),
                Constraint::Length(5),
                Constraint::Length(5),
                Constraint::Length(5),
            ],
        )
        .header(Row::new(["node", "impl", "version", "role", "cpu", "mem", "disk"]).style(t.label))
        .block(
            Block::bordered()
                .border_style(t.border)
                .title(Span::styled(" Nodes ", t.title)),
        )
        .render(area, buf);
    }
}
