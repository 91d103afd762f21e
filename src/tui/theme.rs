//! Colours, or none: <https://no-color.org> asks for no colour when `NO_COLOR` is
//! set to anything but the empty string, and `--no-color` asks the same on the command
//! line. Bold and reverse stay, they are not colour.

use ratatui::style::{Color, Modifier, Style};
use std::ffi::OsStr;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by `--no-color`. Process-wide because the choice is the user's for the whole
/// invocation (live view and log lines alike), and the environment cannot be changed
/// safely once threads run.
static COLOR_OFF: AtomicBool = AtomicBool::new(false);

/// `--no-color`: no colour anywhere from now on, whatever `NO_COLOR` says.
pub fn disable_color() {
    COLOR_OFF.store(true, Ordering::Relaxed);
}

/// Whether output may be coloured: not after `--no-color`, nor under `NO_COLOR`.
pub fn color_wanted() -> bool {
    wants_color(
        COLOR_OFF.load(Ordering::Relaxed),
        std::env::var_os("NO_COLOR").as_deref(),
    )
}

/// The rule of [`color_wanted`] on its inputs: the flag, and `NO_COLOR`'s value.
fn wants_color(flag_off: bool, no_color: Option<&OsStr>) -> bool {
    !flag_off && no_color.is_none_or(OsStr::is_empty)
}

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
    /// The theme `--no-color` and `NO_COLOR` ask for.
    pub fn from_env() -> Self {
        if color_wanted() {
            Theme::colored()
        } else {
            Theme::plain()
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

    #[test]
    fn the_flag_or_a_non_empty_no_color_turns_colour_off() {
        let set = Some(OsStr::new("1"));
        let empty = Some(OsStr::new(""));
        assert!(wants_color(false, None));
        assert!(wants_color(false, empty), "an empty NO_COLOR asks nothing");
        assert!(!wants_color(false, set));
        assert!(!wants_color(true, None));
        assert!(!wants_color(true, empty));
    }
}
