//! Keys to [`Action`]s. The key list in the help overlay comes from [`KEYS`], so
//! the two cannot drift apart.

use super::app::Action;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// Every key, as the help overlay lists it.
pub const KEYS: [(&str, &str); 6] = [
    ("p / space", "pause or resume (in-flight payments finish)"),
    ("+ / up", "more load: concurrency or target rate, one step"),
    ("- / down", "less load, one step"),
    ("r", "write a report snapshot now (the run goes on)"),
    ("?", "show or hide this help (esc hides it)"),
    ("q / ctrl-c", "stop the run: report, then teardown"),
];

/// The action a key asks for; `None` for keys without one and for key releases.
pub fn action_for(key: KeyEvent) -> Option<Action> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    // Raw mode delivers Ctrl-C as a key, not as SIGINT.
    if key.modifiers.contains(KeyModifiers::CONTROL) {
        return matches!(key.code, KeyCode::Char('c') | KeyCode::Char('C')).then_some(Action::Quit);
    }
    let action = match key.code {
        KeyCode::Char('p') | KeyCode::Char(' ') => Action::TogglePause,
        KeyCode::Char('+') | KeyCode::Char('=') | KeyCode::Up => Action::Increase,
        KeyCode::Char('-') | KeyCode::Char('_') | KeyCode::Down => Action::Decrease,
        KeyCode::Char('?') => Action::ToggleHelp,
        KeyCode::Esc => Action::CloseHelp,
        KeyCode::Char('r') => Action::ReportSnapshot,
        KeyCode::Char('q') => Action::Quit,
        _ => return None,
    };
    // A held key repeats: fine for load steps, not for toggles.
    if key.kind == KeyEventKind::Repeat && !matches!(action, Action::Increase | Action::Decrease) {
        return None;
    }
    Some(action)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyEventState;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn documented_keys_map_to_their_actions() {
        for (code, action) in [
            (KeyCode::Char('p'), Action::TogglePause),
            (KeyCode::Char(' '), Action::TogglePause),
            (KeyCode::Char('+'), Action::Increase),
            (KeyCode::Up, Action::Increase),
            (KeyCode::Char('-'), Action::Decrease),
            (KeyCode::Down, Action::Decrease),
            (KeyCode::Char('?'), Action::ToggleHelp),
            (KeyCode::Esc, Action::CloseHelp),
            (KeyCode::Char('r'), Action::ReportSnapshot),
            (KeyCode::Char('q'), Action::Quit),
        ] {
            assert_eq!(action_for(key(code)), Some(action), "{code:?}");
        }
        assert_eq!(action_for(key(KeyCode::Char('x'))), None);
    }

    #[test]
    fn ctrl_c_quits_and_other_control_keys_do_nothing() {
        let ctrl = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
        assert_eq!(action_for(ctrl('c')), Some(Action::Quit));
        assert_eq!(action_for(ctrl('p')), None);
        assert_eq!(action_for(ctrl('q')), None);
    }

    #[test]
    fn releases_are_ignored_and_only_load_keys_repeat() {
        let with_kind = |code, kind| KeyEvent {
            code,
            modifiers: KeyModifiers::NONE,
            kind,
            state: KeyEventState::NONE,
        };
        assert_eq!(
            action_for(with_kind(KeyCode::Char('q'), KeyEventKind::Release)),
            None
        );
        assert_eq!(
            action_for(with_kind(KeyCode::Char('p'), KeyEventKind::Repeat)),
            None
        );
        assert_eq!(
            action_for(with_kind(KeyCode::Up, KeyEventKind::Repeat)),
            Some(Action::Increase)
        );
    }
}
