//! The secrets the run knows, redacted by value: the chain's RPC password, the
//! passwords and API keys the tool derives for Eclair and ldk-server, the LND
//! macaroon it reads. Shapes ([`crate::redact::redact_text`]) catch a secret next to its
//! name; a value quoted without its name (a node's log line, an HTTP dump, an error
//! message) is caught here.
//!
//! One set for the process, behind a lock: the values are learned deep inside the
//! runtimes and node clients, and redaction happens in the report writers, in the
//! log tails quoted in errors and in the error printed at the end. Passing a registry
//! through all of them would thread one more argument through the `Runtime` trait,
//! every node client and every writer, for a set that only grows. A process runs one
//! benchmark (a sweep's points run one after the other), so a value registered by an
//! earlier point is still a secret of the same user.

use std::collections::BTreeSet;
use std::sync::RwLock;

/// What replaces a redacted value (here, at the bottom of the house, so that node
/// clients can register what they learn without depending on the redaction shapes).
pub const REDACTED: &str = "[REDACTED]";

/// Shorter values are not registered: replacing a short common string (`lnbench`,
/// `admin`) everywhere would deface the report without protecting anything.
pub const MIN_SECRET_LEN: usize = 8;

static KNOWN: RwLock<BTreeSet<String>> = RwLock::new(BTreeSet::new());

/// Registers `value` (trimmed) as a secret of this run: from now on every text
/// through [`crate::redact::redact_text`] has it replaced by [`REDACTED`]. Values
/// shorter than [`MIN_SECRET_LEN`] characters are ignored.
pub fn register_secret(value: &str) {
    let value = value.trim();
    if value.chars().count() < MIN_SECRET_LEN {
        return;
    }
    let mut known = KNOWN
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if !known.contains(value) {
        known.insert(value.to_string());
    }
}

/// `text` with every registered value replaced, the longest first (a value that
/// contains another is replaced whole).
pub(crate) fn redact_known(text: &str) -> String {
    let known = KNOWN
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut values: Vec<&String> = known.iter().filter(|v| text.contains(v.as_str())).collect();
    if values.is_empty() {
        return text.to_string();
    }
    values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    let mut out = text.to_string();
    for value in values {
        out = out.replace(value.as_str(), REDACTED);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::redact_text;

    #[test]
    fn a_registered_value_is_replaced_wherever_it_stands() {
        let secret = "k7Q2x9vLm4Rp8sTz";
        let line = format!("2026-11-26 [DBG] HTTP 401 for key {secret}; retry with {secret}");
        assert!(redact_text(&line).contains(secret), "not registered yet");
        register_secret(secret);
        assert_eq!(
            redact_text(&line),
            format!("2026-11-26 [DBG] HTTP 401 for key {REDACTED}; retry with {REDACTED}")
        );
    }

    #[test]
    fn short_values_are_not_registered() {
        register_secret("  abc1234  ");
        assert_eq!(redact_text("abc1234 and abc1234x"), "abc1234 and abc1234x");
    }

    #[test]
    fn the_longest_registered_value_goes_first() {
        register_secret("Zq8Wm3Np");
        register_secret("Zq8Wm3NpLongerValue");
        assert_eq!(
            redact_text("a Zq8Wm3NpLongerValue b Zq8Wm3Np"),
            format!("a {REDACTED} b {REDACTED}")
        );
    }
}
