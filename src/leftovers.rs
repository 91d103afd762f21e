//! Who owns what a run leaves, and `lnbench-tui down`'s local part. Everything a run
//! creates carries its owner, `<hostname>/<pid>` of the lnbench-tui that made it (for
//! messages), and a lock that tool holds while it lives (see [`lock`]): a file in the
//! run directory, whose `flock` the tool holds; for Docker and Kubernetes, a token label
//! naming a lock file in the cache. `down` removes only what a tool that is gone made,
//! so a run still going (someone else's, on a shared machine) is left alone; and only
//! the current user's runs (the uid: a Docker label, the run directory's owner), unless
//! `--all`, which says whose it removes.

pub mod lock;

use crate::metrics::process::{read_stat, state};
use std::path::{Path, PathBuf};

/// The file in a run directory that names its owner; removed when the run ends with
/// `--keep`, so a kept directory is never `down`'s to remove.
pub const OWNER_FILE: &str = ".lnbench-owner";
/// Prefix of run directories (`lnbench-<run id>`) and of the PostgreSQL data
/// directories made beside them when running as root (`lnbench-pg-<run dir name>`).
const RUN_PREFIX: &str = "lnbench-";
const PG_PREFIX: &str = "lnbench-pg-";

/// This host's name, as the kernel has it (empty if unreadable).
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

/// `<hostname>/<pid>` of this process.
pub fn owner() -> String {
    format!("{}/{}", hostname(), std::process::id())
}

/// The uid this process runs as.
pub fn uid() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("Uid:"))?;
            line.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(u32::MAX)
}

/// The user name of `uid` (from `/etc/passwd`), or `uid <n>`.
pub fn user_name(uid: u32) -> String {
    std::fs::read_to_string("/etc/passwd")
        .ok()
        .and_then(|p| {
            p.lines().find_map(|l| {
                let mut f = l.split(':');
                let name = f.next()?;
                (f.nth(1)?.parse::<u32>().ok()? == uid).then(|| name.to_string())
            })
        })
        .unwrap_or_else(|| format!("uid {uid}"))
}

/// Whether a run of user `owner_uid` is someone else's (`None`: not recorded, as in runs
/// made before users were).
pub fn foreign(owner_uid: Option<u32>) -> Option<String> {
    owner_uid
        .filter(|u| *u != uid())
        .map(|u| match user_name(u) {
            name if name.starts_with("uid ") => name,
            name => format!("{name} (uid {u})"),
        })
}

/// Whose something is, from its owner (`<hostname>/<pid>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// Its lnbench-tui runs on this host (pid).
    Running(u32),
    /// Made on this host by a tool that is gone, or made before owners were recorded.
    Gone,
    /// Made from another host: whether its tool still runs cannot be told from here.
    OtherHost(String),
    /// Its lock is not on this machine (made from another host or container).
    Unseen,
}

impl Owner {
    /// Why `down` leaves a run of this owner alone (`None`: it does not).
    pub fn why_kept(&self) -> Option<String> {
        match self {
            Owner::Gone => None,
            Owner::Running(pid) => Some(format!("its lnbench-tui (pid {pid}) is still running")),
            Owner::OtherHost(h) => Some(format!("it was started from another host ({h})")),
            Owner::Unseen => Some(
                "its owner's lock is not on this machine (started from another host or \
                 container?)"
                    .to_string(),
            ),
        }
    }
}

/// The pid an owner (`<hostname>/<pid>`) names, 0 if none: for messages only.
fn recorded_pid(owner: Option<&str>) -> u32 {
    owner
        .and_then(|o| o.trim().rsplit_once('/'))
        .and_then(|(_, pid)| pid.parse().ok())
        .unwrap_or(0)
}

/// Judges an owner by its token's lock (see [`lock`]) when it has one, else (objects
/// made before tokens, or without a cache directory) by host name and pid.
pub fn judge(
    owner: Option<&str>,
    token: Option<&str>,
    host: &str,
    probe: impl Fn(&str) -> lock::Lock,
    is_tool: impl Fn(u32) -> bool,
) -> Owner {
    match token.map(probe) {
        Some(lock::Lock::Held) => Owner::Running(recorded_pid(owner)),
        Some(lock::Lock::Free) => Owner::Gone,
        Some(lock::Lock::Missing) => Owner::Unseen,
        None => owner_of(owner, host, is_tool),
    }
}

/// Judges an owner: `host` is this host's name, `is_tool(pid)` whether that process
/// is a live lnbench-tui.
pub fn owner_of(owner: Option<&str>, host: &str, is_tool: impl Fn(u32) -> bool) -> Owner {
    let Some((owner_host, pid)) = owner.and_then(|l| l.trim().rsplit_once('/')) else {
        return Owner::Gone;
    };
    let Ok(pid) = pid.parse::<u32>() else {
        return Owner::Gone;
    };
    if owner_host != host {
        Owner::OtherHost(owner_host.to_string())
    } else if is_tool(pid) {
        Owner::Running(pid)
    } else {
        Owner::Gone
    }
}

/// Whether `pid` is a live (not zombie) process named lnbench-tui; a pid reused by
/// another program does not count.
pub fn is_live_tool(pid: u32) -> bool {
    let named = std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .is_ok_and(|c| c.trim() == "lnbench-tui");
    let zombie = read_stat(pid).is_some_and(|s| state(&s) == Some('Z'));
    named && !zombie
}

/// Marks `run_dir` as this process's: its owner file, whose lock this process holds
/// until it exits.
pub fn claim(run_dir: &Path) -> std::io::Result<()> {
    let path = run_dir.join(OWNER_FILE);
    std::fs::write(&path, owner())?;
    lock::hold(&path)
}

/// Gives `run_dir` up: it was kept on purpose (`--keep`), and `down` leaves it.
pub fn release(run_dir: &Path) {
    let path = run_dir.join(OWNER_FILE);
    let _ = std::fs::remove_file(&path);
    lock::drop_lock(&path);
}

/// A run directory whose tool is gone, and what belongs to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stale {
    pub run_dir: PathBuf,
    /// PostgreSQL's data directory beside it (made when running as root), if any.
    pub postgres: Option<PathBuf>,
    /// Whose it is, when another user's (removed under `--all` only).
    pub user: Option<String>,
}

impl Stale {
    fn of(run_dir: PathBuf, name: &str, pg_parent: &Path, user: Option<String>) -> Stale {
        let pg = pg_parent.join(format!("{PG_PREFIX}{name}"));
        Stale {
            run_dir,
            postgres: pg.is_dir().then_some(pg),
            user,
        }
    }
}

/// The PostgreSQL socket directories (`lnbench-pg-<pid>-<port>`, see
/// `runtime::local::postgres`) under `temp` whose lnbench-tui is gone: a SIGKILLed tool
/// leaves them (empty once the server died with it).
pub fn stale_socket_dirs(temp: &Path, is_tool: impl Fn(u32) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(temp) else {
        return Vec::new();
    };
    let mut stale: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let (pid, port) = name.strip_prefix(PG_PREFIX)?.split_once('-')?;
            let pid: u32 = pid.parse().ok()?;
            port.parse::<u16>().ok()?;
            (!is_tool(pid)).then(|| e.path())
        })
        .collect();
    stale.sort();
    stale
}

/// The current user's run directories under `parent` whose owner is gone, that is
/// whose owner file's lock nobody holds (with `all`: every one that has an owner,
/// whoever's), with their PostgreSQL data directories in `pg_parent`; `kept` gets the
/// ones still in use or another user's, with why.
pub fn stale_runs(
    parent: &Path,
    pg_parent: &Path,
    all: bool,
    kept: &mut Vec<(PathBuf, String)>,
) -> Vec<Stale> {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    let mut stale = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with(RUN_PREFIX) || name.starts_with(PG_PREFIX) {
            continue;
        }
        let dir = entry.path();
        // No owner file: not a run directory, or one kept on purpose.
        // Bounded and never a FIFO: the temp dir is shared, and a planted one would
        // stall every user's `down`.
        let Ok(owner) =
            crate::files::read_text(&dir.join(OWNER_FILE), crate::files::SMALL_MAX_BYTES)
        else {
            continue;
        };
        let user = {
            use std::os::unix::fs::MetadataExt;
            foreign(std::fs::symlink_metadata(&dir).ok().map(|m| m.uid()))
        };
        let judged = match lock::probe(&dir.join(OWNER_FILE)) {
            lock::Lock::Free | lock::Lock::Missing => Owner::Gone,
            lock::Lock::Held => Owner::Running(recorded_pid(Some(&owner))),
        };
        match judged.why_kept() {
            _ if all => stale.push(Stale::of(dir, &name, pg_parent, user)),
            _ if user.is_some() => {
                kept.push((dir, format!("it belongs to {}", user.unwrap_or_default())))
            }
            None => stale.push(Stale::of(dir, &name, pg_parent, None)),
            Some(why) => kept.push((dir, why)),
        }
    }
    stale.sort_by(|a, b| a.run_dir.cmp(&b.run_dir));
    stale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_left_alone_only_while_its_tool_runs_here() {
        let alive = |pid: u32| pid == 42;
        assert_eq!(owner_of(Some("box/42"), "box", alive), Owner::Running(42));
        assert_eq!(owner_of(Some("box/43\n"), "box", alive), Owner::Gone);
        assert_eq!(
            owner_of(Some("other/42"), "box", alive),
            Owner::OtherHost("other".into())
        );
        // Take the last slash, should a host name ever hold one.
        assert_eq!(owner_of(Some("a/b/42"), "a/b", alive), Owner::Running(42));
        // Made before owners were recorded, or an owner someone edited: removable.
        assert_eq!(owner_of(None, "box", alive), Owner::Gone);
        assert_eq!(owner_of(Some("box/x"), "box", alive), Owner::Gone);
    }

    #[test]
    fn only_a_live_lnbench_tui_counts_as_a_running_tool() {
        // This test's own process is alive but is not lnbench-tui.
        assert!(!is_live_tool(std::process::id()));
        assert!(!is_live_tool(u32::MAX));
    }

    #[test]
    fn stale_runs_are_those_of_a_gone_tool_with_their_postgres_dir() {
        let tmp = tempfile::tempdir().unwrap();
        let (runs, pg) = (tmp.path().join("runs"), tmp.path().join("tmp"));
        let host = hostname();
        for (name, owner) in [
            ("lnbench-gone", Some(format!("{host}/7"))),
            ("lnbench-live", Some(format!("{host}/42"))),
            ("lnbench-kept", None),
            ("other-gone", Some(format!("{host}/7"))),
        ] {
            std::fs::create_dir_all(runs.join(name)).unwrap();
            if let Some(o) = owner {
                std::fs::write(runs.join(name).join(OWNER_FILE), o).unwrap();
            }
        }
        // The live one's tool holds its lock (here: this test).
        lock::hold(&runs.join("lnbench-live").join(OWNER_FILE)).unwrap();
        std::fs::create_dir_all(pg.join("lnbench-pg-lnbench-gone")).unwrap();
        let mut kept = Vec::new();
        let stale = stale_runs(&runs, &pg, false, &mut kept);
        assert_eq!(
            stale,
            [Stale {
                run_dir: runs.join("lnbench-gone"),
                postgres: Some(pg.join("lnbench-pg-lnbench-gone")),
                user: None,
            }]
        );
        let kept: Vec<&Path> = kept.iter().map(|(p, _)| p.as_path()).collect();
        kept.iter().for_each(|p| assert!(p.starts_with(&runs)));
        assert_eq!(kept, [runs.join("lnbench-live").as_path()]);

        // --all: every directory with an owner, none left alone.
        let mut kept = Vec::new();
        let all = stale_runs(&runs, &pg, true, &mut kept);
        assert_eq!(all.len(), 2, "{all:?}");
        assert!(kept.is_empty());
        release(&runs.join("lnbench-live"));
    }

    /// Another user's run is theirs to remove: `down` leaves it and says whose it is;
    /// `down --all` removes it and says so. (Changing a directory's owner needs root.)
    #[test]
    fn another_users_run_is_left_alone_unless_all() {
        if uid() != 0 {
            eprintln!("not run: giving a directory to another user needs root");
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let (runs, pg) = (tmp.path().join("runs"), tmp.path().join("tmp"));
        let theirs = runs.join("lnbench-theirs");
        std::fs::create_dir_all(&theirs).unwrap();
        std::fs::write(theirs.join(OWNER_FILE), format!("{}/7", hostname())).unwrap();
        std::os::unix::fs::chown(&theirs, Some(54321), Some(54321)).unwrap();
        let mut kept = Vec::new();
        let stale = stale_runs(&runs, &pg, false, &mut kept);
        assert!(stale.is_empty(), "{stale:?}");
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert!(kept[0].1.contains("uid 54321"), "{kept:?}");
        let mut kept = Vec::new();
        let all = stale_runs(&runs, &pg, true, &mut kept);
        assert_eq!(all.len(), 1, "{all:?}");
        assert!(all[0].user.as_deref().unwrap().contains("uid 54321"));
        assert!(kept.is_empty());
    }

    #[test]
    fn users_are_named_from_the_password_file() {
        assert_eq!(user_name(0), "root");
        assert_eq!(user_name(4_000_000_000), "uid 4000000000");
        assert_eq!(foreign(Some(uid())), None);
        assert_eq!(foreign(None), None);
        assert_eq!(foreign(Some(54321)).unwrap(), "uid 54321");
        if uid() != 0 {
            assert_eq!(foreign(Some(0)).unwrap(), "root (uid 0)");
        }
    }

    #[test]
    fn socket_dirs_of_a_gone_tool_are_stale() {
        let tmp = tempfile::tempdir().unwrap();
        for name in [
            "lnbench-pg-7-25000",
            "lnbench-pg-42-25001",
            "lnbench-pg-lnbench-x-1-2",
            "lnbench-pg-7-notaport",
        ] {
            std::fs::create_dir(tmp.path().join(name)).unwrap();
        }
        let stale = stale_socket_dirs(tmp.path(), |pid| pid == 42);
        assert_eq!(stale, [tmp.path().join("lnbench-pg-7-25000")]);
    }

    /// A live tool holds its run directory's lock, so its run is left alone whatever
    /// pid the owner file names: 1 (the tool in a container) or a dead one.
    #[test]
    fn a_run_whose_lock_is_held_is_alive_whatever_its_pid() {
        let tmp = tempfile::tempdir().unwrap();
        let (runs, pg) = (tmp.path().join("runs"), tmp.path().join("tmp"));
        let host = hostname();
        for (name, pid) in [("lnbench-pid1", 1), ("lnbench-dead", 4_000_000)] {
            let dir = runs.join(name);
            std::fs::create_dir_all(&dir).unwrap();
            claim(&dir).unwrap();
            // Same file (and lock), another recorded owner.
            std::fs::write(dir.join(OWNER_FILE), format!("{host}/{pid}")).unwrap();
        }
        let mut kept = Vec::new();
        let stale = stale_runs(&runs, &pg, false, &mut kept);
        assert!(stale.is_empty(), "a live run judged gone: {stale:?}");
        assert_eq!(kept.len(), 2, "{kept:?}");
        assert!(
            kept.iter().all(|(_, why)| why.contains("still running")),
            "{kept:?}"
        );
        for name in ["lnbench-pid1", "lnbench-dead"] {
            release(&runs.join(name));
        }
    }

    /// Nobody holds the lock of a run directory: its tool is gone, even if a live
    /// lnbench-tui now has the pid it recorded.
    #[test]
    fn a_run_whose_lock_is_free_is_a_leftover() {
        let tmp = tempfile::tempdir().unwrap();
        let (runs, pg) = (tmp.path().join("runs"), tmp.path().join("tmp"));
        let dir = runs.join("lnbench-free");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(OWNER_FILE), format!("{}/42", hostname())).unwrap();
        let mut kept = Vec::new();
        let stale = stale_runs(&runs, &pg, false, &mut kept);
        assert_eq!(stale.len(), 1, "kept: {kept:?}");
        assert_eq!(stale[0].run_dir, dir);
        assert!(kept.is_empty(), "{kept:?}");
    }

    /// Docker and Kubernetes runs: a token's lock decides, not the recorded pid; an
    /// owner without a token (made before tokens) is judged by host name and pid.
    #[test]
    fn a_token_lock_decides_over_the_recorded_pid() {
        use lock::Lock;
        let dead = |_: u32| false;
        let live = |_: u32| true;
        let owner = Some("box/1");
        let judged = |token, lock: Lock, is_tool: &dyn Fn(u32) -> bool| {
            judge(owner, token, "box", |_| lock, is_tool)
        };
        assert_eq!(judged(Some("t"), Lock::Held, &dead), Owner::Running(1));
        assert_eq!(judged(Some("t"), Lock::Free, &live), Owner::Gone);
        assert_eq!(judged(Some("t"), Lock::Missing, &dead), Owner::Unseen);
        assert!(Owner::Unseen.why_kept().is_some());
        assert_eq!(judged(None, Lock::Held, &dead), Owner::Gone);
        assert_eq!(judged(None, Lock::Free, &live), Owner::Running(1));
    }

    #[test]
    fn claim_then_release_leaves_no_owner() {
        let tmp = tempfile::tempdir().unwrap();
        claim(tmp.path()).unwrap();
        let written = std::fs::read_to_string(tmp.path().join(OWNER_FILE)).unwrap();
        assert_eq!(written, owner());
        release(tmp.path());
        assert!(!tmp.path().join(OWNER_FILE).exists());
    }
}
