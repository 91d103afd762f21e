//! LND's database migrations as its log tells them: each custom (data-moving)
//! migration between `Applying custom migration 'NAME'` and `Migration 'NAME' (version
//! N) applied`, with what it says it moved (`Migration of N invoices ...`, `Total
//! Payments: N`). The times are LND's own timestamps (millisecond precision).

use crate::node::LoggedMigration;

/// The custom migrations logged in `log` (LND's output), in order; those that began
/// but never finished are left out.
pub fn in_log(log: &str) -> Vec<LoggedMigration> {
    let mut done = Vec::new();
    let mut open: Vec<(String, f64, Option<u64>)> = Vec::new();
    for line in log.lines() {
        let Some((at, text)) = stamped(line) else {
            continue;
        };
        if let Some(name) = quoted_after(text, "Applying custom migration '") {
            open.push((name, at, None));
        } else if let Some(n) = moved(text) {
            if let Some(last) = open.last_mut() {
                last.2 = Some(n);
            }
        } else if let Some(name) = quoted_after(text, "Migration '")
            && text.contains(") applied")
            && let Some(i) = open.iter().position(|(n, _, _)| *n == name)
        {
            let (name, began, items) = open.remove(i);
            done.push(LoggedMigration {
                name,
                seconds: (at - began).max(0.0),
                items,
            });
        }
    }
    done
}

/// `2026-11-27 17:03:22.927 [INF] SQLD: text`: seconds since midnight and the text
/// after the level. (A migration spanning midnight would read negative: clamped.)
fn stamped(line: &str) -> Option<(f64, &str)> {
    let (date, rest) = line.split_once(' ')?;
    if date.len() != 10 || date.as_bytes()[4] != b'-' {
        return None;
    }
    let (time, rest) = rest.split_once(' ')?;
    let mut hms = time.split(':');
    let h: f64 = hms.next()?.parse().ok()?;
    let m: f64 = hms.next()?.parse().ok()?;
    let s: f64 = hms.next()?.parse().ok()?;
    let text = rest.split_once("] ")?.1;
    Some((h * 3600.0 + m * 60.0 + s, text))
}

fn quoted_after(text: &str, prefix: &str) -> Option<String> {
    let rest = &text[text.find(prefix)? + prefix.len()..];
    Some(rest[..rest.find('\'')?].to_string())
}

/// What a migration says it moved: `Migration of 101 invoices from KV to SQL
/// completed`, `Total Payments:        106`.
fn moved(text: &str) -> Option<u64> {
    if let Some(rest) = text.split_once("Migration of ").map(|(_, r)| r)
        && rest.contains(" from KV to SQL completed")
    {
        return rest.split_whitespace().next()?.parse().ok();
    }
    let rest = text.split_once("Total Payments:")?.1;
    rest.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as LND v0.21.1-beta wrote them when a key-value SQLite database of 101
    /// invoices and 106 payments started with `--db.use-native-sql` (shortened).
    const LOG: &str = "\
2026-11-27 17:03:22.889 [INF] CHDB: Applying 2 optional migrations
2026-11-27 17:03:22.927 [INF] SQLD: Applying custom migration 'kv_invoice_migration' (version 7) to schema version 6
2026-11-27 17:03:22.927 [INF] INVC: Starting migration of invoices from KV to SQL
2026-11-27 17:03:23.065 [INF] INVC: Migration of 101 invoices from KV to SQL completed
2026-11-27 17:03:23.066 [INF] SQLD: Migration 'kv_invoice_migration' (version 7) applied 
2026-11-27 17:03:23.078 [INF] SQLD: Applying custom migration 'kv_graph_migration' (version 10) to schema version 8
2026-11-27 17:03:23.087 [INF] SQLD: Migration 'kv_graph_migration' (version 10) applied 
2026-11-27 17:03:22.982 [INF] SQLD: Applying custom migration 'kv_payments_migration' (version 14) to schema version 11
2026-11-27 17:03:22.982 [INF] PYDB: Starting payment migration from KV to SQL...
2026-11-27 17:03:23.170 [INF] PYDB: Total Payments:        106
2026-11-27 17:03:23.170 [INF] PYDB: Migration Duration:    187.33813ms
2026-11-27 17:03:23.170 [INF] SQLD: Migration 'kv_payments_migration' (version 14) applied 
2026-11-27 17:03:24.000 [INF] SQLD: Applying custom migration 'kv_never_done' (version 15) to schema version 14
";

    #[test]
    fn each_finished_custom_migration_is_timed_with_what_it_moved() {
        let got = in_log(LOG);
        let rounded: Vec<(&str, u64, Option<u64>)> = (got.iter())
            .map(|m| {
                (
                    m.name.as_str(),
                    (m.seconds * 1000.0).round() as u64,
                    m.items,
                )
            })
            .collect();
        assert_eq!(
            rounded,
            [
                ("kv_invoice_migration", 139, Some(101)),
                ("kv_graph_migration", 9, None),
                ("kv_payments_migration", 188, Some(106)),
            ]
        );
        assert!(in_log("lnd starting\nno timestamps here").is_empty());
    }
}
