//! Errors for scenario files: every one names the file, the line and column, what is
//! wrong, and what to write instead.

use serde_saphyr::{DefaultMessageFormatter, Location, MessageFormatter};
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
        let raw = printable(&raw);
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
            duplicate_hint(key.as_deref()),
        ),
        E::InvalidScalar { ty, .. } => {
            let (what, example) = scalar_expectation(ty);
            (
                format!("this value is not {what}"),
                format!("write {what}, e.g. {example}"),
            )
        }
        E::SerdeInvalidType {
            unexpected,
            expected,
            ..
        } => (
            format!("this is {}, where {} belongs", plain_type(unexpected), plain_type(expected)),
            TYPE_HINT.to_string(),
        ),
        E::Unexpected { expected, .. } => (unexpected_shape(expected), TYPE_HINT.to_string()),
        E::MultipleDocuments { .. } => (
            "this file holds more than one YAML document (a `---` line starts another)".into(),
            "keep one scenario per file: remove the `---` line and what follows, or split the file".into(),
        ),
        E::TaggedEnumMismatch { tagged, .. } => (
            format!("the tag `!{tagged}` does not belong here"),
            "remove the `!` tag; write the plain value".into(),
        ),
        E::ExternallyTaggedEnumExpectedScalarOrMapping { .. }
        | E::ExpectedStringKeyForExternallyTaggedEnum { .. }
        | E::UnexpectedValueForUnitEnumVariant { .. } => (
            "this must be one name, not a list or a mapping".into(),
            "write one of the names docs/scenario-format.md lists for this field".into(),
        ),
        _ => (
            raw,
            "fix the YAML syntax here or just above (an unclosed [ or {, a tab, a value with `: ` that needs quotes)".to_string(),
        ),
    }
}

const TYPE_HINT: &str =
    "check the indentation and the value's type against docs/scenario-format.md";

/// The hint for a key given twice: a field of the format, or a name the user chose.
fn duplicate_hint(key: Option<&str>) -> String {
    let names = "names under nodes: must be unique";
    match key {
        Some(k) if FIELDS.contains(&k) => {
            format!("give `{k}:` once; merge the two blocks into one")
        }
        Some(_) => format!("remove or rename one of the two; {names}"),
        None => format!("remove or rename one of the two; {names}"),
    }
}

/// The scenario format's own field names (a duplicate of one is never a naming clash).
const FIELDS: &[&str] = &[
    "name",
    "description",
    "runtime",
    "pull",
    "chain",
    "nodes",
    "channels",
    "workload",
    "thresholds",
    "sweep",
    "repeat",
    "after_load",
    "etcd",
    "profile",
    "external",
    "links",
    "faults",
    "topology",
    "kubernetes",
    "resources",
    "kind",
    "senders",
    "receiver",
    "amount_msat",
    "concurrency",
    "rate",
    "stop",
    "payments",
    "duration",
    "payment_timeout",
    "implementation",
    "version",
    "from",
    "to",
    "capacity_sat",
    "count",
];

/// The parser's "expected X" for a value of the wrong shape, in the user's words.
fn unexpected_shape(expected: &str) -> String {
    if expected.contains("scalar") || expected.contains("str") {
        "this must be a single value (a word or a number), not a list or a mapping".into()
    } else if expected.contains("mapping") {
        "this must be a mapping (`key: value` lines, or `{ key: value }`), not a single value, a list or nothing".into()
    } else if expected.contains("sequence") {
        "this must be a list (`[a, b]`, or `- a` lines)".into()
    } else {
        "this value has the wrong shape here".into()
    }
}

/// A serde type description (`struct RawWorkload`, `u64`, `a sequence`) in plain words;
/// Rust type names never reach the user.
fn plain_type(what: &str) -> String {
    let w = what.trim();
    let words = [
        ("sequence", "a list"),
        ("map", "a mapping (`key: value` lines)"),
        ("struct", "a mapping (`key: value` lines)"),
        ("string", "a word"),
        ("str", "a word"),
        ("bool", "true or false"),
        ("float", "a number"),
        ("f64", "a number"),
        ("integer", "a whole number"),
        ("u64", "a whole number"),
        ("u32", "a whole number"),
        ("unit", "nothing"),
        ("null", "nothing"),
        ("enum", "one of the names docs/scenario-format.md lists"),
        ("option", "a value"),
    ];
    (words.iter()).find(|(k, _)| w.contains(k)).map_or_else(
        || "a value of another kind".to_string(),
        |(_, v)| (*v).to_string(),
    )
}

/// `text` with control characters and bidirectional-text controls escaped (`\u{1b}`),
/// so that nothing a scenario holds can move the cursor, clear the screen or reorder
/// what the terminal shows. Newlines are escaped too: callers pass one line.
pub(crate) fn printable(text: &str) -> String {
    text.chars().fold(String::new(), |mut out, c| {
        if is_hidden(c) {
            out.extend(c.escape_unicode());
        } else if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
        out
    })
}

/// Bidirectional-text controls and other invisible format characters.
fn is_hidden(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
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

/// Widest excerpt line shown, in characters: a screen's width, whatever the file holds.
const EXCERPT_WIDTH: usize = 100;

/// The source line at `at` with a caret under `len` characters, like rustc. A line
/// wider than a screen is cut around the column (`…` marks the cuts); control and
/// bidirectional characters are shown escaped.
pub(crate) fn excerpt(source: &str, at: Position, len: u64) -> String {
    let Some(line) = source.lines().nth((at.line as usize).saturating_sub(1)) else {
        return String::new();
    };
    let line = line.trim_end_matches('\r');
    let number = at.line.to_string();
    let pad = " ".repeat(number.len());
    // Each character as shown: a tab stays a tab (the caret line copies it).
    let cells: Vec<String> = (line.chars())
        .map(|c| {
            if c == '\t' {
                "\t".into()
            } else {
                printable(c.encode_utf8(&mut [0; 4]))
            }
        })
        .collect();
    let width = |cells: &[String]| cells.iter().map(|c| c.chars().count()).sum::<usize>();
    let col = ((at.column as usize).saturating_sub(1)).min(cells.len());
    let start = if width(&cells) <= EXCERPT_WIDTH {
        0
    } else {
        col.saturating_sub(10)
    };
    let mut end = start;
    while end < cells.len() && width(&cells[start..=end]) <= EXCERPT_WIDTH {
        end += 1;
    }
    let (before, after) = (
        if start > 0 { "…" } else { "" },
        if end < cells.len() { "…" } else { "" },
    );
    let shown: String = cells[start..end].concat();
    let indent: String = before
        .chars()
        .map(|_| ' ')
        .chain(cells[start..col.max(start)].iter().flat_map(|c| {
            let tab = c == "\t";
            c.chars().map(move |_| if tab { '\t' } else { ' ' })
        }))
        .collect();
    let under = (col..(col + len as usize).min(end))
        .map(|i| cells[i].chars().count())
        .sum::<usize>();
    let carets = "^".repeat(under.max(1));
    format!("{pad} |\n{number} | {before}{shown}{after}\n{pad} | {indent}{carets}\n")
}

/// `printable` for text of several lines: the line breaks stay.
fn printable_lines(text: &str) -> String {
    text.split('\n')
        .map(printable)
        .collect::<Vec<_>>()
        .join("\n")
}

fn render(path: &Path, at: Option<Position>, message: &str, excerpt: &str, hint: &str) -> String {
    let location = match at {
        Some(at) => format!("{}:{at}", path.display()),
        None => path.display().to_string(),
    };
    let (message, hint) = (printable_lines(message), printable_lines(hint));
    format!("{location}: {message}\n{excerpt}  hint: {hint}")
}

/// Makes located errors for one file.
pub(crate) struct Ctx<'a> {
    pub path: &'a Path,
    pub source: &'a str,
}

impl Ctx<'_> {
    pub fn error(
        &self,
        loc: &Location,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> ScenarioError {
        let at = Position {
            line: loc.line(),
            column: loc.column(),
        };
        ScenarioError::Invalid {
            path: self.path.to_path_buf(),
            at,
            message: message.into(),
            excerpt: excerpt(self.source, at, loc.span().len()),
            hint: hint.into(),
        }
    }
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
    fn a_line_wider_than_a_screen_is_cut_around_the_column() {
        let text = format!("name: x\nbogus: {}\n", "x".repeat(1_000_000));
        let got = excerpt(&text, Position { line: 2, column: 1 }, 5);
        assert!(
            got.lines().all(|l| l.chars().count() <= EXCERPT_WIDTH + 8),
            "{got}"
        );
        assert!(
            got.contains("2 | bogus: xxx") && got.contains("…\n"),
            "{got}"
        );
        assert!(got.ends_with("  | ^^^^^\n"), "{got}");
        // Far into the line, the cut starts before the column and the caret follows.
        let col = 500_000;
        let got = excerpt(
            &text,
            Position {
                line: 2,
                column: col,
            },
            1,
        );
        assert!(
            got.lines().all(|l| l.chars().count() <= EXCERPT_WIDTH + 8),
            "{got}"
        );
        let lines: Vec<&str> = got.lines().collect();
        let caret = lines[2].find('^').unwrap();
        assert_eq!(lines[1].chars().nth(caret), Some('x'), "{got}");
    }

    #[test]
    fn control_and_bidi_characters_never_reach_the_terminal_raw() {
        let text = "name: \"a\u{1b}[2J\u{202e}b\"\n";
        let got = excerpt(text, Position { line: 1, column: 9 }, 1);
        assert!(
            !got.contains('\u{1b}') && !got.contains('\u{202e}'),
            "{got:?}"
        );
        assert!(got.contains("a\\u{1b}[2J\\u{202e}b"), "{got}");
        assert!(got.ends_with("  |         ^^^^^^\n"), "{got}");
        let err = ScenarioError::Invalid {
            path: PathBuf::from("s.yaml"),
            at: Position { line: 1, column: 7 },
            message: "name \"\u{1b}[2J\u{2066}\" is not allowed".into(),
            excerpt: String::new(),
            hint: "write \u{7}x".into(),
        };
        let shown = err.to_string();
        assert!(
            !shown
                .chars()
                .any(|c| c.is_control() && c != '\n' || is_hidden(c)),
            "{shown:?}"
        );
    }

    #[test]
    fn a_duplicate_field_is_not_called_a_name_clash() {
        assert!(duplicate_hint(Some("workload")).contains("give `workload:` once"));
        assert!(duplicate_hint(Some("alice")).contains("names under nodes: must be unique"));
    }

    #[test]
    fn type_errors_never_name_rust_types() {
        for t in [
            "struct RawWorkload",
            "u64",
            "a sequence",
            "enum RawPaymentKind",
            "f64",
        ] {
            let said = plain_type(t);
            assert!(
                !said.contains("Raw") && !said.contains("u64") && !said.contains("f64"),
                "{said}"
            );
        }
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
