use crate::tui::Theme;
use crate::tui::action::KEYS;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget};

/// Every key and what it does, over the middle of the view.
pub struct HelpOverlay<'a> {
    pub theme: &'a Theme,
}

impl Widget for HelpOverlay<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let lines: Vec<Line> = KEYS
            .iter()
            .map(|(key, what)| {
                Line::from(vec![
                    Span::styled(format!(" {key:<11}"), t.title),
                    Span::raw(*what),
                ])
            })
            .collect();
        let width = KEYS
            .iter()
            .map(|(_, what)| what.chars().count() as u16 + 15)
            .max()
            .unwrap_or(40);
        let height = KEYS.len() as u16 + 2;
        let popup = area.centered(Constraint::Length(width), Constraint::Length(height));
        Clear.render(popup, buf);
        Paragraph::new(lines)
            .block(
                Block::bordered()
                    .border_style(t.title)
                    .title(Span::styled(" Keys ", t.title)),
            )
            .render(popup, buf);
    }
}
