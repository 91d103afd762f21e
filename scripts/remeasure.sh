#!/usr/bin/env bash
# Re-measures the figures of docs/scenarios pages and rewrites them in place.
#
#   scripts/remeasure.sh                      every page with a remeasure block
#   scripts/remeasure.sh docs/scenarios/x.md  these pages only
#   scripts/remeasure.sh --render DIR ARGS    print the block for a finished run's
#                                             report DIR (no run; for tests)
#
# A page says what to run between two markers; everything between them is rewritten:
#
#   <!-- remeasure: scenarios/alice-pays-bob.yaml --payments 300 --repeat 5 -->
#   (written by this script)
#   <!-- /remeasure -->
#
# ARGS are lnbench-tui's own (a scenario and flags) and must repeat the load
# (`--repeat N`, N >= 2): the block is the spread table of the run's sweep.md (median,
# min – max, sd and CV of each figure, the outside load of each repeat) with the date,
# the tool's version, the machine (CPUs, model, memory, kernel) and its load average
# before and after. A run the outside load disturbed says so in bold. Measure on a
# quiet machine: no build, test or other run at the same time (docs/reports.md).
#
# The release binary is built first (cargo build --release) unless LNBENCH_BIN names
# one. Reports are kept under ${REMEASURE_OUT:-target/remeasure}/<page>/<n>/.
set -euo pipefail
cd "$(dirname "$0")/.."

begin='<!-- remeasure: '
end='<!-- /remeasure -->'

machine() {
  local cpus model mem
  cpus=$(nproc)
  model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
  mem=$(awk '/^MemTotal:/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
  echo "${cpus} CPUs (${model:-unknown model}), ${mem}, Linux $(uname -r)"
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# The checked-out commit, with "+ uncommitted changes" when the tree differs from it
# (the binary measured may not be that commit's).
commit_name() {
  local head
  head=$(git rev-parse --short HEAD 2>/dev/null) || { echo unknown; return; }
  if git diff --quiet HEAD -- 2>/dev/null; then echo "$head"; else echo "$head + uncommitted changes"; fi
}

# The block's text for a finished run: $1 report dir, $2 the args, $3 load before,
# $4 load after, $5 the run's exit code.
render() {
  local dir=$1 args=$2 before=$3 after=$4 status=$5 spread
  if [ ! -f "$dir/sweep.md" ]; then
    echo "error: $dir/sweep.md is missing: the args must repeat the load (--repeat N, N >= 2)" >&2
    return 2
  fi
  spread=$(awk '/^### Spread across repeats/ { on = 1; next } on && /^sd: / { print; exit } on { print }' "$dir/sweep.md")
  if [ -z "$spread" ]; then
    echo "error: $dir/sweep.md has no spread across repeats: add --repeat N (N >= 2)" >&2
    return 2
  fi
  echo "Measured by \`scripts/remeasure.sh\` on $(date -u +%Y-%m-%d): \`lnbench-tui $args\`"
  echo "(release build, $("$bin" --version), commit $(commit_name))."
  echo "Machine: $(machine); load average"
  echo "before ${before}, after ${after} (1, 5 and 15 minutes)."
  if [ "$status" -ne 0 ]; then
    echo
    echo "The run exited ${status} (a threshold failed, a point was skipped or the run failed): see its sweep.md."
  fi
  echo
  echo "$spread" | sed '/./,$!d'
  if echo "$spread" | grep -q ' disturbed'; then
    echo
    echo "**Disturbed**: load from outside the run passed 10 % of a core (or steal 2 %) in the"
    echo "repeats the table counts; their figures are not to be quoted."
    if grep -qs '"runtime": "docker' "$dir"/*/report.json; then
      echo "On the docker runtime the engine's work counts as the run's (dockerd and containerd"
      echo "whole, the run's shims and docker-proxy processes): the outside load there is other"
      echo "work on the machine, less any the engine did for other containers."
    fi
  fi
}

# Rewrites one page: each block between the markers, in order.
remeasure_page() {
  local page=$1 name n=0 line args dir before after status
  name=$(basename "$page" .md)
  tmp=$(mktemp)
  trap 'rm -f "$tmp"' EXIT
  while IFS= read -r line || [ -n "$line" ]; do
    if [[ "$line" == "$begin"* ]]; then
      n=$((n + 1))
      args=${line#"$begin"}
      args=${args%" -->"}
      dir="$out_root/$name/$n"
      if [ -z "${KUBECONFIG:-}" ] && grep -qs '^runtime: kubernetes' "${args%% *}"; then
        # No cluster named: keep the block as it is rather than write a failed run.
        echo "== $page block $n skipped: ${args%% *} runs on kubernetes and KUBECONFIG is not set" >&2
        echo "   (export KUBECONFIG=\$(scripts/kube-cluster.sh kubeconfig) first)" >&2
        echo "$line" >>"$tmp"
        while IFS= read -r line; do
          echo "$line" >>"$tmp"
          [ "$line" != "$end" ] || break
        done
        continue
      fi
      rm -rf "$dir"
      mkdir -p "$(dirname "$dir")"
      echo "== $page block $n: lnbench-tui $args" >&2
      before=$(loadavg)
      status=0
      # shellcheck disable=SC2086 # the args are words, as the page writes them
      "$bin" $args --report "$dir" </dev/null >"$dir.log" 2>&1 || status=$?
      after=$(loadavg)
      echo "   exit ${status}; log: $dir.log" >&2
      echo "$line" >>"$tmp"
      render "$dir" "$args" "$before" "$after" "$status" >>"$tmp"
      echo "$end" >>"$tmp"
      # Skip the old block.
      while IFS= read -r line && [ "$line" != "$end" ]; do :; done
    else
      echo "$line" >>"$tmp"
    fi
  done <"$page"
  mv "$tmp" "$page"
  echo "$page: $n block(s) rewritten" >&2
}

if [ "${1:-}" = "--render" ]; then
  [ $# -eq 3 ] || { echo "usage: $0 --render REPORT_DIR 'ARGS'" >&2; exit 2; }
  bin=${LNBENCH_BIN:-lnbench-tui}
  render "$2" "$3" "$(loadavg)" "$(loadavg)" 0
  exit
fi

if [ -n "${LNBENCH_BIN:-}" ]; then
  bin=$LNBENCH_BIN
else
  cargo build --release --locked --quiet
  bin="${CARGO_TARGET_DIR:-target}/release/lnbench-tui"
fi
out_root=${REMEASURE_OUT:-target/remeasure}

if [ $# -gt 0 ]; then
  pages=("$@")
else
  mapfile -t pages < <(grep -l "^$begin" docs/scenarios/*.md)
fi
[ ${#pages[@]} -gt 0 ] || { echo "error: no page has a '$begin' block" >&2; exit 2; }

echo "load average now: $(loadavg) on $(nproc) CPUs; measure on a quiet machine" >&2
for page in "${pages[@]}"; do
  [ -f "$page" ] || { echo "error: $page: no such page" >&2; exit 2; }
  remeasure_page "$page"
done
