//! `payments.csv`: one row per counted payment (warm-up payments are not counted,
//! and not written), for spreadsheets, pandas or a join with a node's own logs, as
//! oha, k6 and sim-ln write theirs.
//!
//! Memory stays flat however long the run: workers hand their rows over with their
//! batches, each batch is appended to a file in the run directory through a small
//! buffer, and only the file is copied into the report directory at the end (as
//! `latency.hlog` is).

use super::FailureKind;
use crate::node::PaymentHash;
use bitcoin::hex::DisplayHex;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The report's file name for the log.
pub const FILE_NAME: &str = "payments.csv";

/// The header. Times are seconds since the run's clock started (the clock of
/// `series.csv` and the report's events); `latency_us` is the latency the report
/// counts (successful payments only: from the intended start, pauses taken off).
/// `payment_hash` is hex, empty when the tool does not know it (a keysend whose
/// preimage the sender's node chose); `resolution` is filled after the load for
/// indeterminate rows only (see [`Resolution`]).
pub const HEADER: &str = "intended_start_s,start_s,end_s,latency_us,outcome,sender,receiver,kind,amount_msat,hops,fee_msat,reason,payment_hash,resolution";

/// One payment as it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct PaymentRow {
    /// When the schedule meant it to start (closed loop: when it started).
    pub intended_start_s: f64,
    pub start_s: f64,
    pub end_s: f64,
    pub sender: String,
    pub receiver: String,
    /// `keysend`, `invoice` or `invoice-pregenerated`, as in the scenario.
    pub kind: &'static str,
    pub amount_msat: u64,
    /// The payment's hash, when the tool knows it (invoices; keysends whose preimage
    /// the tool chose).
    pub payment_hash: Option<crate::node::PaymentHash>,
    pub result: PaymentResult,
}

/// How a payment ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PaymentResult {
    Ok {
        /// Microseconds, as in series.csv and latency.hlog.
        latency_us: u64,
        hops: u32,
        fee_msat: u64,
    },
    Failed(FailureKind),
    /// Not known when the tool stopped waiting (`timeout`) or stopped the load with
    /// the payment in flight (`abandoned`): the reconciliation after the load may
    /// resolve it; this row keeps what the tool saw.
    Indeterminate(&'static str),
}

impl PaymentRow {
    /// The row's CSV line, newline included.
    fn write_to(&self, line: &mut String) {
        let (latency, outcome, hops, fee, reason) = match self.result {
            PaymentResult::Ok {
                latency_us,
                hops,
                fee_msat,
            } => (
                latency_us.to_string(),
                "ok",
                hops.to_string(),
                fee_msat.to_string(),
                "",
            ),
            PaymentResult::Failed(kind) => (
                String::new(),
                "failed",
                String::new(),
                String::new(),
                kind.as_str(),
            ),
            PaymentResult::Indeterminate(why) => (
                String::new(),
                "indeterminate",
                String::new(),
                String::new(),
                why,
            ),
        };
        let hash =
            (self.payment_hash.as_ref()).map_or_else(String::new, |h| h.to_lower_hex_string());
        let _ = writeln!(
            line,
            "{:.6},{:.6},{:.6},{latency},{outcome},{},{},{},{},{hops},{fee},{reason},{hash},",
            self.intended_start_s,
            self.start_s,
            self.end_s,
            field(&self.sender),
            field(&self.receiver),
            self.kind,
            self.amount_msat,
        );
    }
}

/// A text field as CSV (RFC 4180): quoted when it holds a comma, a quote or a line
/// break, its quotes doubled.
fn field(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\"")).into()
    } else {
        text.into()
    }
}

/// A payment log being written. The first write error stops it and is kept for the
/// report to tell.
#[derive(Debug)]
pub struct PaymentLog {
    path: PathBuf,
    out: Option<BufWriter<File>>,
    rows: u64,
    error: Option<String>,
    line: String,
    indeterminate: Vec<IndeterminatePayment>,
    indeterminate_rows: u64,
}

/// A payment the tool left indeterminate whose hash it knows: the reconciliation
/// asks its sender what became of it.
#[derive(Debug, Clone, PartialEq)]
pub struct IndeterminatePayment {
    pub sender: String,
    pub payment_hash: PaymentHash,
}

/// What became of an indeterminate payment, as its row's `resolution` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// Its sender's ledger, asked by its hash, says it succeeded or failed.
    Ok,
    Failed,
    /// Its sender still has it in flight.
    InFlight,
    /// Not known by hash (no hash, or the sender has no record of it): it is
    /// resolved only in the sender's counts, with its other indeterminate payments.
    ByCount,
}

impl Resolution {
    pub fn as_str(self) -> &'static str {
        match self {
            Resolution::Ok => "ok",
            Resolution::Failed => "failed",
            Resolution::InFlight => "in_flight",
            Resolution::ByCount => "by_count",
        }
    }
}

/// Where a finished log is, how many rows it holds, or why it is not to be used.
#[derive(Debug, Clone, PartialEq)]
pub struct PaymentLogFile {
    pub path: PathBuf,
    pub rows: u64,
    /// The first write error; the file is then incomplete and not to be used.
    pub error: Option<String>,
    /// The rows left indeterminate that carry a hash, in order.
    pub indeterminate: Vec<IndeterminatePayment>,
    /// All rows left indeterminate, with a hash or without.
    pub indeterminate_rows: u64,
}

impl PaymentLog {
    /// Creates `path` and writes the header.
    pub fn create(path: &Path) -> std::io::Result<PaymentLog> {
        let mut out = BufWriter::new(File::create(path)?);
        writeln!(out, "{HEADER}")?;
        Ok(PaymentLog {
            path: path.to_path_buf(),
            out: Some(out),
            rows: 0,
            error: None,
            line: String::new(),
            indeterminate: Vec::new(),
            indeterminate_rows: 0,
        })
    }

    /// Appends `rows`, in the order given.
    pub fn append(&mut self, rows: &[PaymentRow]) {
        let Some(out) = self.out.as_mut() else {
            return;
        };
        self.line.clear();
        for row in rows {
            row.write_to(&mut self.line);
            if let PaymentResult::Indeterminate(_) = row.result {
                self.indeterminate_rows += 1;
            }
            if let (PaymentResult::Indeterminate(_), Some(hash)) = (row.result, row.payment_hash) {
                self.indeterminate.push(IndeterminatePayment {
                    sender: row.sender.clone(),
                    payment_hash: hash,
                });
            }
        }
        match out.write_all(self.line.as_bytes()) {
            Ok(()) => self.rows += rows.len() as u64,
            Err(e) => self.fail(e),
        }
    }

    fn fail(&mut self, error: std::io::Error) {
        self.error = Some(format!("writing {}: {error}", self.path.display()));
        self.out = None;
    }

    /// Flushes the file and says where it is.
    pub fn finish(&mut self) -> PaymentLogFile {
        if let Some(mut out) = self.out.take()
            && let Err(e) = out.flush()
        {
            self.fail(e);
        }
        PaymentLogFile {
            path: self.path.clone(),
            rows: self.rows,
            error: self.error.clone(),
            indeterminate: self.indeterminate.clone(),
            indeterminate_rows: self.indeterminate_rows,
        }
    }
}

impl PaymentLogFile {
    /// Fills the `resolution` of the indeterminate rows: by `resolved` for the hashes
    /// in it, `by_count` for the others. Rewrites the file a line at a time.
    pub fn write_resolutions(
        &self,
        resolved: &HashMap<PaymentHash, Resolution>,
    ) -> std::io::Result<()> {
        use std::io::BufRead;
        // Nothing to fill in: the file is left as it is, however long.
        if self.error.is_some() || self.indeterminate_rows == 0 {
            return Ok(());
        }
        let input = std::io::BufReader::new(File::open(&self.path)?);
        let temp = self.path.with_extension("csv.resolving");
        let mut out = BufWriter::new(File::create(&temp)?);
        for line in input.lines() {
            let line = line?;
            writeln!(out, "{}", resolve_line(&line, resolved))?;
        }
        out.flush()?;
        drop(out);
        std::fs::rename(&temp, &self.path)
    }
}

/// One line of the log with its resolution filled in, when it is an indeterminate
/// row. The outcome is the fifth field (the ones before it are numbers) and the hash
/// and resolution the last two (a hash holds no comma), so quoted names in between
/// do not matter.
fn resolve_line<'a>(
    line: &'a str,
    resolved: &HashMap<PaymentHash, Resolution>,
) -> std::borrow::Cow<'a, str> {
    use bitcoin::hex::FromHex;
    let indeterminate = line.split(',').nth(4) == Some("indeterminate");
    let Some((head, "")) = line.rsplit_once(',').filter(|_| indeterminate) else {
        return line.into();
    };
    let hash = head.rsplit_once(',').map_or("", |(_, hash)| hash);
    let resolution = (<[u8; 32]>::from_hex(hash).ok())
        .and_then(|h| resolved.get(&h).copied())
        .unwrap_or(Resolution::ByCount);
    format!("{head},{}", resolution.as_str()).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::FailureReason;

    fn row(sender: &str, result: PaymentResult) -> PaymentRow {
        PaymentRow {
            intended_start_s: 1.5,
            start_s: 1.625,
            end_s: 1.75,
            sender: sender.to_string(),
            receiver: "bob".to_string(),
            kind: "keysend",
            amount_msat: 1000,
            payment_hash: None,
            result,
        }
    }

    #[test]
    fn a_row_per_payment_under_the_header() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let mut log = PaymentLog::create(&path).unwrap();
        let ok = PaymentResult::Ok {
            latency_us: 250_000,
            hops: 2,
            fee_msat: 3,
        };
        let failed = PaymentResult::Failed(FailureKind::Node(FailureReason::NoRoute));
        log.append(&[row("alice", ok), row("al,\"ice\"", failed)]);
        log.append(&[row("carol", PaymentResult::Indeterminate("abandoned"))]);
        let file = log.finish();
        assert_eq!(file.rows, 3);
        assert_eq!(file.error, None);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<_> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0], HEADER);
        assert_eq!(
            lines[1],
            "1.500000,1.625000,1.750000,250000,ok,alice,bob,keysend,1000,2,3,,,"
        );
        assert_eq!(
            lines[2],
            "1.500000,1.625000,1.750000,,failed,\"al,\"\"ice\"\"\",bob,keysend,1000,,,no_route,,"
        );
        assert!(lines[3].ends_with(",indeterminate,carol,bob,keysend,1000,,,abandoned,,"));
        let columns = HEADER.split(',').count();
        assert!(lines.iter().all(|l| l.split(',').count() >= columns));
    }

    #[test]
    fn indeterminate_rows_get_their_resolution_by_hash_and_the_rest_by_count() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let mut log = PaymentLog::create(&path).unwrap();
        let with_hash = |sender: &str, byte: u8| PaymentRow {
            payment_hash: Some([byte; 32]),
            ..row(sender, PaymentResult::Indeterminate("timeout"))
        };
        let ok = PaymentResult::Ok {
            latency_us: 1_000,
            hops: 1,
            fee_msat: 0,
        };
        let settled = PaymentRow {
            payment_hash: Some([9; 32]),
            ..row("alice", ok)
        };
        let no_hash = row("x,y", PaymentResult::Indeterminate("abandoned"));
        log.append(&[
            with_hash("a,\"b\"", 1),
            with_hash("alice", 2),
            settled,
            no_hash,
        ]);
        let file = log.finish();
        assert_eq!(file.indeterminate.len(), 2, "the rows with a hash");
        assert_eq!(file.indeterminate_rows, 3);
        assert_eq!(file.indeterminate[0].sender, "a,\"b\"");
        let resolved = HashMap::from([([1; 32], Resolution::Ok), ([9; 32], Resolution::Failed)]);
        file.write_resolutions(&resolved).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let ends: Vec<&str> = (text.lines().skip(1))
            .map(|l| l.rsplit_once(',').unwrap().1)
            .collect();
        // The settled row is not indeterminate: its resolution stays empty.
        assert_eq!(ends, ["ok", "by_count", "", "by_count"]);
        assert!(text.lines().nth(1).unwrap().contains(&"01".repeat(32)));
    }

    #[test]
    fn appends_after_finish_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = PaymentLog::create(&dir.path().join(FILE_NAME)).unwrap();
        log.finish();
        let ok = PaymentResult::Ok {
            latency_us: 1_000,
            hops: 1,
            fee_msat: 0,
        };
        log.append(&[row("alice", ok)]);
        assert_eq!(log.finish().rows, 0);
    }
}
