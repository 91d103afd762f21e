//! Cgroups that hold the local runtime's processes to their envelopes (`resources:`):
//! one parent per run, `lnbench-<run>`, and one child per node, the chain and each
//! database server.
//!
//! Cgroup v2 where the root is a unified hierarchy with controllers (`cpu.max`,
//! `memory.max`, `cpuset.cpus`); else cgroup v1 where the cpu, cpuset and memory
//! hierarchies are mounted under the root (`cpu.cfs_quota_us`, `memory.limit_in_bytes`,
//! `cpuset.cpus`). A v2 mount without controllers (beside v1 ones) limits nothing and
//! is not used.

use crate::metrics::KernelCounters;
use crate::scenario::Envelope;
use std::io;
use std::path::{Path, PathBuf};

/// Where the kernel mounts cgroups.
pub const ROOT: &str = "/sys/fs/cgroup";
/// The CFS period the quota is a share of (the kernel's default), microseconds.
const PERIOD_US: u64 = 100_000;
/// What v2 must offer (cpuset only when an envelope pins CPUs).
const V2_CONTROLLERS: [&str; 3] = ["cpu", "memory", "cpuset"];

/// The hierarchies an envelope is written into.
#[derive(Debug, Clone, PartialEq)]
enum Layout {
    V2(PathBuf),
    V1 {
        cpu: PathBuf,
        cpuset: PathBuf,
        memory: PathBuf,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    #[error(
        "resources: needs cgroups, and none can be written under {root} ({why}): run as root \
         with cgroup v2's cpu, memory and cpuset controllers enabled (+cpu +memory +cpuset in \
         {root}/cgroup.subtree_control), or the v1 cpu, cpuset and memory hierarchies mounted \
         writable under {root}; or remove resources: from the scenario"
    )]
    Unavailable { root: PathBuf, why: String },
    #[error("cannot {what} {path}")]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

fn io_err(what: &'static str, path: &Path) -> impl FnOnce(io::Error) -> CgroupError {
    let path = path.to_path_buf();
    move |source| CgroupError::Io { what, path, source }
}

/// Which cgroup version the hierarchy is, as the report names it.
fn version_name(layout: &Layout) -> &'static str {
    match layout {
        Layout::V2(_) => "cgroup v2",
        Layout::V1 { .. } => "cgroup v1",
    }
}

/// Which version under `root` can be written, or what to enable: the check before a
/// run starts.
pub fn usable(root: &Path) -> Result<&'static str, CgroupError> {
    let layout = detect(root)?;
    let dirs: Vec<&Path> = match &layout {
        Layout::V2(root) => vec![root],
        Layout::V1 {
            cpu,
            cpuset,
            memory,
        } => vec![cpu, cpuset, memory],
    };
    for dir in dirs {
        if let Err(e) = nix::unistd::access(dir, nix::unistd::AccessFlags::W_OK) {
            return Err(CgroupError::Unavailable {
                root: root.to_path_buf(),
                why: format!("{} is not writable: {e}", dir.display()),
            });
        }
    }
    Ok(version_name(&layout))
}

/// The hierarchies under `root` this process can use, or why there are none.
fn detect(root: &Path) -> Result<Layout, CgroupError> {
    let unavailable = |why: String| CgroupError::Unavailable {
        root: root.to_path_buf(),
        why,
    };
    if let Ok(controllers) = std::fs::read_to_string(root.join("cgroup.controllers")) {
        let have: Vec<&str> = controllers.split_whitespace().collect();
        let missing: Vec<&str> = (V2_CONTROLLERS.iter().copied())
            .filter(|c| !have.contains(c))
            .collect();
        if !missing.is_empty() {
            return Err(unavailable(format!(
                "cgroup v2 without the {} controller(s)",
                missing.join(", ")
            )));
        }
        return Ok(Layout::V2(root.to_path_buf()));
    }
    let hierarchy = |name: &str| {
        let dir = root.join(name);
        dir.join("cgroup.procs").exists().then_some(dir)
    };
    match (hierarchy("cpu"), hierarchy("cpuset"), hierarchy("memory")) {
        (Some(cpu), Some(cpuset), Some(memory)) => Ok(Layout::V1 {
            cpu,
            cpuset,
            memory,
        }),
        _ => Err(unavailable(
            "neither cgroup v2 with controllers nor the v1 cpu, cpuset and memory hierarchies are mounted"
                .into(),
        )),
    }
}

/// The run's cgroups: created as processes start, removed by [`Cgroups::remove`].
#[derive(Debug)]
pub struct Cgroups {
    layout: Layout,
    /// `lnbench-<run>`.
    parent: String,
    /// Made so far, in creation order.
    groups: Vec<Group>,
}

/// One process's (and its children's) cgroup.
#[derive(Debug, Clone)]
pub struct Group {
    pub name: String,
    pub envelope: Envelope,
    /// Its directory in each hierarchy (one for v2).
    dirs: Vec<PathBuf>,
    v2: bool,
}

impl Cgroups {
    /// Finds the hierarchies under `root` and makes the run's parent in each; fails
    /// with what to enable when none is there or writable.
    pub fn open(root: &Path, run: &str) -> Result<Cgroups, CgroupError> {
        let layout = detect(root)?;
        let parent = format!("lnbench-{run}");
        let made = match &layout {
            Layout::V2(root) => make_v2_parent(root, &parent),
            Layout::V1 {
                cpu,
                cpuset,
                memory,
            } => make_v1_parents(cpu, cpuset, memory, &parent),
        };
        made.map_err(|e| CgroupError::Unavailable {
            root: root.to_path_buf(),
            why: crate::exit::error_chain(&e),
        })?;
        Ok(Cgroups {
            layout,
            parent,
            groups: Vec::new(),
        })
    }

    /// `cgroup v2` or `cgroup v1`.
    pub fn version(&self) -> &'static str {
        version_name(&self.layout)
    }

    /// The group of `name`, made with `envelope`'s limits if it is not there yet.
    pub fn group(&mut self, name: &str, envelope: &Envelope) -> Result<&Group, CgroupError> {
        if let Some(i) = self.groups.iter().position(|g| g.name == name) {
            return Ok(&self.groups[i]);
        }
        let group = match &self.layout {
            Layout::V2(root) => make_v2(&root.join(&self.parent).join(name), envelope)?,
            Layout::V1 {
                cpu,
                cpuset,
                memory,
            } => make_v1(
                [cpu, cpuset, memory].map(|h| h.join(&self.parent)),
                name,
                envelope,
            )?,
        };
        self.groups.push(Group {
            name: name.to_string(),
            envelope: envelope.clone(),
            ..group
        });
        Ok(self.groups.last().expect("just pushed"))
    }

    /// Every group made, in creation order.
    pub fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// The group of `name`, if made.
    pub fn get(&self, name: &str) -> Option<&Group> {
        self.groups.iter().find(|g| g.name == name)
    }

    /// Removes every group and the run's parent (their processes must have exited);
    /// the first failure is returned, the rest is still tried.
    pub fn remove(&mut self) -> Result<(), CgroupError> {
        let mut first = None;
        let parents: Vec<PathBuf> = match &self.layout {
            Layout::V2(root) => vec![root.join(&self.parent)],
            Layout::V1 {
                cpu,
                cpuset,
                memory,
            } => [cpu, cpuset, memory].map(|h| h.join(&self.parent)).to_vec(),
        };
        let dirs = (self.groups.drain(..)).flat_map(|g| g.dirs);
        for dir in dirs.chain(parents) {
            match std::fs::remove_dir(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => {
                    first.get_or_insert(CgroupError::Io {
                        what: "remove cgroup",
                        path: dir,
                        source: e,
                    });
                }
            }
        }
        first.map_or(Ok(()), Err)
    }
}

impl Group {
    /// The cgroup `pid` is in, as `/proc/<pid>/cgroup` names it, where this host
    /// mounts it under `root` (a container's, for its counters); None where it cannot
    /// be found.
    pub fn of_process(root: &Path, pid: u32) -> Option<Group> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
        Group::of_lines(root, &text)
    }

    fn of_lines(root: &Path, text: &str) -> Option<Group> {
        let v2 = root.join("cgroup.controllers").exists();
        let mut dirs = Vec::new();
        for line in text.lines() {
            let mut parts = line.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            let path = path.trim_start_matches('/');
            if v2 && controllers.is_empty() {
                dirs.push(root.join(path));
            } else if !v2 {
                let names: Vec<&str> = controllers.split(',').collect();
                for h in ["cpu", "memory"] {
                    if names.contains(&h) {
                        dirs.push(root.join(h).join(path));
                    }
                }
            }
        }
        dirs.retain(|d| d.is_dir());
        (!dirs.is_empty()).then(|| Group {
            name: String::new(),
            envelope: Envelope::default(),
            dirs,
            v2,
        })
    }

    /// Moves `pid` (with its threads) into the group.
    pub fn add(&self, pid: u32) -> Result<(), CgroupError> {
        for dir in &self.dirs {
            let procs = dir.join("cgroup.procs");
            std::fs::write(&procs, pid.to_string())
                .map_err(io_err("move a process into", &procs))?;
        }
        Ok(())
    }

    /// What the kernel counted for the group so far; a figure it does not give is None.
    pub fn read(&self) -> KernelCounters {
        let read = |file: &str| self.file(file);
        let cpu_stat = read("cpu.stat").unwrap_or_default();
        if self.v2 {
            KernelCounters {
                throttled_periods: field(&cpu_stat, "nr_throttled"),
                throttled_us: field(&cpu_stat, "throttled_usec"),
                memory_peak_bytes: read("memory.peak").and_then(|t| t.trim().parse().ok()),
                oom_kills: read("memory.events").and_then(|t| field(&t, "oom_kill")),
            }
        } else {
            KernelCounters {
                throttled_periods: field(&cpu_stat, "nr_throttled"),
                throttled_us: field(&cpu_stat, "throttled_time").map(|ns| ns / 1000),
                memory_peak_bytes: read("memory.max_usage_in_bytes")
                    .and_then(|t| t.trim().parse().ok()),
                oom_kills: read("memory.oom_control").and_then(|t| field(&t, "oom_kill")),
            }
        }
    }
}

impl Group {
    /// The text of one of the group's cgroup files (`cpu.stat`, `memory.max`), from the
    /// first of its hierarchies that has it: a kernel file, a few lines long.
    fn file(&self, name: &str) -> Option<String> {
        (self.dirs.iter()).find_map(|d| std::fs::read_to_string(d.join(name)).ok())
    }

    /// The limits the kernel holds for the group, read back (what was applied, which
    /// may differ from what was asked: the kernel rounds memory to its pages); a limit
    /// it holds none of, or does not show, is None.
    pub fn applied(&self) -> Envelope {
        let read = |file: &str| self.file(file).map(|t| t.trim().to_string());
        let cpuset = read("cpuset.cpus").filter(|c| !c.is_empty());
        if self.v2 {
            // `cpu.max` is `<quota> <period>`, or `max <period>` without a limit.
            let cpus = read("cpu.max").and_then(|t| {
                let (quota, period) = t.split_once(' ')?;
                let (q, p) = (quota.parse::<f64>().ok()?, period.parse::<f64>().ok()?);
                (p > 0.0).then(|| q / p)
            });
            let memory_bytes = read("memory.max").and_then(|t| t.parse().ok());
            Envelope {
                cpus,
                memory_bytes,
                cpuset,
            }
        } else {
            // A quota of -1 is no limit; so is v1's memory limit of about 2^63 bytes.
            let quota = read("cpu.cfs_quota_us").and_then(|t| t.parse::<i64>().ok());
            let period = read("cpu.cfs_period_us").and_then(|t| t.parse::<i64>().ok());
            let cpus = match (quota, period) {
                (Some(q), Some(p)) if q > 0 && p > 0 => Some(q as f64 / p as f64),
                _ => None,
            };
            let memory_bytes = (read("memory.limit_in_bytes"))
                .and_then(|t| t.parse::<u64>().ok())
                .filter(|b| *b < 1 << 62);
            Envelope {
                cpus,
                memory_bytes,
                cpuset,
            }
        }
    }
}

/// The number after `name` on its line of a `key value` file.
fn field(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (key, value) = line.split_once(' ')?;
        (key == name).then(|| value.trim().parse().ok()).flatten()
    })
}

fn write(dir: &Path, file: &str, value: &str) -> Result<(), CgroupError> {
    let path = dir.join(file);
    std::fs::write(&path, value).map_err(io_err("write", &path))
}

fn mkdir(dir: &Path) -> Result<(), CgroupError> {
    match std::fs::create_dir(dir) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => Err(io_err("create cgroup", dir)(e)),
        _ => Ok(()),
    }
}

fn quota_us(cpus: f64) -> u64 {
    // The kernel refuses a quota under 1 ms.
    ((cpus * PERIOD_US as f64).round() as u64).max(1000)
}

/// The run's parent in a v2 hierarchy, with the controllers handed down to it and on
/// to its children.
fn make_v2_parent(root: &Path, parent: &str) -> Result<(), CgroupError> {
    let enable = "+cpu +memory +cpuset";
    write(root, "cgroup.subtree_control", enable)?;
    let dir = root.join(parent);
    mkdir(&dir)?;
    write(&dir, "cgroup.subtree_control", enable)
}

fn make_v2(dir: &Path, envelope: &Envelope) -> Result<Group, CgroupError> {
    mkdir(dir)?;
    if let Some(cpus) = envelope.cpus {
        write(dir, "cpu.max", &format!("{} {PERIOD_US}", quota_us(cpus)))?;
    }
    if let Some(bytes) = envelope.memory_bytes {
        write(dir, "memory.max", &bytes.to_string())?;
        // No swap: the envelope is the memory; absent where the kernel has no swap
        // accounting.
        let _ = write(dir, "memory.swap.max", "0");
    }
    if let Some(cpuset) = &envelope.cpuset {
        write(dir, "cpuset.cpus", cpuset)?;
    }
    Ok(Group {
        name: String::new(),
        envelope: Envelope::default(),
        dirs: vec![dir.to_path_buf()],
        v2: true,
    })
}

/// The run's parent in each v1 hierarchy; cpuset's gets its parent's CPUs and memory
/// nodes (a new cpuset has none, and takes no process until it has).
fn make_v1_parents(
    cpu: &Path,
    cpuset: &Path,
    memory: &Path,
    parent: &str,
) -> Result<(), CgroupError> {
    mkdir(&cpu.join(parent))?;
    mkdir(&memory.join(parent))?;
    let dir = cpuset.join(parent);
    mkdir(&dir)?;
    copy_cpuset(cpuset, &dir, None)
}

/// Writes `cpus` (or `from`'s CPUs) and `from`'s memory nodes into `to`.
fn copy_cpuset(from: &Path, to: &Path, cpus: Option<&str>) -> Result<(), CgroupError> {
    let read = |file: &str| {
        let path = from.join(file);
        std::fs::read_to_string(&path)
            .map(|t| t.trim().to_string())
            .map_err(io_err("read", &path))
    };
    let cpus = match cpus {
        Some(c) => c.to_string(),
        None => read("cpuset.cpus")?,
    };
    write(to, "cpuset.cpus", &cpus)?;
    write(to, "cpuset.mems", &read("cpuset.mems")?)
}

fn make_v1(parents: [PathBuf; 3], name: &str, envelope: &Envelope) -> Result<Group, CgroupError> {
    let [cpu, cpuset, memory] = parents.map(|p| p.join(name));
    for dir in [&cpu, &cpuset, &memory] {
        mkdir(dir)?;
    }
    if let Some(cpus) = envelope.cpus {
        write(&cpu, "cpu.cfs_period_us", &PERIOD_US.to_string())?;
        write(&cpu, "cpu.cfs_quota_us", &quota_us(cpus).to_string())?;
    }
    if let Some(bytes) = envelope.memory_bytes {
        write(&memory, "memory.limit_in_bytes", &bytes.to_string())?;
        // Memory plus swap at the same figure: no swap. Absent without swap accounting.
        let _ = write(&memory, "memory.memsw.limit_in_bytes", &bytes.to_string());
    }
    let parent = cpuset.parent().expect("a group has a parent").to_path_buf();
    copy_cpuset(&parent, &cpuset, envelope.cpuset.as_deref())?;
    Ok(Group {
        name: String::new(),
        envelope: Envelope::default(),
        dirs: vec![cpu, cpuset, memory],
        v2: false,
    })
}

#[cfg(test)]
#[path = "cgroup_tests.rs"]
mod tests;
