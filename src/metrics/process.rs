//! CPU time and memory of a process, read from `/proc/self` (the tool's own) or
//! `/proc/<pid>` (Linux). On other systems, or if `/proc` cannot be read, the values
//! are `None`. This is the one parser of `/proc/<pid>/stat`: the local runtime's
//! resource readings, the profiler's process walk and the leftover check use it.

use serde::Serialize;

/// Linux reports CPU times in `/proc` in clock ticks (USER_HZ) a second, as the
/// system says (`sysconf(_SC_CLK_TCK)`; 100 where it cannot say).
pub fn ticks_per_second() -> f64 {
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(
        || match nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK) {
            Ok(Some(t)) if t > 0 => t as f64,
            _ => 100.0,
        },
    )
}

/// CPU and memory of a process at one moment.
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
    /// This process now.
    pub fn now() -> Self {
        ProcessStats::read("self")
    }

    /// Process `pid` now (every field `None` once it is gone).
    pub fn of(pid: u32) -> Self {
        ProcessStats::read(&pid.to_string())
    }

    /// `entry` is the directory name under `/proc`: `self` or a pid.
    fn read(entry: &str) -> Self {
        let status = std::fs::read_to_string(format!("/proc/{entry}/status")).ok();
        let field = |name| status.as_deref().and_then(|s| status_kib(s, name));
        ProcessStats {
            cpu_s: read_stat(entry).and_then(|s| cpu_seconds(&s)),
            rss_bytes: field("VmRSS:").map(|kib| kib * 1024),
            peak_rss_bytes: field("VmHWM:").map(|kib| kib * 1024),
        }
    }
}

/// The text of `/proc/<entry>/stat` (`entry` is `self` or a pid); `None` once the
/// process is gone.
pub(crate) fn read_stat(entry: impl std::fmt::Display) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{entry}/stat")).ok()
}

/// The fields of the text of `/proc/<pid>/stat` after the command name, starting
/// with field 3 (state). The command name (field 2) may hold spaces and parentheses:
/// split after the last ')'.
fn stat_fields(stat: &str) -> Option<std::str::SplitWhitespace<'_>> {
    Some(stat[stat.rfind(')')? + 1..].split_whitespace())
}

/// utime + stime from the text of `/proc/<pid>/stat`, in seconds.
pub(crate) fn cpu_seconds(stat: &str) -> Option<f64> {
    // utime and stime are fields 14 and 15, i.e. 12th and 13th after the name.
    let mut fields = stat_fields(stat)?.skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) as f64 / ticks_per_second())
}

/// utime + stime + cutime + cstime from the text of `/proc/<pid>/stat`, in seconds:
/// the process's CPU and that of its children it has waited for. Summed over a process
/// tree it keeps what a member that exited used (a PostgreSQL backend that served one
/// connection): its parent, reaping it, adds it to its own cutime and cstime.
pub(crate) fn cpu_seconds_with_reaped(stat: &str) -> Option<f64> {
    // cutime and cstime are fields 16 and 17, right after utime and stime.
    let mut fields = stat_fields(stat)?.skip(13);
    let cutime: u64 = fields.next()?.parse().ok()?;
    let cstime: u64 = fields.next()?.parse().ok()?;
    Some(cpu_seconds(stat)? + (cutime + cstime) as f64 / ticks_per_second())
}

/// The state (field 3) from the text of `/proc/<pid>/stat`: `R`, `S`, `Z` (a zombie)...
pub(crate) fn state(stat: &str) -> Option<char> {
    stat_fields(stat)?.next()?.chars().next()
}

/// The parent pid (field 4) from the text of `/proc/<pid>/stat`.
pub(crate) fn parent_pid(stat: &str) -> Option<u32> {
    stat_fields(stat)?.nth(1)?.parse().ok()
}

/// The process group (field 5) from the text of `/proc/<pid>/stat`.
pub(crate) fn process_group(stat: &str) -> Option<u32> {
    stat_fields(stat)?.nth(2)?.parse().ok()
}

/// A `kB` value from the text of `/proc/<pid>/status`.
pub(crate) fn status_kib(status: &str, name: &str) -> Option<u64> {
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
    fn parses_cpu_with_reaped_children_from_stat() {
        // utime 250, stime 50, cutime 100, cstime 20 ticks.
        let stat = "1234 (my (odd) cmd) S 1 1234 1234 0 -1 4194560 500 0 0 0 250 50 100 20 20 0";
        assert_eq!(cpu_seconds_with_reaped(stat), Some(4.2));
        let no_children_fields = "1234 (x) S 1 1234 1234 0 -1 4194560 500 0 0 0 250 50";
        assert_eq!(cpu_seconds_with_reaped(no_children_fields), None);
    }

    #[test]
    fn parses_the_process_group_from_stat() {
        let stat = "1234 (my (odd) cmd) S 1 4321 1234 0 -1 4194560 500 0 0 0 250 50 0 0 20 0 3 0";
        assert_eq!(process_group(stat), Some(4321));
        assert_eq!(process_group("1 (x)"), None);
    }

    #[test]
    fn parses_the_state_and_parent_from_stat() {
        let stat = "1234 (a) b) Z 77 4321 1234 0 -1 4194560 500 0 0 0 250 50 0 0 20 0 3 0";
        assert_eq!(state(stat), Some('Z'));
        assert_eq!(parent_pid(stat), Some(77));
        assert_eq!(state("1 (x)"), None);
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
            let by_pid = ProcessStats::of(std::process::id());
            assert!(by_pid.rss_bytes.unwrap() > 0);
            assert!(by_pid.cpu_s.unwrap() >= stats.cpu_s.unwrap());
        }
        assert_eq!(ProcessStats::of(u32::MAX), ProcessStats::default());
    }

    /// The clock ticks a second are the system's, as `getconf CLK_TCK` says.
    #[test]
    fn ticks_per_second_are_the_systems() {
        let Ok(out) = std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
        else {
            return;
        };
        let said: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        assert_eq!(ticks_per_second(), said);
    }
}
