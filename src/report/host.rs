//! Facts about the machine a run happened on, so a report can be reproduced and
//! compared fairly. Read from /proc and /etc/os-release (Linux); anything unreadable
//! is reported as unknown rather than failing the run.

use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Host {
    pub cpu_model: String,
    pub cores: usize,
    pub memory_bytes: u64,
    pub os: String,
    pub kernel: String,
}

impl Host {
    pub fn detect() -> Host {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        Host {
            cpu_model: cpu_model(&read("/proc/cpuinfo")).unwrap_or_else(|| "unknown".into()),
            cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
            memory_bytes: mem_total_bytes(&read("/proc/meminfo")).unwrap_or(0),
            os: os_name(&read("/etc/os-release")).unwrap_or_else(|| std::env::consts::OS.into()),
            kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
        }
    }
}

fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

fn mem_total_bytes(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn os_name(os_release: &str) -> Option<String> {
    let line = os_release.lines().find(|l| l.starts_with("PRETTY_NAME="))?;
    Some(line["PRETTY_NAME=".len()..].trim_matches('"').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_files() {
        let cpuinfo = "processor\t: 0\nvendor_id\t: X\nmodel name\t: Fancy CPU @ 3.0GHz\n";
        assert_eq!(cpu_model(cpuinfo).as_deref(), Some("Fancy CPU @ 3.0GHz"));
        let meminfo = "MemTotal:       24576000 kB\nMemFree: 1 kB\n";
        assert_eq!(mem_total_bytes(meminfo), Some(24_576_000 * 1024));
        let osr = "NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n";
        assert_eq!(
            os_name(osr).as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(cpu_model(""), None);
        assert_eq!(mem_total_bytes("MemTotal: lots"), None);
    }
}
