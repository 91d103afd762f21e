#!/usr/bin/env bash
# Makes sure a Docker engine answers, for lnbench-tui's docker runtime and its tests.
# Idempotent: if `docker info` works, does nothing. Otherwise starts dockerd in the
# background (as root) with its log in /var/log/lnbench-dockerd.log and waits until it
# answers, for at most DOCKERD_WAIT seconds (default 60).
set -euo pipefail

command -v docker >/dev/null || { echo "error: the docker CLI is missing (Debian: apt-get install docker.io)" >&2; exit 3; }
if docker info >/dev/null 2>&1; then
  exit 0
fi
command -v dockerd >/dev/null || { echo "error: dockerd is missing (Debian: apt-get install docker.io)" >&2; exit 3; }
if [ "$(id -u)" -ne 0 ]; then
  echo "error: no Docker engine answers and starting dockerd needs root (e.g. sudo $0)" >&2
  exit 3
fi

log=/var/log/lnbench-dockerd.log
echo "starting dockerd (log: $log) ..." >&2
# setsid: the daemon outlives this script and the shell that ran it.
setsid dockerd >>"$log" 2>&1 < /dev/null &
deadline=$(( $(date +%s) + ${DOCKERD_WAIT:-60} ))
until docker info >/dev/null 2>&1; do
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "error: dockerd did not answer within ${DOCKERD_WAIT:-60} s; last lines of $log:" >&2
    tail -n 20 "$log" >&2 || true
    exit 3
  fi
  sleep 0.5
done
echo "dockerd is up" >&2
