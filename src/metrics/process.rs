//! The tool's own CPU time and memory, read from `/proc/self` (Linux). On other
//! systems, or if `/proc` cannot be read, the values are `None`.

use serde::Serialize;

/// Linux reports utime/stime in USER_HZ ticks, which is 100 on every architecture
/// the kernel exposes to user space.
const TICKS_PER_SECOND: f64 = 100.0;

/// CPU and memory of this process at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct ProcessStats {
    /// User + system CPU seconds since the process started.
    pub cpu_s: Option<f64>,
    /// Resident set size now (VmRSS), bytes.
    pub rss_bytes: Option<u64>,
    /// Peak resident set size (VmHWM), bytes.
    pub peak_rss_bytes: Option<u64>,
}

impl ProcessStats {
    pub fn now() -> Self {
        let status = std::fs::read_to_string("/proc/self/status").ok();
        let field = |name| status.as_deref().and_then(|s| status_kib(s, name));
        ProcessStats {
            cpu_s: std::fs::read_to_string("/proc/self/stat")
                .ok()
                .and_then(|s| cpu_seconds(&s)),
            rss_bytes: field("VmRSS:").map(|kib| kib * 1024),
            peak_rss_bytes: field("VmHWM:").map(|kib| kib * 1024),
        }
    }
}

/// utime + stime from the text of `/proc/<pid>/stat`, in seconds.
fn cpu_seconds(stat: &str) -> Option<f64> {
    // The command name (field 2) may hold spaces and parentheses: split after the
    // last ')'. utime and stime are fields 14 and 15, i.e. 12th and 13th after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) as f64 / TICKS_PER_SECOND)
}

/// A `kB` value from the text of `/proc/<pid>/status`.
fn status_kib(status: &str, name: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cpu_from_stat_with_odd_command_name() {
        let stat = "1234 (my (odd) cmd) S 1 1234 1234 0 -1 4194560 500 0 0 0 250 50 0 0 20 0 3 0";
        assert_eq!(cpu_seconds(stat), Some(3.0));
        assert_eq!(cpu_seconds("garbage"), None);
    }

    #[test]
    fn parses_memory_fields_from_status() {
        let status = "Name:\tx\nVmHWM:\t   20480 kB\nVmRSS:\t   10240 kB\n";
        assert_eq!(status_kib(status, "VmRSS:"), Some(10240));
        assert_eq!(status_kib(status, "VmHWM:"), Some(20480));
        assert_eq!(status_kib(status, "VmSwap:"), None);
    }

    #[test]
    fn reads_own_process_on_linux() {
        let stats = ProcessStats::now();
        if cfg!(target_os = "linux") {
            assert!(stats.rss_bytes.unwrap() > 0);
            assert!(stats.peak_rss_bytes.unwrap() >= stats.rss_bytes.unwrap());
            assert!(stats.cpu_s.is_some());
        }
    }
}
