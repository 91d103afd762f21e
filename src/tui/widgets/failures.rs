use super::count;
use crate::metrics::Snapshot;
use crate::tui::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Row, Table, Widget};

/// Failures by reason with their counts, as the snapshot groups them.
pub struct Failures<'a> {
    pub snapshot: &'a Snapshot,
    pub theme: &'a Theme,
}

impl Widget for Failures<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let (s, t) = (self.snapshot, self.theme);
        let title_style = if s.failures.is_empty() {
            t.title
        } else {
            t.bad
        };
        let block = Block::bordered()
            .border_style(t.border)
            .title(Span::styled(" Failures ", title_style));
        if s.failures.is_empty() {
            Paragraph::new(Line::styled("none", t.ok))
                .block(block)
                .render(area, buf);
            return;
        }
        let rows = s.failures.iter().map(|(kind, n)| {
            Row::new([
                Line::raw(kind.as_str()),
                Line::styled(count(*n), t.bad).right_aligned(),
            ])
        });
        Table::new(rows, [Constraint::Fill(1), Constraint::Length(9)])
            .block(block)
            .render(area, buf);
    }
}
