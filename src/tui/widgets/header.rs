use super::{clock, count};
use crate::metrics::host::{OUTSIDE_LOAD_LIMIT_PCT, STEAL_LIMIT_PCT};
use crate::metrics::{LoadSetting, MachineNow, Snapshot, Stage};
use crate::tui::app::App;
use crate::tui::{Theme, TuiInfo};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget};

/// Scenario, runtime, stage, elapsed time, counts and the load setting; on its
/// lower border, the machine's load from outside the run.
pub struct Header<'a> {
    pub snapshot: &'a Snapshot,
    pub info: &'a TuiInfo,
    pub app: &'a App,
    /// `None` until the host has been sampled over a second (or where it is not).
    pub machine: Option<MachineNow>,
    pub theme: &'a Theme,
}

/// `outside 12 % of a core (avg 4 %)  steal 0.0 %`, led by `DISTURBED` once the
/// figures so far pass a limit; a figure past its limit is marked and followed by the
/// limit (`avg 62 % > 10 %`), so a busy machine shows while the load goes, not only
/// in the report. At most 76 columns, to fit the narrowest view.
pub fn machine_line(m: &MachineNow, t: &Theme) -> Line<'static> {
    let outside_avg_over = m.outside_load_pct_avg > OUTSIDE_LOAD_LIMIT_PCT;
    let steal_over = m.steal_pct > STEAL_LIMIT_PCT;
    let mut spans = Vec::new();
    if m.disturbed {
        spans.push(Span::styled(" DISTURBED", t.bad));
    } else {
        spans.push(Span::styled(" machine", t.label));
    }
    let now_style = if m.busy_now() { t.warn } else { t.label };
    spans.push(Span::styled("  outside ", t.label));
    spans.push(Span::styled(
        format!("{:.0} %", m.outside_load_pct),
        now_style,
    ));
    spans.push(Span::styled(" of a core (avg ", t.label));
    let avg_style = if outside_avg_over { t.bad } else { t.label };
    spans.push(Span::styled(
        format!("{:.0} %", m.outside_load_pct_avg),
        avg_style,
    ));
    if outside_avg_over {
        spans.push(Span::styled(
            format!(" > {OUTSIDE_LOAD_LIMIT_PCT:.0} %"),
            t.label,
        ));
    }
    spans.push(Span::styled(")  steal ", t.label));
    let steal_style = if steal_over { t.bad } else { t.label };
    spans.push(Span::styled(format!("{:.1} %", m.steal_pct), steal_style));
    if steal_over {
        spans.push(Span::styled(format!(" > {STEAL_LIMIT_PCT:.0} %"), t.label));
    }
    spans.push(Span::raw(" "));
    Line::from(spans).right_aligned()
}

/// The stage as the header names it; a pause hides the stage it interrupts.
pub fn stage_label(s: &Snapshot) -> &'static str {
    if s.paused && !matches!(s.stage, Stage::Draining | Stage::Finished) {
        "paused"
    } else {
        s.stage.as_str()
    }
}

pub fn load_label(load: LoadSetting) -> String {
    match load {
        LoadSetting::Closed { concurrency } => format!("{concurrency} concurrent payers"),
        LoadSetting::Open { rate } => format!("{rate:.1} payments/s target"),
    }
}

impl Widget for Header<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let (s, t) = (self.snapshot, self.theme);
        let mut block = Block::bordered()
            .border_style(t.border)
            .title(Span::styled(" lnbench-tui ", t.title));
        if let Some(m) = &self.machine {
            block = block.title_bottom(machine_line(m, t));
        }
        let stage = stage_label(s);
        let stage_style = if stage == "paused" { t.warn } else { t.title };
        let mut first = vec![
            Span::styled(self.info.scenario.as_str(), t.title),
            Span::styled(format!(" on {}", self.info.runtime), t.label),
            Span::raw("   "),
            Span::styled(format!(" {stage} "), stage_style),
            Span::styled("   elapsed ", t.label),
            Span::raw(clock(s.elapsed)),
        ];
        if let Some(point) = &self.info.point {
            first.push(Span::styled(format!("   {point}"), t.title));
        }
        if s.warm_up > 0 {
            first.push(Span::styled("   warm-up ", t.label));
            first.push(Span::raw(count(s.warm_up)));
        }
        let failed_style = if s.failed > 0 { t.bad } else { t.label };
        let mut second = vec![
            Span::styled("ok ", t.label),
            Span::styled(count(s.ok), t.ok),
            Span::styled("   failed ", t.label),
            Span::styled(count(s.failed), failed_style),
        ];
        if s.dropped > 0 {
            second.push(Span::styled("   dropped ", t.label));
            second.push(Span::styled(count(s.dropped), t.bad));
        }
        second.push(Span::styled("   load ", t.label));
        second.push(Span::raw(load_label(s.load)));
        // A change asked for here shows at once, before the engine confirms it.
        if self.app.load != s.load {
            second.push(Span::styled(
                format!(" -> {}", load_label(self.app.load)),
                t.warn,
            ));
        }
        if !s.faults.is_empty() {
            second.push(Span::styled("   fault ", t.label));
            second.push(Span::styled(s.faults.join(", "), t.bad));
        }
        let live = s.live.line();
        if !live.is_empty() {
            let style = if s.live.alarm() { t.bad } else { t.label };
            second.push(Span::styled(format!("   {live}"), style));
        }
        Paragraph::new(vec![Line::from(first), Line::from(second)])
            .block(block)
            .render(area, buf);
    }
}

/// Key hints, or the note the last key left.
pub struct Footer<'a> {
    pub app: &'a App,
    pub theme: &'a Theme,
}

impl Widget for Footer<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let line = match &self.app.message {
            Some(m) => Line::from(Span::styled(format!(" {m}"), self.theme.warn)),
            None => Line::from(Span::styled(
                " p pause  +/- load  r report  ? help  q quit",
                self.theme.label,
            )),
        };
        line.render(area, buf);
    }
}
