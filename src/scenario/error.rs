//! Errors for scenario files: every one names the file, the line and column, what is
//! wrong, and what to write instead.

use serde_saphyr::{DefaultMessageFormatter, MessageFormatter};
use std::fmt;
use std::path::{Path, PathBuf};

/// A 1-based line and column in a scenario file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: u64,
    pub column: u64,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// Everything that can be wrong with a scenario file. All of it is bad input
/// (exit code 2), an unreadable file included.
///
/// `Display` is the complete message: `FILE:LINE:COL: what is wrong`, the offending
/// line with a caret under the value, then `  hint: what to write instead`.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read. The I/O error is part of the message and not a
    /// `#[source]`, so `{:#}` chains do not print it twice.
    #[error(
        "{}: cannot read the scenario file: {error}\n  hint: check the path; a scenario is a YAML file such as scenarios/alice-pays-bob.yaml",
        path.display()
    )]
    Unreadable {
        path: PathBuf,
        error: std::io::Error,
    },

    /// Found by the YAML parser: a syntax error, an unknown or missing field, a value
    /// of the wrong type, an unknown enum value, a duplicate key.
    #[error("{}", render(.path, *.at, .message, .excerpt, .hint))]
    Yaml {
        path: PathBuf,
        at: Option<Position>,
        message: String,
        excerpt: String,
        hint: String,
    },

    /// Valid YAML that breaks a rule of the scenario format (unknown node, zero
    /// capacity, no path from a sender to the receiver, ...).
    #[error("{}", render(.path, Some(*.at), .message, .excerpt, .hint))]
    Invalid {
        path: PathBuf,
        at: Position,
        message: String,
        excerpt: String,
        hint: String,
    },
}

impl ScenarioError {
    /// Every scenario error is bad input: the user has to change the file or the
    /// path they gave (exit code 2).
    pub fn is_input_error(&self) -> bool {
        true
    }

    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            Self::Unreadable { path, .. }
            | Self::Yaml { path, .. }
            | Self::Invalid { path, .. } => path,
        }
    }

    /// Where in the file, when known.
    pub fn position(&self) -> Option<Position> {
        match self {
            Self::Unreadable { .. } => None,
            Self::Yaml { at, .. } => *at,
            Self::Invalid { at, .. } => Some(*at),
        }
    }

    /// Turns a serde-saphyr error into a located message with a hint.
    pub(crate) fn from_yaml(path: &Path, source: &str, err: &serde_saphyr::Error) -> Self {
        let inner = err.without_snippet();
        let at = inner.location().filter(|l| l.line() > 0).map(|l| Position {
            line: l.line(),
            column: l.column(),
        });
        let len = inner.location().map_or(1, |l| l.span().len());
        let raw = DefaultMessageFormatter.format_message(inner);
        // The parser's text may quote user input; keep it on one line.
        let raw = raw.chars().fold(String::new(), |mut out, c| {
            if c.is_control() {
                out.extend(c.escape_debug());
            } else {
                out.push(c);
            }
            out
        });
        let (message, hint) = describe(inner, raw);
        Self::Yaml {
            path: path.to_path_buf(),
            at,
            message,
            excerpt: at.map_or_else(String::new, |at| excerpt(source, at, len)),
            hint,
        }
    }
}

/// The message and hint for a parser error; falls back to the parser's own text.
fn describe(err: &serde_saphyr::Error, raw: String) -> (String, String) {
    use serde_saphyr::Error as E;
    match err {
        E::SerdeUnknownField {
            field, expected, ..
        } => (
            format!("unknown field `{field}`"),
            format!(
                "allowed here: {}; fix the spelling or remove `{field}`",
                expected.join(", ")
            ),
        ),
        E::SerdeUnknownVariant {
            variant, expected, ..
        } => (
            format!("unknown value `{variant}`"),
            format!("write one of: {}", expected.join(", ")),
        ),
        E::SerdeMissingField { field, .. } => (
            format!("missing field `{field}`"),
            format!("add `{field}:` (docs/scenario-format.md shows what it holds)"),
        ),
        E::DuplicateMappingKey { key, .. } => (
            match key {
                Some(k) => format!("`{k}` appears twice in the same mapping"),
                None => "a key appears twice in the same mapping".to_string(),
            },
            "remove or rename one of the two; names under nodes: must be unique".to_string(),
        ),
        E::InvalidScalar { ty, .. } => {
            let (what, example) = scalar_expectation(ty);
            (
                format!("this value is not {what}"),
                format!("write {what}, e.g. {example}"),
            )
        }
        E::SerdeInvalidType { .. } | E::Unexpected { .. } => (
            raw,
            "check the indentation and the value's type against docs/scenario-format.md"
                .to_string(),
        ),
        _ => (
            raw,
            "fix the YAML syntax here or just above (an unclosed [ or {, a tab, a value with `: ` that needs quotes)".to_string(),
        ),
    }
}

fn scalar_expectation(ty: &str) -> (&'static str, &'static str) {
    match ty {
        "u8" | "u16" | "u32" | "u64" | "usize" => ("a whole number of at least 0", "10"),
        "i8" | "i16" | "i32" | "i64" | "isize" => ("a whole number", "10"),
        "f32" | "f64" => ("a number", "20 or 2.5"),
        "bool" => ("true or false", "true"),
        _ => ("a plain value", "alice"),
    }
}

/// The source line at `at` with a caret under `len` characters, like rustc.
pub(crate) fn excerpt(source: &str, at: Position, len: u64) -> String {
    let Some(line) = source.lines().nth((at.line as usize).saturating_sub(1)) else {
        return String::new();
    };
    let line = line.trim_end_matches('\r');
    let number = at.line.to_string();
    let pad = " ".repeat(number.len());
    let col = (at.column as usize).saturating_sub(1);
    let rest = line.chars().count().saturating_sub(col).max(1);
    let carets = "^".repeat((len as usize).clamp(1, rest));
    let indent: String = line
        .chars()
        .take(col)
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    format!("{pad} |\n{number} | {line}\n{pad} | {indent}{carets}\n")
}

fn render(path: &Path, at: Option<Position>, message: &str, excerpt: &str, hint: &str) -> String {
    let location = match at {
        Some(at) => format!("{}:{at}", path.display()),
        None => path.display().to_string(),
    };
    format!("{location}: {message}\n{excerpt}  hint: {hint}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_puts_carets_under_the_value() {
        let text = "name: x\nnodes:\n  alice: {}\n";
        let got = excerpt(text, Position { line: 3, column: 3 }, 5);
        assert_eq!(got, "  |\n3 |   alice: {}\n  |   ^^^^^\n");
    }

    #[test]
    fn display_is_file_line_col_message_excerpt_hint() {
        let err = ScenarioError::Invalid {
            path: PathBuf::from("s.yaml"),
            at: Position { line: 2, column: 4 },
            message: "bad".into(),
            excerpt: "  |\n2 | x: y\n  |    ^\n".into(),
            hint: "write z".into(),
        };
        assert_eq!(
            err.to_string(),
            "s.yaml:2:4: bad\n  |\n2 | x: y\n  |    ^\n  hint: write z"
        );
        assert_eq!(err.position().map(|p| p.line), Some(2));
        assert!(err.is_input_error());
    }
}
