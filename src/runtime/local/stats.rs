//! Resource readings of the local runtime's processes, from `/proc` (Linux).
//!
//! Each started process leads its own process group; a reading sums the group's
//! members and their descendants (the process and anything it started, also what
//! left the group: PostgreSQL's backends each start a session of their own). CPU % comes from the change of
//! utime + stime between two readings, with the cutime + cstime of the members (what
//! their children used before they exited and were reaped: a backend that served one
//! connection and ended), memory is the resident set size (VmRSS), disk
//! I/O the `read_bytes` / `write_bytes` of `/proc/<pid>/io`, and the data-dir size
//! the disk usage (allocated blocks, as `du` counts) of the process's directory,
//! walked at most every [`DATA_DIR_EVERY`]. Network bytes are not per process, so
//! they stay `None`.

use crate::metrics::ResourceReading;
use crate::metrics::process::{
    ProcessStats, cpu_seconds_with_reaped, parent_pid, process_group, read_stat,
};
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Walking a data dir touches every file in it: do it about this often and report
/// the last size in between. A reading due less than [`DATA_DIR_SLACK`] early walks
/// too, so readings a second apart walk every fifth, not every sixth.
pub const DATA_DIR_EVERY: Duration = Duration::from_secs(5);
pub const DATA_DIR_SLACK: Duration = Duration::from_millis(250);

/// A started process to read.
#[derive(Debug, Clone)]
pub struct Watched {
    pub name: String,
    /// The group leader (its pid is the group id).
    pub pid: u32,
    pub data_dir: PathBuf,
}

/// What the kernel says of one process group now.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GroupUsage {
    pub cpu_s: Option<f64>,
    pub rss_bytes: Option<u64>,
    pub read_bytes: Option<u64>,
    pub write_bytes: Option<u64>,
}

/// Turns successive `/proc` readings into [`ResourceReading`]s.
#[derive(Debug, Default)]
pub struct Sampler {
    /// CPU seconds of each group and when they were read, for the next CPU %.
    previous_cpu: HashMap<String, (f64, Instant)>,
    data_dir_bytes: HashMap<String, Option<u64>>,
    last_walk: Option<Instant>,
}

impl Sampler {
    /// Reads every process in `watched` now; the data dirs too when `fresh` or when
    /// their last walk is [`DATA_DIR_EVERY`] old. The first reading of a process has
    /// no CPU % (nothing to compare with).
    pub async fn read(&mut self, watched: Vec<Watched>, fresh: bool) -> Vec<ResourceReading> {
        let started = Instant::now();
        let walk = fresh
            || self
                .last_walk
                .is_none_or(|t| started - t + DATA_DIR_SLACK >= DATA_DIR_EVERY);
        let leaders: Vec<u32> = watched.iter().map(|w| w.pid).collect();
        let dirs: Vec<PathBuf> = watched.iter().map(|w| w.data_dir.clone()).collect();
        // /proc reads never wait for a disk, but walking a data dir can: off the
        // runtime's worker threads.
        let read = tokio::task::spawn_blocking(move || {
            let usage = group_usage(&leaders);
            let sizes = walk.then(|| dirs.iter().map(|d| dir_disk_usage(d)).collect());
            (usage, sizes, Instant::now())
        })
        .await;
        let Ok((usage, sizes, at)) = read else {
            return Vec::new();
        };
        if let Some(sizes) = sizes {
            let sizes: Vec<Option<u64>> = sizes;
            self.data_dir_bytes = watched.iter().map(|w| w.name.clone()).zip(sizes).collect();
            // From when this reading began, so the walks keep the readings' cadence.
            self.last_walk = Some(started);
        }
        watched
            .iter()
            .zip(usage)
            .map(|(w, u)| {
                let cpu_pct = match u.cpu_s {
                    Some(now) => self
                        .previous_cpu
                        .insert(w.name.clone(), (now, at))
                        .and_then(|(before, then)| cpu_percent(before, now, at - then)),
                    None => {
                        self.previous_cpu.remove(&w.name);
                        None
                    }
                };
                ResourceReading {
                    name: w.name.clone(),
                    cpu_pct,
                    mem_bytes: u.rss_bytes,
                    disk_read_bytes: u.read_bytes,
                    disk_write_bytes: u.write_bytes,
                    net_rx_bytes: None,
                    net_tx_bytes: None,
                    data_dir_bytes: self.data_dir_bytes.get(&w.name).copied().flatten(),
                }
            })
            .collect()
    }
}

/// CPU % of one core between two readings of CPU seconds `wall` apart. A group
/// whose member exited can show less CPU than before: that counts as idle.
pub fn cpu_percent(before_s: f64, now_s: f64, wall: Duration) -> Option<f64> {
    let wall = wall.as_secs_f64();
    (wall > 0.0).then(|| (now_s - before_s).max(0.0) / wall * 100.0)
}

/// `read_bytes` and `write_bytes` from the text of `/proc/<pid>/io`.
pub fn io_bytes(io: &str) -> (Option<u64>, Option<u64>) {
    let field = |name: &str| {
        io.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.trim().parse().ok())
    };
    (field("read_bytes"), field("write_bytes"))
}

/// Every pid under `/proc` with its process group.
#[cfg(test)]
fn all_groups() -> Vec<(u32, u32)> {
    all_processes()
        .into_iter()
        .map(|(p, g, _)| (p, g))
        .collect()
}

/// Every pid under `/proc` with its process group and its parent.
fn all_processes() -> Vec<(u32, u32, u32)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| {
            let pid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
            let stat = read_stat(pid)?;
            Some((pid, process_group(&stat)?, parent_pid(&stat)?))
        })
        .collect()
}

/// `leader`, the members of its process group and their descendants, now.
pub(super) fn members(leader: u32) -> Vec<u32> {
    let mut pids = group_and_descendants(&all_processes(), leader);
    if !pids.contains(&leader) {
        pids.insert(0, leader);
    }
    pids
}

/// The members of `leader`'s process group and all their descendants.
fn group_and_descendants(processes: &[(u32, u32, u32)], leader: u32) -> Vec<u32> {
    let mut members: Vec<u32> = (processes.iter())
        .filter(|(_, g, _)| *g == leader)
        .map(|(p, _, _)| *p)
        .collect();
    let mut i = 0;
    while i < members.len() {
        let parent = members[i];
        for (pid, _, ppid) in processes {
            if *ppid == parent && !members.contains(pid) {
                members.push(*pid);
            }
        }
        i += 1;
    }
    members
}

/// The usage of each leader's process group, in the order given. A group with no
/// member left has every field `None`.
pub fn group_usage(leaders: &[u32]) -> Vec<GroupUsage> {
    let processes = all_processes();
    leaders
        .iter()
        .map(|leader| {
            let mut usage = GroupUsage::default();
            for pid in group_and_descendants(&processes, *leader) {
                let stats = ProcessStats::of(pid);
                let (read, write) = std::fs::read_to_string(format!("/proc/{pid}/io"))
                    .map_or((None, None), |io| io_bytes(&io));
                // With what exited members used: their parents in the tree reaped them.
                let cpu_s = read_stat(pid).and_then(|s| cpu_seconds_with_reaped(&s));
                usage.cpu_s = add(usage.cpu_s, cpu_s);
                usage.rss_bytes = add(usage.rss_bytes, stats.rss_bytes);
                usage.read_bytes = add(usage.read_bytes, read);
                usage.write_bytes = add(usage.write_bytes, write);
            }
            usage
        })
        .collect()
}

/// The sum of what is known: `None` only when neither is.
fn add<T: std::ops::Add<Output = T>>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    }
}

/// Disk usage of everything under `dir` (allocated blocks, as `du` counts them;
/// symbolic links are not followed). `None` if `dir` cannot be read; files that
/// vanish during the walk are skipped.
pub fn dir_disk_usage(dir: &Path) -> Option<u64> {
    let mut total = std::fs::symlink_metadata(dir).ok()?.blocks() * 512;
    let mut pending = vec![std::fs::read_dir(dir).ok()?];
    while let Some(entries) = pending.pop() {
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            total += meta.blocks() * 512;
            if meta.is_dir()
                && let Ok(sub) = std::fs::read_dir(entry.path())
            {
                pending.push(sub);
            }
        }
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_io_counters() {
        let io = "rchar: 6976\nwchar: 10\nsyscr: 10\nsyscw: 0\nread_bytes: 4096\n\
                  write_bytes: 8192\ncancelled_write_bytes: 0\n";
        assert_eq!(io_bytes(io), (Some(4096), Some(8192)));
        assert_eq!(io_bytes("rchar: 1\n"), (None, None));
        assert_eq!(io_bytes(""), (None, None));
    }

    #[test]
    fn cpu_percent_is_of_one_core_and_never_negative() {
        let second = Duration::from_secs(1);
        assert_eq!(cpu_percent(1.0, 1.5, second), Some(50.0));
        assert_eq!(cpu_percent(1.0, 3.0, second), Some(200.0));
        assert_eq!(cpu_percent(2.0, 1.0, second), Some(0.0));
        assert_eq!(cpu_percent(1.0, 2.0, Duration::ZERO), None);
    }

    #[test]
    fn sums_of_what_is_known() {
        assert_eq!(add(Some(1), Some(2)), Some(3));
        assert_eq!(add(None, Some(2)), Some(2));
        assert_eq!(add::<u64>(None, None), None);
    }

    #[test]
    fn disk_usage_counts_nested_files() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir_disk_usage(dir.path()).unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        std::fs::write(dir.path().join("a/b/data"), vec![7u8; 64 * 1024]).unwrap();
        let full = dir_disk_usage(dir.path()).unwrap();
        assert!(full >= empty + 64 * 1024, "{empty} -> {full}");
        assert_eq!(dir_disk_usage(&dir.path().join("missing")), None);
    }

    #[test]
    fn descendants_that_left_the_group_are_counted() {
        // (pid, group, parent): 10 leads; 11 is its child in the group; 12, a child of
        // 11, started a session of its own; 13 is its child; 20 is unrelated.
        let processes = [
            (10, 10, 1),
            (11, 10, 10),
            (12, 12, 11),
            (13, 12, 12),
            (20, 20, 1),
        ];
        let mut members = group_and_descendants(&processes, 10);
        members.sort();
        assert_eq!(members, [10, 11, 12, 13]);
        assert_eq!(group_and_descendants(&processes, 99), Vec::<u32>::new());
    }

    #[test]
    fn a_member_that_exited_keeps_its_cpu_in_the_group() {
        use std::os::unix::process::CommandExt;
        // A shell whose child burns CPU and exits (reaped by the shell), then sleeps:
        // no member alive used the CPU, the group did.
        let mut leader = std::process::Command::new("/bin/sh")
            .args([
                "-c",
                "(i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done); sleep 300",
            ])
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = leader.id();
        let deadline = Instant::now() + Duration::from_secs(60);
        let sleeping = || {
            all_processes().iter().any(|(p, g, _)| {
                *g == pid
                    && std::fs::read_to_string(format!("/proc/{p}/comm"))
                        .is_ok_and(|c| c.trim() == "sleep")
            })
        };
        while !sleeping() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let cpu_s = group_usage(&[pid])[0].cpu_s;
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        let _ = leader.wait();
        assert!(
            cpu_s.unwrap() >= 0.05,
            "the burner's CPU stays the group's: {cpu_s:?}"
        );
    }

    #[test]
    fn a_group_sums_its_members() {
        use std::os::unix::process::CommandExt;
        // A shell leading its own group, with two children.
        let mut leader = std::process::Command::new("/bin/sh")
            .args(["-c", "sleep 300 & sleep 301 & wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = leader.id();
        let deadline = Instant::now() + Duration::from_secs(10);
        let leader_rss = ProcessStats::of(pid).rss_bytes.unwrap_or(0);
        let usage = loop {
            let usage = group_usage(&[pid, u32::MAX]);
            let members = all_groups().iter().filter(|(_, g)| *g == pid).count();
            if members >= 3 || Instant::now() > deadline {
                break (usage, members);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        let _ = leader.wait();
        let (usage, members) = usage;
        assert!(members >= 3, "sh and two sleeps in one group: {members}");
        assert!(
            usage[0].rss_bytes.unwrap() > leader_rss,
            "the group's memory is more than its leader's ({leader_rss} B)"
        );
        assert!(usage[0].cpu_s.is_some());
        assert_eq!(usage[1], GroupUsage::default(), "no such group");
    }
}
