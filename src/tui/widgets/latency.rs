use super::latency;
use crate::metrics::Snapshot;
use crate::tui::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Chart, Dataset, GraphType, Row, Table, Widget};

/// p50 / p90 / p99 / p99.9 / max of the last interval and of the whole run.
pub struct LatencyTable<'a> {
    pub snapshot: &'a Snapshot,
    pub theme: &'a Theme,
}

impl Widget for LatencyTable<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let (s, t) = (self.snapshot, self.theme);
        let (last, all) = (&s.last_interval, &s.cumulative);
        let rows = [
            ("p50", last.p50_us, all.p50_us),
            ("p90", last.p90_us, all.p90_us),
            ("p99", last.p99_us, all.p99_us),
            ("p99.9", last.p999_us, all.p999_us),
            ("max", last.max_us, all.max_us),
        ]
        .map(|(name, last, all)| {
            let cell = |us, n| if n == 0 { "-".to_string() } else { latency(us) };
            Row::new([
                Line::styled(name, t.label),
                Line::from(cell(last, s.last_interval.count)).right_aligned(),
                Line::from(cell(all, s.cumulative.count)).right_aligned(),
            ])
        });
        Table::new(
            rows,
            [
                Constraint::Length(6),
                Constraint::Fill(1),
                Constraint::Fill(1),
            ],
        )
        .header(
            Row::new([
                Line::raw(""),
                Line::raw("last second").right_aligned(),
                Line::raw("whole run").right_aligned(),
            ])
            .style(t.label),
        )
        .block(
            Block::bordered()
                .border_style(t.border)
                .title(Span::styled(" Latency (successful payments) ", t.title)),
        )
        .render(area, buf);
    }
}

/// p50 and p99 of each recent interval, in milliseconds, over run time.
pub struct LatencyChart<'a> {
    pub snapshot: &'a Snapshot,
    pub theme: &'a Theme,
}

impl Widget for LatencyChart<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let (s, t) = (self.snapshot, self.theme);
        // An interval without a success has no latency: leave a gap, not a zero.
        let measured = || s.recent.iter().filter(|p| p.ok > 0);
        let p50: Vec<(f64, f64)> = measured()
            .map(|p| (p.at_s, p.p50_us as f64 / 1e3))
            .collect();
        let p99: Vec<(f64, f64)> = measured()
            .map(|p| (p.at_s, p.p99_us as f64 / 1e3))
            .collect();
        let x0 = s.recent.first().map_or(0.0, |p| p.at_s);
        let x1 = s.recent.last().map_or(1.0, |p| p.at_s).max(x0 + 1.0);
        let top_us = measured().map(|p| p.p99_us).max().unwrap_or(1_000);
        let y1 = (top_us as f64 / 1e3 * 1.1).max(1.0);
        let datasets = vec![
            Dataset::default()
                .name("p50")
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(t.p50)
                .data(&p50),
            // A different marker as well as a colour, so the lines differ without colour.
            Dataset::default()
                .name("p99")
                .marker(Marker::Dot)
                .graph_type(GraphType::Scatter)
                .style(t.p99)
                .data(&p99),
        ];
        let secs = |x: f64| format!("{x:.0}s");
        Chart::new(datasets)
            .block(
                Block::bordered()
                    .border_style(t.border)
                    .title(Span::styled(" Latency over time (ms) ", t.title)),
            )
            .x_axis(
                Axis::default()
                    .bounds([x0, x1])
                    .labels([secs(x0), secs(x1)])
                    .style(t.label),
            )
            .y_axis(
                Axis::default()
                    .bounds([0.0, y1])
                    .labels(["0".to_string(), format!("{y1:.0}")])
                    .style(t.label),
            )
            .hidden_legend_constraints((Constraint::Min(0), Constraint::Min(0)))
            .render(area, buf);
    }
}
