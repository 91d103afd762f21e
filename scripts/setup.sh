#!/usr/bin/env bash
# Installs what lnbench-tui needs on a Debian machine and builds the node binaries.
# Idempotent: run it before the first run and after pulling changes.
# Without --dev it installs and builds only what the README's quick start runs (protoc;
# lnd and btcd with Go); --dev builds every node binary and what the tests use. It says
# which Debian packages it will install and the disk it takes before it starts.
#  - protoc (Debian's protobuf-compiler): the LND gRPC client crate generates code at build time;
#  - lnd, lncli, btcd, btcctl built with Go into the cache (scripts/build-nodes.sh), and
#    bitcoind + bitcoin-cli when a Bitcoin Core source tree is given (BITCOIN_SRC) or
#    can be cloned (with cmake, ninja and the libraries it needs from Debian);
#  - Core Lightning (lightningd, lightning-cli, the cln-grpc plugin) the same way when its
#    source tree is given (CLN_SRC) or can be cloned: its build tools and libraries from
#    Debian, and Python's mako (its wire code is generated at build time);
#  - Eclair the same way when its source tree is given (ECLAIR_SRC) or can be cloned: Maven
#    comes with the tree (./mvnw) and fetches its dependencies; unzip from Debian; a JDK >= 21,
#    which Debian bookworm does not package (only OpenJDK 17): install one yourself and set
#    JAVA_HOME (the script stops with that message when none is found);
#  - with --dev, PostgreSQL's server binaries (Debian's postgresql): LND on --db.backend=postgres gets a
#    server the local runtime starts, and scripts/build-images.sh makes the docker
#    runtime's lnbench/postgres image from it (lnd-db-backends.yaml);
#  - with --dev, the etcd server (Debian's etcd-server): LND on --db.backend=etcd gets a server (or a
#    cluster) the local runtime starts, and the lnbench/etcd image is made from it.
#  - with --dev, what the tests need besides: cargo-nextest (the test runner), tmux (the live view's end-to-end test),
#    chromium (the HTML report opened in a headless browser), perf (linux-perf: the
#    profiling tests), the reference HdrHistogram
#    jar (latency.hlog read by its HistogramLogProcessor), fetched with Maven into the cache,
#    and a Docker engine (Debian's docker.io, started by scripts/start-dockerd.sh) with the
#    local node images (scripts/build-images.sh) for the docker runtime's end-to-end tests;
#    and the local Kubernetes cluster (scripts/kube-cluster.sh up --no-build) when its
#    binaries are already built (scripts/build-kube.sh), for the kubernetes runtime's tests.
set -euo pipefail
cd "$(dirname "$0")/.."
dev=false
[ "${1:-}" = "--dev" ] && dev=true

need_apt=()
command -v protoc >/dev/null || need_apt+=(protobuf-compiler)
command -v pgrep >/dev/null || need_apt+=(procps)
# The quick start runs lnd (without its PostgreSQL and etcd backends) and btcd, both
# built with Go: protoc above is all it installs. The database servers are for the
# tests (--dev); Bitcoin Core's and Core Lightning's build tools for a tree to build
# (BITCOIN_SRC, CLN_SRC, or LNBENCH_CLONE=1 to clone them).
natives=false
if $dev || [ -n "${BITCOIN_SRC:-}${CLN_SRC:-}" ] || [ "${LNBENCH_CLONE:-}" = 1 ]; then
  natives=true
fi
if $dev; then
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || need_apt+=(postgresql)
  command -v etcd >/dev/null || need_apt+=(etcd-server)
fi
if $natives; then
  # Bitcoin Core (chain: bitcoind) builds from a source tree (scripts/build-nodes.sh):
  # its build tools, and the libraries bitcoind loads (ZMQ, SQLite for its wallet).
  for pkg in cmake ninja-build pkg-config libboost-dev libevent-dev libsqlite3-dev libzmq3-dev; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
  done
  # Core Lightning (CLN_SRC, scripts/build-nodes.sh): autotools, the libraries lightningd
  # links (SQLite, zlib, libsodium, and libpq for its PostgreSQL wallet: configure leaves
  # PostgreSQL out without it), jq and lowdown (man pages), and Python 3 with mako.
  # Debian's own Python gets Debian's mako; another python3 first on the PATH gets it
  # from pip below.
  for pkg in build-essential autoconf automake libtool pkg-config libsqlite3-dev zlib1g-dev \
             libsodium-dev libpq-dev jq gettext lowdown python3; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
  done
  if ! python3 -c 'import mako' 2>/dev/null && [ "$(command -v python3 || echo /usr/bin/python3)" = /usr/bin/python3 ]; then
    need_apt+=(python3-mako)
  fi
fi
# Eclair (ECLAIR_SRC or LNBENCH_CLONE=1, scripts/build-nodes.sh): unzip, and a JDK >= 21.
if [ -n "${ECLAIR_SRC:-}" ] || [ "${LNBENCH_CLONE:-}" = 1 ]; then
  command -v unzip >/dev/null || need_apt+=(unzip)
  jdk_ok=false
  for j in "${JAVA_HOME:-/nonexistent}" /usr/lib/jvm/*; do
    [ -x "$j/bin/javac" ] || continue
    major=$("$j/bin/java" -version 2>&1 | sed -n '1s/.*version "\([0-9]*\).*/\1/p')
    [ "${major:-0}" -ge 21 ] && jdk_ok=true
  done
  $jdk_ok || { echo "error: building Eclair needs a JDK >= 21, and Debian bookworm packages only OpenJDK 17: install one (e.g. Temurin 21 or 25; Debian trixie's openjdk-21-jdk-headless) and set JAVA_HOME to it, or leave ECLAIR_SRC unset to skip Eclair" >&2; exit 3; }
fi
if $dev; then
  command -v tmux >/dev/null || need_apt+=(tmux)
  # zsh and fish: their completion scripts are driven by tests/cli.rs.
  command -v zsh >/dev/null || need_apt+=(zsh)
  command -v fish >/dev/null || need_apt+=(fish)
  command -v chromium >/dev/null || need_apt+=(chromium)
  # perf: the profiling tests (--profile's flame graphs of native nodes).
  command -v perf >/dev/null || need_apt+=(linux-perf)
  command -v java >/dev/null || need_apt+=(default-jre-headless)
  command -v mvn >/dev/null || need_apt+=(maven)
  command -v dockerd >/dev/null || need_apt+=(docker.io)
  # compose/alice-pays-bob.yml read by Compose itself (tests/compose.rs), where the
  # Compose v2 plugin is missing: Debian's docker-compose 1.x.
  docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null || need_apt+=(docker-compose)
  # lnbench-tui's own image (Dockerfile) gets a locally made Debian base where no
  # registry answers (scripts/build-tool-image.sh).
  command -v debootstrap >/dev/null || need_apt+=(debootstrap)
fi
# What this will do, before it starts: the packages, and the disk it takes.
free_gb=$(df -Pk "${LNBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}}" 2>/dev/null | awk 'NR == 2 { print int($4 / 1048576) }')
if $dev; then
  echo "setup --dev: every node binary, the test runner, Docker and the node images; the tests' build takes about 10 GB of disk (${free_gb:-?} GB free)" >&2
else
  echo "setup: lnd and btcd built with Go into the cache, lnbench-tui's crates fetched; the quick start takes about 5 GB of disk with its build (${free_gb:-?} GB free)" >&2
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "Debian packages to install: ${need_apt[*]}" >&2
else
  echo "Debian packages: none needed" >&2
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "error: please install: ${need_apt[*]} (e.g. sudo apt-get install ${need_apt[*]})" >&2
    exit 3
  fi
  echo "installing ${need_apt[*]}..." >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if $natives && ! python3 -c 'import mako' 2>/dev/null; then
  echo "installing Python's mako with pip..." >&2
  python3 -m pip install --quiet mako
fi

if $dev; then
  jars="${LNBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lnbench-tui}/jars"
  if [ ! -f "$jars/HdrHistogram.jar" ]; then
    echo "fetching the HdrHistogram jar..." >&2
    mvn -q -B dependency:copy -Dartifact=org.hdrhistogram:HdrHistogram:2.2.2 \
      -Dmdep.stripVersion=true -DoutputDirectory="$jars"
  fi
fi

command -v cargo >/dev/null || { echo "error: Rust (cargo) is needed: see rustup" >&2; exit 3; }
# The node build runs in the background and is waited for, so an interrupt reaches this
# script at once; however it ends (an error, Ctrl-C, SIGTERM), no build outlives it.
kill_tree() {
  local child
  for child in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}
nodes_pid=""
fetch_pid=""
trap '[ -z "$nodes_pid" ] || kill_tree "$nodes_pid"; [ -z "$fetch_pid" ] || kill_tree "$fetch_pid"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if ! $dev; then
  # The quick start builds only what its scenario runs: lnd (without its PostgreSQL and
  # etcd backends) and btcd. lnbench-tui's own release build is the README's next
  # command: run beside the node builds on two cores, both took longer than one after
  # the other (measured here: 749 s side by side, 308 s then 415 s in turn).
  export LNBENCH_QUICK=1
fi
started=$SECONDS
# lnbench-tui's crates download while Go compiles (the download waits on the network, the
# compile on the cores), so the README's next command starts compiling at once. A failed
# download is only reported here: that command downloads what is missing, or says why not.
cargo fetch --locked --quiet --target "$(rustc -vV | sed -n 's/^host: //p')" &
fetch_pid=$!
nodes_out=$(mktemp)
bash scripts/build-nodes.sh >"$nodes_out" &
nodes_pid=$!
wait "$nodes_pid" || { rc=$?; rm -f "$nodes_out"; exit "$rc"; }
nodes_pid=""
bin=$(tail -n 1 "$nodes_out")
rm -f "$nodes_out"
echo "node binaries: $bin ($((SECONDS - started)) s)" >&2
wait "$fetch_pid" || echo "warning: downloading lnbench-tui's crates failed; cargo retries when it builds" >&2
fetch_pid=""
if $dev; then
  bash scripts/start-dockerd.sh
  images=$(bash scripts/build-images.sh | tail -n 1)
  echo "node images: $images" >&2
fi
if $dev; then
  # The test runner of the README's test command (.config/nextest.toml says why), built
  # from its crate once (a few minutes on two cores), at the version the project was
  # checked with.
  nextest_version=0.9.151
  if ! cargo nextest --version 2>/dev/null | grep -q "^cargo-nextest $nextest_version\b"; then
    echo "building cargo-nextest $nextest_version (the test runner)..." >&2
    cargo install --locked --quiet cargo-nextest --version "$nextest_version"
  fi
fi
if $dev; then
  # The local Kubernetes cluster of tests/e2e/kube.rs, when its binaries are built
  # (scripts/build-kube.sh, about 25 minutes: not done here); it imports the node
  # images above. Without the binaries it says so and those tests record "not run".
  bash scripts/kube-cluster.sh up --no-build
fi
