//! Restarting a node in its pod, with its data: the `files` container shares the pod's
//! process namespace, so a shell run in it stops the node's process (SIGTERM, SIGKILL
//! at the deadline); the kubelet then starts the `node` container again (the pods'
//! restartPolicy is Always) on the same `data` volume. Node images carry no shell, so
//! the signal cannot come from the node's own container.

use std::time::Duration;

/// Defines `node_pids`, which sets `found` to the pids of the node's processes: those
/// whose parent is outside the pod's namespace (ppid 0), not zombies, that are neither
/// the pause process (pid 1), nor this shell, nor the files container's `sleep`.
const NODE_PIDS: &str = r#"node_pids() {
  found=
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    case $p in 1|$$) continue ;; esac
    read -r stat < "$d/stat" || continue
    set -- ${stat##*') '}
    [ "$2" = 0 ] || continue
    [ "$1" = Z ] && continue
    read -r comm < "$d/comm" || continue
    [ "$comm" = sleep ] && continue
    found="$found $p"
  done
}
"#;

/// Finds the node's process and leaves its pid in `$1`, or says why not and exits 1.
/// Exactly one must match.
const FIND_NODE: &str = r#"node_pids
set -- $found
[ $# -eq 1 ] || { echo "not one node process, pids:$found"; exit 1; }
"#;

/// Sends `$sig` to the node's process (`$1`), and SIGKILL after `$escalate` looks if
/// it still runs; then waits for the process of the container the kubelet starts again
/// and freezes it (SIGSTOP) once it runs the node's program (the same name as the old
/// one: not the container runtime's init, which must finish starting the container).
/// Prints the new pid and the uptime (s) at the signal and when the old process was
/// gone, or why not (exiting 1). `$limit` is how many looks (each 0.05 s apart) it
/// waits in all.
const HOLD_SCRIPT: &str = r#"old=$1
read -r name < "/proc/$old/comm" || { echo "no name for $old"; exit 1; }
read -r asked _ < /proc/uptime
kill -s "$sig" "$old" || { echo "kill -s $sig $old failed"; exit 1; }
gone=
i=0
while :; do
  if [ -z "$gone" ]; then
    if [ ! -d "/proc/$old" ]; then
      read -r gone _ < /proc/uptime
    elif [ "$i" -eq "$escalate" ]; then
      kill -s KILL "$old"
    fi
  fi
  node_pids
  new=
  for p in $found; do
    [ "$p" = "$old" ] && continue
    read -r c < "/proc/$p/comm" && [ "$c" = "$name" ] && new=$p
  done
  if [ -n "$new" ] && kill -s STOP "$new"; then
    [ -n "$gone" ] || read -r gone _ < /proc/uptime
    echo "$new $asked $gone"
    exit 0
  fi
  [ "$i" -ge "$limit" ] && { echo "no new process after the $sig"; exit 1; }
  sleep 0.05
  i=$((i + 1))
done
"#;

/// Stops the node's process and prints its pid once it is gone (or why not, exiting
/// 1); `$1` is the deadline in tenths of a second.
const STOP_SCRIPT: &str = r#"kill -s TERM "$1" || { echo "kill -s TERM $1 failed"; exit 1; }
i=0
while [ -d "/proc/$1" ]; do
  [ "$i" -eq "$limit" ] && kill -s KILL "$1"
  sleep 0.1
  i=$((i + 1))
done
echo "$1"
"#;

/// Sends signal `$1` to the node's process and prints its pid (or why not, exiting 1).
const SIGNAL_SCRIPT: &str = r#"kill -s "$sig" "$1" || { echo "kill -s $sig $1 failed"; exit 1; }
echo "$1"
"#;

/// The command, run in the files container, that stops the node's process: SIGTERM,
/// then SIGKILL after `deadline`. It returns once the process is gone.
pub fn stop_command(deadline: Duration) -> Vec<String> {
    let tenths = deadline.as_millis() / 100;
    vec![
        "/bin/sh".into(),
        "-c".into(),
        format!("limit=$1\n{NODE_PIDS}{FIND_NODE}{STOP_SCRIPT}"),
        "stop-node".into(),
        tenths.to_string(),
    ]
}

/// The command, run in the files container, that kills the node's process (SIGKILL)
/// and holds the one the kubelet starts next frozen (SIGSTOP) as soon as it appears,
/// waiting at most `within` for it; it prints what [`stopped_in`] reads.
pub fn kill_hold_command(within: Duration) -> Vec<String> {
    hold_command("KILL", within, within)
}

/// [`kill_hold_command`] for a clean stop: SIGTERM, SIGKILL after `deadline`, and the
/// next process held frozen, waited for at most `within` after the deadline.
pub fn stop_hold_command(deadline: Duration, within: Duration) -> Vec<String> {
    hold_command("TERM", deadline, deadline + within)
}

fn hold_command(signal: &str, escalate: Duration, within: Duration) -> Vec<String> {
    let looks = |d: Duration| (d.as_millis() / 50).to_string();
    vec![
        "/bin/sh".into(),
        "-c".into(),
        format!("sig=$1 escalate=$2 limit=$3\n{NODE_PIDS}{FIND_NODE}{HOLD_SCRIPT}"),
        "hold-node".into(),
        signal.into(),
        looks(escalate),
        looks(within),
    ]
}

/// How long the old process took to be gone after its signal, from what a hold
/// command printed (`<new pid> <uptime at the signal> <uptime when gone>`).
pub fn stopped_in(printed: &[u8]) -> Option<Duration> {
    let text = String::from_utf8_lossy(printed);
    let mut fields = text.split_whitespace().skip(1).map(str::parse::<f64>);
    let (Some(Ok(asked)), Some(Ok(gone))) = (fields.next(), fields.next()) else {
        return None;
    };
    let ms = ((gone - asked) * 1000.0).round();
    (ms >= 0.0).then(|| Duration::from_millis(ms as u64))
}

/// A signal [`signal_command`] sends to the node's process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// A pause: the process is frozen, its sockets stay open.
    Stop,
    /// The end of a pause.
    Cont,
}

impl Signal {
    fn name(self) -> &'static str {
        match self {
            Signal::Stop => "STOP",
            Signal::Cont => "CONT",
        }
    }
}

/// The command, run in the files container, that sends `signal` to the node's
/// process (found as [`stop_command`] finds it) and returns at once.
pub fn signal_command(signal: Signal) -> Vec<String> {
    vec![
        "/bin/sh".into(),
        "-c".into(),
        format!("sig=$1\n{NODE_PIDS}{FIND_NODE}{SIGNAL_SCRIPT}"),
        "signal-node".into(),
        signal.name().into(),
    ]
}

/// How long the kubelet may take to start the node's container again once its
/// process is gone (the first restart is at once; later ones back off, 10 s first).
pub const STARTED_AGAIN_WITHIN: Duration = Duration::from_secs(60);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stop_command_gives_the_deadline_in_tenths_to_a_shell() {
        let cmd = stop_command(Duration::from_secs(90));
        assert_eq!(cmd[..2], ["/bin/sh".to_string(), "-c".to_string()]);
        assert_eq!(cmd[4], "900");
        assert!(cmd[2].contains("kill -s TERM") && cmd[2].contains("kill -s KILL"));
        assert!(cmd[2].starts_with("limit=$1\n") && cmd[2].contains("not one node process"));
    }

    #[test]
    fn the_signal_command_names_its_signal_and_finds_the_node_first() {
        for (signal, name) in [(Signal::Stop, "STOP"), (Signal::Cont, "CONT")] {
            let cmd = signal_command(signal);
            assert_eq!(cmd[..2], ["/bin/sh".to_string(), "-c".to_string()]);
            assert_eq!(cmd[4], name);
            let script = &cmd[2];
            assert!(script.starts_with("sig=$1\n"));
            let find = script.find("not one node process").expect("finds the node");
            let kill = script.find("kill -s \"$sig\" \"$1\"").expect("signals it");
            assert!(find < kill, "the pid is found before the signal: {script}");
        }
    }

    #[test]
    fn the_kill_holds_the_next_process_frozen() {
        let cmd = kill_hold_command(Duration::from_secs(60));
        assert_eq!(cmd[4..], ["KILL", "1200", "1200"], "looks 0.05 s apart");
        let script = &cmd[2];
        let kill = script.find("kill -s \"$sig\" \"$old\"").expect("signals");
        let stop = script
            .find("kill -s STOP \"$new\"")
            .expect("freezes the next one");
        assert!(kill < stop, "{script}");
    }

    #[test]
    fn a_clean_stop_escalates_at_its_deadline_and_waits_beyond_it() {
        let cmd = stop_hold_command(Duration::from_secs(90), Duration::from_secs(60));
        assert_eq!(cmd[4..], ["TERM", "1800", "3000"]);
        assert!(
            cmd[2].contains("[ \"$i\" -eq \"$escalate\" ]"),
            "{}",
            cmd[2]
        );
    }

    #[test]
    fn the_stop_time_is_read_from_what_the_hold_printed() {
        let ms = |b: &[u8]| stopped_in(b).map(|d| d.as_millis());
        assert_eq!(ms(b"812 5021.33 5023.08\n"), Some(1750));
        assert_eq!(ms(b"812 5021.33 5021.33"), Some(0));
        assert_eq!(ms(b"no new process after the TERM"), None);
        assert_eq!(ms(b"812 5021.33"), None);
        assert_eq!(ms(b"812 5021.33 5020.00"), None, "gone before asked");
    }

    /// The scripts run under a real shell: with a fake /proc they cannot be run here,
    /// but their syntax is checked (`sh -n`).
    #[test]
    fn the_scripts_are_valid_shell() {
        let scripts = [
            stop_command(Duration::from_secs(1)),
            signal_command(Signal::Stop),
            kill_hold_command(Duration::from_secs(1)),
            stop_hold_command(Duration::from_secs(1), Duration::from_secs(1)),
        ];
        for cmd in scripts {
            let out = std::process::Command::new("/bin/sh")
                .args(["-n", "-c", &cmd[2]])
                .output()
                .expect("sh runs");
            assert!(out.status.success(), "{}: {:?}", cmd[2], out);
        }
    }
}
