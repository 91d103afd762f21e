//! Colours, or none: <https://no-color.org> asks for no colour when `NO_COLOR` is
//! set to anything but the empty string. Bold and reverse stay, they are not colour.

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Theme {
    pub title: Style,
    pub label: Style,
    pub ok: Style,
    pub bad: Style,
    pub warn: Style,
    pub p50: Style,
    pub p99: Style,
    pub tps: Style,
    pub border: Style,
}

impl Theme {
    pub fn from_env() -> Self {
        match std::env::var_os("NO_COLOR") {
            Some(v) if !v.is_empty() => Theme::plain(),
            _ => Theme::colored(),
        }
    }

    pub fn colored() -> Self {
        Theme {
            title: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            label: Style::new().fg(Color::Gray),
            ok: Style::new().fg(Color::Green),
            bad: Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            warn: Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            p50: Style::new().fg(Color::Cyan),
            p99: Style::new().fg(Color::Magenta),
            tps: Style::new().fg(Color::Green),
            border: Style::new().fg(Color::DarkGray),
        }
    }

    pub fn plain() -> Self {
        let bold = Style::new().add_modifier(Modifier::BOLD);
        Theme {
            title: bold,
            label: Style::new(),
            ok: Style::new(),
            bad: bold,
            warn: Style::new().add_modifier(Modifier::REVERSED),
            p50: Style::new(),
            p99: Style::new(),
            tps: Style::new(),
            border: Style::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_theme_has_no_colour() {
        let t = Theme::plain();
        for s in [
            t.title, t.label, t.ok, t.bad, t.warn, t.p50, t.p99, t.tps, t.border,
        ] {
            assert_eq!((s.fg, s.bg), (None, None), "{s:?}");
        }
        assert_ne!(Theme::colored().ok.fg, None);
    }
}
