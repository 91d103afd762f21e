//! Durations written in a scenario ("500ms", "10s", "1h30m"). Every field reads them
//! with [`parse`]: the checks (zero, an upper bound) are the same everywhere, while
//! each field keeps its own wording, which the error tests pin.

use super::error::Ctx;
use super::error::ScenarioError;
use serde_saphyr::Spanned;
use std::time::Duration;

/// How one field takes a duration and words its errors.
pub(super) struct Rule<'a> {
    /// Starts every message: `profile duration`, `for:`.
    pub name: &'a str,
    /// The hint when the text is not a duration.
    pub hint: &'a str,
    /// The hint when the duration is 0; `None` accepts 0.
    pub zero: Option<&'a str>,
    /// The longest duration accepted, if any.
    pub max: Option<Max<'a>>,
}

/// An upper bound and how an error over it reads.
pub(super) struct Max<'a> {
    pub limit: Duration,
    /// Follows the written value: `is longer than 10 minutes`.
    pub says: &'a str,
    pub hint: &'a str,
}

/// The duration `text` holds, checked against `rule`.
pub(super) fn parse(
    ctx: &Ctx,
    text: &Spanned<String>,
    rule: &Rule,
) -> Result<Duration, ScenarioError> {
    let at = &text.referenced;
    let written = text.value.trim();
    let name = rule.name;
    match humantime::parse_duration(written) {
        Ok(d) if d.is_zero() => match rule.zero {
            Some(hint) => Err(ctx.error(at, format!("{name} is 0"), hint)),
            None => Ok(d),
        },
        Ok(d) => match &rule.max {
            Some(max) if d > max.limit => {
                Err(ctx.error(at, format!("{name} \"{written}\" {}", max.says), max.hint))
            }
            _ => Ok(d),
        },
        Err(e) => Err(ctx.error(
            at,
            format!("{name} \"{}\" is not a duration ({e})", text.value),
            rule.hint,
        )),
    }
}

/// `limit` as a scenario would write it: `10s`, `30days`.
pub(super) fn format(limit: Duration) -> String {
    humantime::format_duration(limit).to_string()
}
