//! Keeps credentials out of reports. The tool never puts the chain's RPC password or
//! a node's credentials into the report model, but the scenario text is copied as
//! written, and a user may pass a secret in `args:` (`--btcd.rpcpass=...`). Reports
//! are meant to be shared, so such values are replaced before the text is copied.

/// What replaces a redacted value.
pub const REDACTED: &str = "[REDACTED]";

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

/// `text` with the value of every secret-looking command-line flag replaced by
/// [`REDACTED`]: `--btcd.rpcpass=hunter2` becomes `--btcd.rpcpass=[REDACTED]`, and in
/// `["--rpcpass", "hunter2"]` (value as the next argument) the value is replaced too.
/// Everything else, comments and layout included, is kept as written.
pub fn redact_scenario_text(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i + 2 < bytes.len() {
        let starts_flag =
            bytes[i] == b'-' && bytes[i + 1] == b'-' && (i == 0 || !is_name_byte(bytes[i - 1]));
        if !starts_flag {
            i += 1;
            continue;
        }
        let name_start = i + 2;
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
                let end = start
                    + bytes[start..]
                        .iter()
                        .take_while(|b| !ends_value(**b))
                        .count();
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
    while i < bytes.len() && matches!(bytes[i], b'"' | b'\'') {
        i += 1;
    }
    let flow = {
        let mut j = i;
        while j < bytes.len() && matches!(bytes[j], b' ' | b'\t') {
            j += 1;
        }
        bytes.get(j) == Some(&b',')
    };
    if flow {
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
    fn leaves_flags_without_values_and_other_text_alone() {
        for text in [
            "args: [\"--no-tls\", \"--debuglevel=info\"]\n",
            "    args:\n      - --no-tls\n      - --debuglevel=info\n",
            "description: the password -- never written here\n",
            "args: [\"--protocol.wumbo-channels\"]  # keeps -- comments\n",
            "name: bypass-test\n",
        ] {
            assert_eq!(redact_scenario_text(text), text);
        }
        assert_eq!(redact_scenario_text(""), "");
        assert_eq!(redact_scenario_text("--"), "--");
    }
}
