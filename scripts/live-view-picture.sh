#!/usr/bin/env bash
# Draws a picture of the live view of a real run: starts lnbench-tui on a scenario in a
# detached tmux session (120x40), captures the pane with its colours after SECONDS of
# load, turns the capture into an HTML page (a <pre> with coloured spans) and takes a
# screenshot of it with headless Chromium.
#
#   scripts/live-view-picture.sh BINARY SCENARIO OUT.png [SECONDS]
#
# Needs tmux, python3 and chromium (scripts/setup.sh --dev installs them) and the nodes
# the scenario runs. The run is stopped with `q` after the capture, so it tears down
# as any run does; the session is killed on exit whatever happens.
set -euo pipefail

if [ $# -lt 3 ]; then
  echo "usage: $0 BINARY SCENARIO OUT.png [SECONDS]" >&2
  exit 2
fi
bin=$1 scenario=$2 out=$3 wait_s=${4:-25}
work=$(mktemp -d)
session="lnbench-picture-$$"
cleanup() {
  tmux kill-session -t "$session" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

tmux new-session -d -s "$session" -x 120 -y 40 \
  "$(printf '%q ' "$bin" "$scenario" --run-dir "$work/runs"); sleep 5"
# The load starts once the network is up: wait for the view's elapsed clock to pass
# SECONDS (setup is shown in the same pane before it).
deadline=$((SECONDS + 600))
while :; do
  screen=$(tmux capture-pane -p -t "$session" 2>/dev/null || true)
  elapsed=$( (grep -o 'elapsed [0-9:]*' <<<"$screen" || true) | head -1 | awk -F: '{print $2*60+$3}')
  if [ -n "${elapsed:-}" ] && [ "$elapsed" -ge "$wait_s" ]; then
    break
  fi
  if [ $SECONDS -ge $deadline ]; then
    echo "the load did not reach ${wait_s}s within 10 minutes; the pane shows:" >&2
    echo "$screen" >&2
    exit 3
  fi
  sleep 1
done
tmux capture-pane -e -p -t "$session" >"$work/pane.ansi"
tmux send-keys -t "$session" q
python3 "$(dirname "$0")/ansi-to-html.py" <"$work/pane.ansi" >"$work/pane.html"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --window-size=1000,540 --screenshot="$out" "file://$work/pane.html" 2>/dev/null
# Let the run wind down before the session (and with it the tool) goes.
for _ in $(seq 60); do
  tmux has-session -t "$session" 2>/dev/null || break
  sleep 1
done
echo "wrote $out"
