//! `latency.hlog`: the run's latencies as an HdrHistogram interval log (format V2,
//! one deflate-compressed histogram per one-second interval), readable by the
//! standard HdrHistogram tools (Java's `HistogramLogProcessor`, Python's `hdrh`).
//!
//! Values are **microseconds**. HdrHistogram's tools assume nanoseconds and divide by
//! 1,000,000 to print milliseconds, so read this log with
//! `HistogramLogProcessor -i latency.hlog -outputValueUnitRatio 1000` (milliseconds) or
//! `-outputValueUnitRatio 1` (microseconds). The `Interval_Max` column is in µs too.
//!
//! Memory stays flat however long the run: each interval is encoded and appended to
//! a file (in the run directory) as it closes, through a small buffer, and only the
//! file is copied into the report directory at the end.

use hdrhistogram::Histogram;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The report's file name for the log.
pub const FILE_NAME: &str = "latency.hlog";

/// The legend line the Java `HistogramLogWriter` writes before the first interval.
const LEGEND: &str =
    "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"";

/// An interval log being written. Intervals go to the file as they close; the
/// first write error stops the log and is kept for the report to tell.
pub struct IntervalLog {
    path: PathBuf,
    out: Option<BufWriter<File>>,
    serializer: V2DeflateSerializer,
    error: Option<String>,
}

/// Where a finished log is, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalLogFile {
    pub path: PathBuf,
    /// The first write error; the file is then incomplete and not to be used.
    pub error: Option<String>,
}

impl std::fmt::Debug for IntervalLog {
    // The serializer has no Debug; what matters is the file and its state.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntervalLog")
            .field("path", &self.path)
            .field("open", &self.out.is_some())
            .field("error", &self.error)
            .finish()
    }
}

fn seconds_since_epoch(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

impl IntervalLog {
    /// Creates `path` and writes the header. Interval timestamps are seconds since
    /// `base` (written as both `StartTime` and `BaseTime`).
    pub fn create(path: &Path, base: SystemTime) -> std::io::Result<IntervalLog> {
        let mut out = BufWriter::new(File::create(path)?);
        let epoch_s = seconds_since_epoch(base);
        writeln!(out, "#[Histogram log format version 1.3]")?;
        writeln!(
            out,
            "#[lnbench-tui latency of successful payments. Values are in microseconds: read with HistogramLogProcessor -outputValueUnitRatio 1000 for milliseconds]"
        )?;
        writeln!(
            out,
            "#[StartTime: {epoch_s:.3} (seconds since epoch), {}]",
            humantime::format_rfc3339_millis(base)
        )?;
        writeln!(out, "#[BaseTime: {epoch_s:.3} (seconds since epoch)]")?;
        writeln!(out, "{LEGEND}")?;
        Ok(IntervalLog {
            path: path.to_path_buf(),
            out: Some(out),
            serializer: V2DeflateSerializer::new(),
            error: None,
        })
    }

    /// Appends one interval: `h` holds the latencies (µs) recorded from `start`
    /// (since the base time) for `length`.
    pub fn append(&mut self, h: &Histogram<u64>, start: Duration, length: Duration) {
        let Some(out) = self.out.as_mut() else {
            return;
        };
        let written = IntervalLogWriterBuilder::new()
            .begin_log_with(out, &mut self.serializer)
            .map_err(|e| e.to_string())
            .and_then(|mut log| {
                log.write_histogram(h, start, length, None)
                    .map_err(|e| e.to_string())
            });
        if let Err(e) = written {
            self.fail(e);
        }
    }

    fn fail(&mut self, error: String) {
        self.error = Some(format!("writing {}: {error}", self.path.display()));
        self.out = None;
    }

    /// Flushes the file and says where it is.
    pub fn finish(&mut self) -> IntervalLogFile {
        if let Some(mut out) = self.out.take()
            && let Err(e) = out.flush()
        {
            self.fail(e.to_string());
        }
        IntervalLogFile {
            path: self.path.clone(),
            error: self.error.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::Deserializer;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

    #[test]
    fn the_log_reads_back_interval_by_interval() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let base = UNIX_EPOCH + Duration::from_millis(1_795_000_000_250);
        let mut log = IntervalLog::create(&path, base).unwrap();
        let mut h = Histogram::<u64>::new_with_bounds(1, 600_000_000, 3).unwrap();
        for s in 0..3u64 {
            h.reset();
            for i in 0..=s * 10 {
                h.record(1_000 + i * 100).unwrap();
            }
            log.append(&h, Duration::from_secs(s), Duration::from_secs(1));
        }
        let file = log.finish();
        assert_eq!(
            file,
            IntervalLogFile {
                path: path.clone(),
                error: None
            }
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("#[StartTime: 1795000000.250 (seconds since epoch), "));
        assert!(text.contains("#[BaseTime: 1795000000.250 (seconds since epoch)]\n"));
        assert!(text.contains(&format!("\n{LEGEND}\n")));
        assert!(text.contains("microseconds"));
        let mut counts = Vec::new();
        let mut starts = Vec::new();
        for entry in IntervalLogIterator::new(text.as_bytes()) {
            match entry.unwrap() {
                LogEntry::Interval(i) => {
                    starts.push(i.start_timestamp().as_secs());
                    let bytes = base64_decode(i.encoded_histogram());
                    let h: Histogram<u64> = Deserializer::new()
                        .deserialize(&mut bytes.as_slice())
                        .unwrap();
                    assert_eq!(i.max(), h.max() as f64);
                    counts.push(h.len());
                }
                LogEntry::StartTime(_) | LogEntry::BaseTime(_) => {}
            }
        }
        assert_eq!(counts, [1, 11, 21]);
        assert_eq!(starts, [0, 1, 2]);
    }

    #[test]
    fn a_log_that_cannot_be_created_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no-such-dir").join(FILE_NAME);
        assert!(IntervalLog::create(&missing, SystemTime::now()).is_err());
    }

    /// Standard base64 (the log's encoding), decoded by hand for the test.
    fn base64_decode(text: &str) -> Vec<u8> {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = Vec::new();
        let (mut acc, mut bits) = (0u32, 0);
        for c in text.bytes().filter(|c| *c != b'=') {
            let v = ALPHABET.iter().position(|a| *a == c).expect("base64") as u32;
            acc = (acc << 6) | v;
            bits += 6;
            if bits >= 8 {
                bits -= 8;
                out.push((acc >> bits) as u8);
                acc &= (1 << bits) - 1;
            }
        }
        out
    }
}
