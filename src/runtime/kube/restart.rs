//! Restarting a node in its pod, with its data: the `files` container shares the pod's
//! process namespace, so a shell run in it stops the node's process (SIGTERM, SIGKILL
//! at the deadline); the kubelet then starts the `node` container again (the pods'
//! restartPolicy is Always) on the same `data` volume. Node images carry no shell, so
//! the signal cannot come from the node's own container.

use std::time::Duration;

/// Stops the node's process and prints its pid once it is gone (or why not, exiting
/// 1); `$1` is the deadline in tenths of a second. The node's process is the one whose
/// parent is outside the pod's namespace (ppid 0) that is neither the pause process
/// (pid 1), nor this shell, nor the files container's `sleep`. Exactly one must match.
const STOP_SCRIPT: &str = r#"limit=$1
found=
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  case $p in 1|$$) continue ;; esac
  read -r stat < "$d/stat" || continue
  set -- ${stat##*') '}
  [ "$2" = 0 ] || continue
  read -r comm < "$d/comm" || continue
  [ "$comm" = sleep ] && continue
  found="$found $p"
done
set -- $found
[ $# -eq 1 ] || { echo "not one node process, pids:$found"; exit 1; }
kill -s TERM "$1" || { echo "kill -s TERM $1 failed"; exit 1; }
i=0
while [ -d "/proc/$1" ]; do
  [ "$i" -eq "$limit" ] && kill -s KILL "$1"
  sleep 0.1
  i=$((i + 1))
done
echo "$1"
"#;

/// The command, run in the files container, that stops the node's process: SIGTERM,
/// then SIGKILL after `deadline`. It returns once the process is gone.
pub fn stop_command(deadline: Duration) -> Vec<String> {
    let tenths = deadline.as_millis() / 100;
    vec![
        "/bin/sh".into(),
        "-c".into(),
        STOP_SCRIPT.into(),
        "stop-node".into(),
        tenths.to_string(),
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
    }
}
