use crate::progress::{Progress, StepState};
use crate::tui::{Theme, TuiInfo};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget, Wrap};
use std::time::Instant;

/// Frames of the spinner beside a running step.
const SPINNER: [&str; 4] = ["|", "/", "-", "\\"];

/// The steps of setting the network up (or tearing it down): a spinner and the time
/// so far for the running step, the time taken for the others, the failure and its
/// log lines when one failed.
pub struct SetupView<'a> {
    pub progress: &'a Progress,
    pub info: &'a TuiInfo,
    /// The time the view is drawn at (a parameter, so frames can be tested).
    pub now: Instant,
    pub theme: &'a Theme,
}

impl Widget for SetupView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let (p, t) = (self.progress, self.theme);
        let failure_rows = p.failure.as_ref().map_or(0, |_| area.height / 2);
        let [steps_area, failure_area, footer] = Layout::vertical([
            Constraint::Min(3),
            Constraint::Length(failure_rows),
            Constraint::Length(1),
        ])
        .areas(area);

        let width = p.steps.iter().map(|s| s.name.len()).max().unwrap_or(0);
        let mut lines = vec![
            Line::from(vec![
                Span::styled(self.info.scenario.as_str(), t.title),
                Span::styled(format!(" on {}", self.info.runtime), t.label),
                Span::raw("   "),
                Span::styled(format!(" {} ", p.title), t.title),
            ]),
            Line::raw(""),
        ];
        for step in &p.steps {
            let (mark, mark_style, secs) = match step.state {
                StepState::Running { since } => {
                    let running = self.now.saturating_duration_since(since);
                    let frame = (running.as_millis() / 250) as usize % SPINNER.len();
                    (SPINNER[frame], t.warn, running.as_secs_f64())
                }
                StepState::Done { took } => ("ok", t.ok, took.as_secs_f64()),
                StepState::Failed { took } => ("FAILED", t.bad, took.as_secs_f64()),
            };
            let mut spans = vec![
                Span::styled(format!(" {mark:>6} "), mark_style),
                Span::raw(format!("{:<width$}", step.name)),
                Span::styled(format!("  {secs:>5.1} s"), t.label),
            ];
            if let Some(detail) = &step.detail {
                spans.push(Span::styled(format!("   {detail}"), t.label));
            }
            lines.push(Line::from(spans));
        }
        Paragraph::new(lines)
            .block(
                Block::bordered()
                    .border_style(t.border)
                    .title(Span::styled(" lnbench-tui ", t.title)),
            )
            .render(steps_area, buf);

        if let Some(failure) = &p.failure {
            Paragraph::new(failure.lines().map(Line::raw).collect::<Vec<_>>())
                .wrap(Wrap { trim: false })
                .block(
                    Block::bordered()
                        .border_style(t.bad)
                        .title(Span::styled(" what went wrong ", t.bad)),
                )
                .render(failure_area, buf);
        }
        let hint = if p.failure.is_some() {
            " the error is printed again when the view closes"
        } else {
            " q / Ctrl-C stop the run"
        };
        Paragraph::new(Line::styled(hint, t.label)).render(footer, buf);
    }
}
