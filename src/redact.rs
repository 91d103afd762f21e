//! Keeps credentials out of reports. The tool never puts the chain's RPC password or
//! a node's credentials into the report model, but the scenario text is copied as
//! written, a user may pass a secret in `args:` (`--btcd.rpcpass=...`), and error
//! texts quote node logs. Reports are meant to be shared, so every string of a report
//! passes through [`redact_text`], which knows the shapes a secret comes in: flags of
//! any dash style (`--rpcpass=x`, `-rpcpassword x`), keys of YAML, JSON, config files
//! and DSNs (`password: x`, `"rpcpass": "x"`, `password=x`), and URLs with user info
//! (`postgres://user:x@host`).

pub use crate::secrets::{MIN_SECRET_LEN, REDACTED, register_secret};

/// Parts of a flag name that mark its value as a credential: passwords, runes (Core
/// Lightning), secrets, tokens and RPC auth strings. Each node driver adds the words of
/// its own credentials ([`crate::node::NodeDriver::secret_words`]).
const SECRET_MARKERS: [&str; 5] = ["pass", "rune", "secret", "token", "auth"];

/// True when a flag named `name` (lowercase, without dashes) carries a credential.
fn is_secret(name: &str) -> bool {
    let drivers = crate::node::Implementation::ALL.map(crate::node::driver);
    SECRET_MARKERS.iter().any(|m| name.contains(m))
        || (drivers.iter()).any(|d| d.secret_words().iter().any(|w| name.contains(w)))
}

/// The scenario text as a report copies it: [`redact_text`].
pub fn redact_scenario_text(text: &str) -> String {
    redact_text(text)
}

/// `text` with every secret-looking value replaced by [`REDACTED`]; everything else,
/// comments and layout included, is kept as written:
/// - flags: `--btcd.rpcpass=hunter2` becomes `--btcd.rpcpass=[REDACTED]`, the same with
///   one dash, and in `["--rpcpass", "hunter2"]` (value as the next argument) the value
///   is replaced too;
/// - keys: `rpcpassword: x`, `"password": "x"`, `password=x` (YAML, JSON, config files,
///   key-value DSNs);
/// - URLs with user info: `postgres://lnd:x@db/lnd` keeps the user, not the password.
///
/// Before the shapes, every value registered with [`register_secret`] is replaced
/// wherever it stands.
pub fn redact_text(text: &str) -> String {
    redact_urls(&redact_keys(&redact_flags(&crate::secrets::redact_known(
        text,
    ))))
}

/// Every string of a JSON document (object keys stay), through [`redact_text`].
pub fn redact_json(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(s) => {
            let redacted = redact_text(s);
            if redacted != *s {
                *s = redacted;
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(redact_json),
        serde_json::Value::Object(map) => map.values_mut().for_each(redact_json),
        _ => {}
    }
}

/// `value` as pretty JSON with every string through [`redact_text`].
pub fn redacted_json(value: &impl serde::Serialize) -> serde_json::Result<String> {
    let mut v = serde_json::to_value(value)?;
    redact_json(&mut v);
    serde_json::to_string_pretty(&v)
}

/// The values of secret-looking flags (one or two dashes).
fn redact_flags(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i + 1 < bytes.len() {
        let starts_flag = bytes[i] == b'-' && (i == 0 || !is_name_byte(bytes[i - 1]));
        if !starts_flag {
            i += 1;
            continue;
        }
        let dashes = if bytes[i + 1] == b'-' { 2 } else { 1 };
        let name_start = i + dashes;
        let name_end = name_start
            + bytes[name_start..]
                .iter()
                .take_while(|b| is_name_byte(**b))
                .count();
        let name = text[name_start..name_end].to_ascii_lowercase();
        if !is_secret(&name) {
            i = name_end.max(i + 1);
            continue;
        }
        let value = if bytes.get(name_end) == Some(&b'=') {
            Some(name_end + 1)
        } else {
            next_argument(bytes, name_end)
        };
        match value {
            Some(start) => {
                let end = value_end(text, start);
                if end > start {
                    out.push_str(&text[copied..start]);
                    out.push_str(REDACTED);
                    copied = end;
                }
                i = end.max(name_end);
            }
            None => i = name_end,
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// The values of secret-looking keys: `key: value`, `key=value`, `"key": "value"`.
fn redact_keys(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let starts_key = is_key_byte(bytes[i]) && (i == 0 || !is_name_byte(bytes[i - 1]));
        if !starts_key {
            i += 1;
            continue;
        }
        let name_end = i + bytes[i..].iter().take_while(|b| is_name_byte(**b)).count();
        let name = text[i..name_end].to_ascii_lowercase();
        let mut j = name_end;
        // A quoted key closes its quote; then the separator, with or without spaces
        // before it (`key = value` of TOML and HOCON).
        let quoted = matches!(bytes.get(j), Some(b'"' | b'\''));
        if quoted {
            j += 1;
        }
        while matches!(bytes.get(j), Some(b' ' | b'\t')) {
            j += 1;
        }
        let separated = match bytes.get(j) {
            Some(b'=') => true,
            // YAML / JSON: a colon followed by a space (not `host:port`), or after a
            // quoted key (compact JSON, `"password":"x"`).
            Some(b':') => quoted || matches!(bytes.get(j + 1), Some(b' ' | b'\t')),
            _ => false,
        };
        if !separated || !is_secret(&name) {
            i = name_end.max(i + 1);
            continue;
        }
        j += 1;
        while j < bytes.len() && matches!(bytes[j], b' ' | b'\t' | b'"' | b'\'') {
            j += 1;
        }
        if name.ends_with("authorization") {
            j = after_auth_scheme(bytes, j);
        }
        let end = value_end(text, j);
        if end > j {
            out.push_str(&text[copied..j]);
            out.push_str(REDACTED);
            copied = end;
        }
        i = end.max(name_end);
    }
    out.push_str(&text[copied..]);
    out
}

/// The password in the user info of URLs: `scheme://user:password@host`.
fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let start = at + 3;
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        // The authority ends at the first `/`, `?`, `#` or value end.
        let authority_len = after
            .bytes()
            .take_while(|b| !matches!(b, b'/' | b'?' | b'#') && !ends_value(*b))
            .count();
        let authority = &after[..authority_len];
        match (authority.rfind('@'), authority.find(':')) {
            (Some(at_sign), Some(colon)) if colon < at_sign => {
                out.push_str(&authority[..=colon]);
                out.push_str(REDACTED);
                out.push_str(&authority[at_sign..]);
                rest = &after[authority_len..];
            }
            _ => rest = after,
        }
    }
    out.push_str(rest);
    out
}

/// Where a value starting at `start` ends: at [`ends_value`], or after a
/// [`REDACTED`] already there (redacting twice changes nothing).
fn value_end(text: &str, start: usize) -> usize {
    if text[start..].starts_with(REDACTED) {
        return start + REDACTED.len();
    }
    start
        + (text.as_bytes()[start..].iter())
            .take_while(|b| !ends_value(**b))
            .count()
}

/// The start of the credential in an `Authorization` header's value: after its
/// scheme (`Basic`, `Bearer`, ...), which stays, when one is there.
fn after_auth_scheme(bytes: &[u8], start: usize) -> usize {
    let word = bytes[start..]
        .iter()
        .take_while(|b| b.is_ascii_alphabetic())
        .count();
    let space = start + word;
    let credential_follows = bytes.get(space) == Some(&b' ')
        && bytes
            .get(space + 1)
            .is_some_and(|b| !b.is_ascii_whitespace());
    if word > 0 && credential_follows {
        space + 1
    } else {
        start
    }
}

fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')
}

/// The end of a flag's value: where the YAML list element or the line ends.
fn ends_value(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, b'"' | b'\'' | b',' | b']' | b'#')
}

/// Where the argument after a flag without `=` starts, when that argument is a value
/// rather than another flag: the next element of a flow list (`["--rpcpass", "x"]`)
/// or of a block list (`- --rpcpass` then `- x` on the next line).
fn next_argument(bytes: &[u8], mut i: usize) -> Option<usize> {
    // Close the flag's element: its quote, then the separator.
    let flag_end = i;
    while i < bytes.len() && matches!(bytes[i], b'"' | b'\'') {
        i += 1;
    }
    let quoted = i > flag_end;
    let mut j = i;
    while j < bytes.len() && matches!(bytes[j], b' ' | b'\t') {
        j += 1;
    }
    let flow = bytes.get(j) == Some(&b',');
    let line_ends = matches!(bytes.get(j), None | Some(b'\n' | b'\r'));
    if !flow && !line_ends {
        // A command line: `--rpcpass x`, the value after a space on the same line.
        if quoted || j == i {
            return None;
        }
        i = j;
    } else if flow {
        i = bytes[i..].iter().position(|b| *b == b',')? + i + 1;
        while i < bytes.len()
            && (bytes[i].is_ascii_whitespace() || matches!(bytes[i], b'"' | b'\''))
        {
            i += 1;
        }
    } else {
        // Block list: the next non-empty line must be `- value`.
        let newline = bytes[i..].iter().position(|b| *b == b'\n')? + i;
        if bytes[i..newline].iter().any(|b| !b.is_ascii_whitespace()) {
            return None;
        }
        i = newline + 1;
        while i < bytes.len() && matches!(bytes[i], b' ' | b'\t') {
            i += 1;
        }
        if bytes.get(i) != Some(&b'-') || bytes.get(i + 1) != Some(&b' ') {
            return None;
        }
        i += 2;
        while i < bytes.len() && (matches!(bytes[i], b' ' | b'\t' | b'"' | b'\'')) {
            i += 1;
        }
    }
    let is_flag = bytes.get(i) == Some(&b'-') && bytes.get(i + 1) == Some(&b'-');
    (i < bytes.len() && !is_flag && !ends_value(bytes[i])).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_secret_flag_values_written_with_equals() {
        let text = "chain:\n  args: [\"--rpcpass=hunter2\", \"--debuglevel=info\"]\n";
        assert_eq!(
            redact_scenario_text(text),
            "chain:\n  args: [\"--rpcpass=[REDACTED]\", \"--debuglevel=info\"]\n"
        );
        assert_eq!(
            redact_scenario_text("args: [--btcd.rpcpass=hunter2, --x=1]"),
            "args: [--btcd.rpcpass=[REDACTED], --x=1]"
        );
        assert_eq!(
            redact_scenario_text("args: ['--Bitcoind.RPCPassword=s3cr3t']"),
            "args: ['--Bitcoind.RPCPassword=[REDACTED]']"
        );
    }

    #[test]
    fn redacts_every_kind_of_credential() {
        for flag in [
            "--rune",
            "--clnrest-rune",
            "--wallet-secret",
            "--api-token",
            "--rpcauth",
            "--wallet-password",
        ] {
            let text = format!("args: [\"{flag}=0201036c6e64\"]\n");
            let redacted = redact_scenario_text(&text);
            assert!(!redacted.contains("0201036c6e64"), "{flag}: {redacted}");
            assert!(
                redacted.contains(&format!("{flag}={REDACTED}")),
                "{redacted}"
            );
        }
    }

    #[test]
    fn redacts_a_value_given_as_the_next_argument() {
        assert_eq!(
            redact_scenario_text("args: [\"--rpcpass\", \"hunter2\", \"--x\"]"),
            "args: [\"--rpcpass\", \"[REDACTED]\", \"--x\"]"
        );
        assert_eq!(
            redact_scenario_text("    args:\n      - --rpcpass\n      - hunter2\n      - --y\n"),
            "    args:\n      - --rpcpass\n      - [REDACTED]\n      - --y\n"
        );
    }

    #[test]
    fn every_string_of_a_json_document_is_redacted() {
        let mut v = serde_json::json!({
            "interrupted_by": "bob exited; log: rpcpass=hunter2",
            "nested": [{"text": "postgres://u:hunter2@h/d"}, 3, null],
            "rpcpass": "plain value under a secret key name is a key, not text",
        });
        redact_json(&mut v);
        let text = v.to_string();
        assert!(!text.contains("hunter2"), "{text}");
        assert_eq!(v["nested"][1], 3);
        assert_eq!(
            v["rpcpass"],
            "plain value under a secret key name is a key, not text"
        );
    }

    #[test]
    fn redacts_single_dash_flags() {
        assert_eq!(
            redact_text("bitcoind -rpcpassword=hunter2 -regtest"),
            "bitcoind -rpcpassword=[REDACTED] -regtest"
        );
        assert_eq!(
            redact_text("args: [\"-rpcpassword\", \"hunter2\"]"),
            "args: [\"-rpcpassword\", \"[REDACTED]\"]"
        );
    }

    #[test]
    fn redacts_secret_keys_of_yaml_json_and_config_files() {
        assert_eq!(
            redact_text("chain:\n  rpcpassword: hunter2 # set\n  user: me\n"),
            "chain:\n  rpcpassword: [REDACTED] # set\n  user: me\n"
        );
        assert_eq!(
            redact_text("{\"password\": \"hunter2\", \"user\": \"me\"}"),
            "{\"password\": \"[REDACTED]\", \"user\": \"me\"}"
        );
        assert_eq!(
            redact_text("host=db user=lnd password=hunter2 dbname=lnd"),
            "host=db user=lnd password=[REDACTED] dbname=lnd"
        );
        assert_eq!(
            redact_text("rpcauth=me:salt$hash\n"),
            "rpcauth=[REDACTED]\n"
        );
    }

    #[test]
    fn redacts_the_password_of_urls_and_keeps_the_user() {
        assert_eq!(
            redact_text("dsn: postgres://lnd:hunter2@db:5432/lnd?sslmode=disable"),
            "dsn: postgres://lnd:[REDACTED]@db:5432/lnd?sslmode=disable"
        );
        assert_eq!(
            redact_text("args: [\"--db.postgres.dsn=postgres://u:p%40ss@h/d\"]"),
            "args: [\"--db.postgres.dsn=postgres://u:[REDACTED]@h/d\"]"
        );
        // No password, or no user info: as written.
        for text in [
            "postgres://lnd@db/lnd",
            "http://127.0.0.1:8080/path?a=b",
            "see https://example.org/x:y@z",
        ] {
            assert_eq!(redact_text(text), text);
        }
    }

    #[test]
    fn redacts_log_lines_quoted_in_errors() {
        let tail = "bob exited during the load; last lines of its log:\n\
                    2026-11-23 [INF] loaded config rpcpass=hunter2\n\
                    connecting to postgres://lnd:hunter2@127.0.0.1/bob";
        let redacted = redact_text(tail);
        assert!(!redacted.contains("hunter2"), "{redacted}");
        assert!(
            redacted.starts_with("bob exited during the load"),
            "{redacted}"
        );
    }

    #[test]
    fn redacts_config_keys_written_with_spaces_around_the_equals_sign() {
        // eclair.conf (HOCON) and ldk-server's TOML, as the tool writes them.
        assert_eq!(
            redact_text("eclair.api.password = \"hunter2hunter2\"\n"),
            "eclair.api.password = \"[REDACTED]\"\n"
        );
        assert_eq!(
            redact_text("api_key = \"0a1b2c3d\"\nrpc_password = \"hunter2\"\nport = 3002\n"),
            "api_key = \"[REDACTED]\"\nrpc_password = \"[REDACTED]\"\nport = 3002\n"
        );
    }

    #[test]
    fn redacts_compact_json() {
        assert_eq!(
            redact_text("{\"password\":\"hunter2\",\"user\":\"me\"}"),
            "{\"password\":\"[REDACTED]\",\"user\":\"me\"}"
        );
    }

    #[test]
    fn redacts_a_flag_value_after_a_space_on_a_command_line() {
        assert_eq!(
            redact_text("exec bitcoin-cli --rpcpass hunter2 -regtest getinfo"),
            "exec bitcoin-cli --rpcpass [REDACTED] -regtest getinfo"
        );
        // A flag without a value stays as written.
        assert_eq!(
            redact_text("lnd --no-macaroons --noseedbackup"),
            "lnd --no-macaroons --noseedbackup"
        );
    }

    #[test]
    fn redacts_the_credential_of_an_authorization_header() {
        assert_eq!(
            redact_text("> Authorization: Basic Omh1bnRlcjJodW50ZXIy\n> Accept: */*"),
            "> Authorization: Basic [REDACTED]\n> Accept: */*"
        );
        assert_eq!(
            redact_text("authorization: Bearer abc.def.ghi"),
            "authorization: Bearer [REDACTED]"
        );
    }

    #[test]
    fn redaction_twice_is_redaction_once() {
        for text in [
            "password=hunter2",
            "--rpcpass=hunter2",
            "rpcpassword: hunter2",
            "postgres://u:hunter2@h/d",
        ] {
            let once = redact_text(text);
            assert_eq!(redact_text(&once), once);
        }
    }

    #[test]
    fn leaves_flags_without_values_and_other_text_alone() {
        for text in [
            "args: [\"--no-tls\", \"--debuglevel=info\"]\n",
            "    args:\n      - --no-tls\n      - --debuglevel=info\n",
            "description: the password -- never written here\n",
            "args: [\"--protocol.wumbo-channels\"]  # keeps -- comments\n",
            "name: bypass-test\n",
            "description: authors pass -- a re-authored text, host:port\n",
            "workload: { kind: keysend, payment_timeout: 60s }\n",
            "url: http://127.0.0.1:9090/x\n",
        ] {
            assert_eq!(redact_scenario_text(text), text);
        }
        assert_eq!(redact_scenario_text(""), "");
        assert_eq!(redact_scenario_text("--"), "--");
    }
}
