use crate::metrics::Snapshot;
use crate::tui::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Sparkline, Widget};

/// Successful payments per second over the recent intervals (up to five minutes),
/// newest on the right, with now / average / peak in the title.
pub struct TpsSparkline<'a> {
    pub snapshot: &'a Snapshot,
    pub theme: &'a Theme,
}

impl Widget for TpsSparkline<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let (s, t) = (self.snapshot, self.theme);
        // Warm-up intervals are not counted anywhere else either.
        let peak = s
            .recent
            .iter()
            .filter(|p| !p.warm_up)
            .map(|p| p.tps)
            .fold(0.0, f64::max);
        let title = format!(
            " TPS  now {:.1}  avg {:.1}  peak {:.1} ",
            s.tps_now, s.tps_avg, peak
        );
        let inner_width = usize::from(area.width.saturating_sub(2)).max(1);
        // Up to five minutes of seconds into the columns there are: each bar is the
        // mean of `per_bar` seconds, grouped from the newest so the right edge is now.
        let per_bar = s.recent.len().div_ceil(inner_width).max(1);
        let mut data: Vec<u64> = s
            .recent
            .rchunks(per_bar)
            .map(|c| (c.iter().map(|p| p.tps).sum::<f64>() / c.len() as f64).round() as u64)
            .collect();
        data.reverse();
        let window = if per_bar == 1 {
            format!(" last {} s ", s.recent.len())
        } else {
            format!(" last {} s, {per_bar} s per bar ", s.recent.len())
        };
        let block = Block::bordered()
            .border_style(t.border)
            .title(Span::styled(title, t.title))
            .title_bottom(Line::styled(window, t.label).right_aligned());
        let inner = block.inner(area);
        block.render(area, buf);
        // Right-align: the newest bar sits at the right edge, like the chart below.
        let offset = inner.width.saturating_sub(data.len() as u16);
        let area = Rect {
            x: inner.x + offset,
            width: inner.width - offset,
            ..inner
        };
        Sparkline::default()
            .data(&data)
            .max(peak.round().max(1.0) as u64)
            .style(t.tps)
            .render(area, buf);
    }
}
