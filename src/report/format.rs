//! Human-readable figures shared by the HTML and markdown reports, and markdown
//! table cells escaped.

/// A latency in microseconds as `850 µs`, `12.3 ms` or `1.52 s`.
pub fn latency_us(us: u64) -> String {
    match us {
        0..=999 => format!("{us} µs"),
        1_000..=999_999 => format!("{:.1} ms", us as f64 / 1e3),
        _ => format!("{:.2} s", us as f64 / 1e6),
    }
}

/// Seconds as `42.0 s`, or `3 min 05 s` from a minute on.
pub fn seconds(s: f64) -> String {
    if s < 60.0 {
        format!("{s:.1} s")
    } else {
        let whole = s.round() as u64;
        format!("{} min {:02} s", whole / 60, whole % 60)
    }
}

/// Bytes in binary units: `512 B`, `3.5 MiB`, `15.6 GiB`.
pub fn bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = b as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{b} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

pub fn tps(tps: f64) -> String {
    format!("{tps:.1}")
}

/// A fraction as a percentage with two decimals: `0.0125` -> `1.25%`.
pub fn percent(fraction: f64) -> String {
    format!("{:.2}%", fraction * 100.0)
}

/// A pubkey shortened for tables: first 10 and last 6 hex digits.
pub fn short_pubkey(pubkey: &str) -> String {
    if pubkey.len() <= 18 || !pubkey.is_ascii() {
        pubkey.to_string()
    } else {
        format!("{}…{}", &pubkey[..10], &pubkey[pubkey.len() - 6..])
    }
}

/// What a payment kind times, for readers who do not know the tool.
pub fn what_is_timed(kind: &str) -> &'static str {
    match kind {
        "keysend" => "keysend: a spontaneous payment, no invoice; the payment is timed",
        "invoice" => {
            "invoice: the receiver creates an invoice and the sender pays it; both are timed"
        }
        "invoice-pregenerated" => {
            "pre-generated invoices: created before the load; only paying them is timed"
        }
        _ => "unknown payment kind",
    }
}

/// The load model and stop condition in words: `closed loop, 4 concurrent payers;
/// stops after 200 payments`.
pub fn load(w: &super::WorkloadReport) -> String {
    let model = match (w.load_model.as_str(), w.concurrency) {
        ("closed", Some(n)) => format!("closed loop, {n} concurrent payers"),
        ("open", _) => "open loop, scheduled rate".to_string(),
        (other, _) => other.to_string(),
    };
    let stops: Vec<String> = w
        .stop_after_payments
        .map(|n| format!("{n} payments"))
        .into_iter()
        .chain(w.stop_after_seconds.map(seconds))
        .collect();
    if stops.is_empty() {
        model
    } else {
        format!("{model}; stops after {}", stops.join(" or "))
    }
}

/// A cell's text, escaped: it is printed as text, never read as markdown. Versions,
/// host names and interruption reasons come from the nodes and the host; a `|` would
/// break the row, and `[text](url)`, `![](url)`, `<tag>`, emphasis or code spans
/// would put links, images or markup of theirs into a summary pasted into an issue.
pub fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\r' => out.push(' '),
            // Brackets escaped, `(url)` and `!` are plain text; a cell never starts a
            // line, so `#` and list markers are too.
            '\\' | '|' | '[' | ']' | '<' | '>' | '`' | '*' | '_' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_figures() {
        assert_eq!(latency_us(850), "850 µs");
        assert_eq!(latency_us(12_345), "12.3 ms");
        assert_eq!(latency_us(1_520_000), "1.52 s");
        assert_eq!(seconds(42.04), "42.0 s");
        assert_eq!(seconds(185.0), "3 min 05 s");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(3 * 1024 * 1024 + 512 * 1024), "3.5 MiB");
        assert_eq!(percent(0.0125), "1.25%");
        assert_eq!(
            short_pubkey(&format!("02{}", "ab".repeat(32))),
            "02abababab…ababab"
        );
        assert_eq!(short_pubkey("02ab"), "02ab");
        assert!(what_is_timed("invoice-pregenerated").contains("only paying"));
    }
}
