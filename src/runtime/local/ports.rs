//! Loopback ports for the processes a run starts, reserved until the tool exits.
//!
//! A port is chosen by binding it and is then released for the node to bind, which a
//! slow node does seconds later. In that window another run on the machine (tests run
//! in parallel) or the next node of the same run could choose it too, and one of the
//! two nodes would fail with "address already in use". So every port handed out is
//! reserved: in this process by a set, across processes by a one-byte lock at the
//! port's offset in a shared lock file (an open-file-description lock, which the kernel
//! drops when the process ends, however it ends). Ports are never handed out twice by
//! one tool process; there are about 12,000 of them.

use nix::fcntl::{FcntlArg, fcntl};
use std::collections::HashSet;
use std::fs::File;
use std::sync::Mutex;

/// The lowest port the tool hands out (below it: well-known and registered services
/// a user is more likely to run).
const FIRST_PORT: u16 = 20_000;

/// What this process holds: the ports it handed out, and the lock file (absent when
/// it cannot be opened: then only this process's own choices are kept apart).
struct Reserved {
    ports: HashSet<u16>,
    lock_file: Option<File>,
}

static RESERVED: Mutex<Option<Reserved>> = Mutex::new(None);

/// `count` distinct free ports on 127.0.0.1, below the ephemeral range so that no
/// outgoing connection takes one before a slow-starting node (a JVM: Eclair) binds it.
/// A random start spreads parallel runs over the range.
pub fn free_ports(count: usize) -> std::io::Result<Vec<u16>> {
    use rand::Rng;
    let mut guard = RESERVED.lock().unwrap_or_else(|e| e.into_inner());
    let reserved = guard.get_or_insert_with(|| Reserved {
        ports: HashSet::new(),
        lock_file: open_lock_file(),
    });
    let first = FIRST_PORT;
    let end = ephemeral_start().max(first + 1024);
    let span = end - first;
    let start = rand::rng().random_range(0..span);
    // Held until every port is chosen, so the kernel cannot hand one out twice here.
    let mut listeners = Vec::with_capacity(count);
    let mut chosen = Vec::with_capacity(count);
    for i in 0..span {
        if chosen.len() == count {
            break;
        }
        let port = first + (start + i) % span;
        if reserved.ports.contains(&port) {
            continue;
        }
        let Ok(listener) = std::net::TcpListener::bind(("127.0.0.1", port)) else {
            continue;
        };
        if let Some(file) = &reserved.lock_file
            && !lock_port(file, port)
        {
            continue;
        }
        reserved.ports.insert(port);
        listeners.push(listener);
        chosen.push(port);
    }
    // Everything below the ephemeral range is taken: let the kernel choose.
    while chosen.len() < count {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        reserved.ports.insert(port);
        listeners.push(listener);
        chosen.push(port);
    }
    Ok(chosen)
}

/// The lock file shared by the tool processes of one user, in the temporary directory.
/// It stays there (empty); the locks in it go with the processes that held them.
fn open_lock_file() -> Option<File> {
    let uid = nix::unistd::getuid();
    let path = std::env::temp_dir().join(format!("lnbench-tui-ports-{uid}.lock"));
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .ok()
}

/// Takes the write lock of byte `port` of the lock file without waiting: false when
/// another process holds it (or the kernel refuses open-file-description locks, in
/// which case the port is still usable: true).
fn lock_port(file: &File, port: u16) -> bool {
    let lock = nix::libc::flock {
        l_type: nix::libc::F_WRLCK as i16,
        l_whence: nix::libc::SEEK_SET as i16,
        l_start: i64::from(port),
        l_len: 1,
        l_pid: 0,
    };
    match fcntl(file, FcntlArg::F_OFD_SETLK(&lock)) {
        Ok(_) => true,
        Err(nix::errno::Errno::EAGAIN | nix::errno::Errno::EACCES) => false,
        Err(_) => true,
    }
}

/// The first port of the kernel's ephemeral range (Linux: `ip_local_port_range`;
/// 32768 by default).
fn ephemeral_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_ports_are_distinct_and_bindable() {
        let ports = free_ports(8).unwrap();
        let mut unique = ports.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), 8);
        for port in ports {
            assert!(
                port < ephemeral_start().max(FIRST_PORT + 1024),
                "{port} is in the ephemeral range"
            );
            std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
        }
    }

    #[test]
    fn a_port_is_never_handed_out_twice_while_unbound() {
        // Nothing binds these ports between the calls: before the reservation, the
        // same port could come back (the failure seen: LND's "address already in use").
        let mut seen = HashSet::new();
        for _ in 0..200 {
            for port in free_ports(4).unwrap() {
                assert!(seen.insert(port), "port {port} was handed out twice");
            }
        }
    }

    #[test]
    fn a_port_locked_by_another_open_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ports.lock");
        let open = || {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .unwrap()
        };
        // Two open files stand for two tool processes.
        let (one, other) = (open(), open());
        assert!(lock_port(&one, 21_000));
        assert!(!lock_port(&other, 21_000), "a held port must be refused");
        assert!(lock_port(&other, 21_001));
        drop(one);
        assert!(lock_port(&other, 21_000), "the lock goes with its holder");
    }
}
