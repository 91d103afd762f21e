#!/usr/bin/env bash
# Builds the lnbench-tui container image from the release binary built here
# (Dockerfile.package) and checks that it runs.
#
#   scripts/build-tool-image.sh [TAG]        (default tag: lnbench-tui:dev)
#   LNBENCH_BIN=PATH scripts/build-tool-image.sh [TAG]   packages a binary built already
#
# This is the path for machines without a registry: the Dockerfile's default
# `docker build .` compiles in a Rust builder image it must pull; this script pulls
# nothing it cannot make. Its base is BASE (default
# debian:bookworm-slim) when that image is present or can be pulled; on a machine that
# cannot reach a registry, set LNBENCH_LOCAL_BASE=1 (CI does) and a minimal Debian
# bookworm base is made locally with debootstrap and `docker import`, tagged
# lnbench/debian-base:bookworm and reused by later runs.
set -euo pipefail
cd "$(dirname "$0")/.."
root=""
context=""
trap 'rm -rf ${root:+"$root"} ${context:+"$context"}' EXIT
tag=${1:-lnbench-tui:dev}
base=${BASE:-debian:bookworm-slim}

docker info >/dev/null 2>&1 || {
  echo "error: no Docker engine answers; start one (scripts/start-dockerd.sh as root)" >&2
  exit 3
}

if [ "${LNBENCH_LOCAL_BASE:-0}" = 1 ]; then
  base=lnbench/debian-base:bookworm
  if ! docker image inspect "$base" >/dev/null 2>&1; then
    command -v debootstrap >/dev/null || {
      echo "error: debootstrap is needed to make a base image (apt-get install debootstrap)" >&2
      exit 3
    }
    root=$(mktemp -d)
    echo "making $base with debootstrap (about a minute)..." >&2
    debootstrap --variant=minbase bookworm "$root/rootfs" >"$root/debootstrap.log" 2>&1 || {
      tail -n 20 "$root/debootstrap.log" >&2
      exit 3
    }
    rm -rf "$root/rootfs/var/cache/apt/archives"/*.deb "$root/rootfs/var/lib/apt/lists"/*
    tar -C "$root/rootfs" -c . | docker import - "$base" >/dev/null
  fi
fi

# The image packages LNBENCH_BIN when it is given (a binary built already: CI packages
# the one its tests ran, rather than compile a release build for this check alone),
# else the release binary built here. Either is laid where Dockerfile.package copies it
# from, in a context of its own that holds nothing else.
bin=${LNBENCH_BIN:-}
if [ -z "$bin" ]; then
  echo "building the release binary..." >&2
  cargo build --release --locked --bin lnbench-tui
  bin=target/release/lnbench-tui
fi
[ -x "$bin" ] || { echo "error: $bin is not an executable (LNBENCH_BIN)" >&2; exit 2; }
context=$(mktemp -d)
mkdir -p "$context/target/release"
cp "$bin" "$context/target/release/lnbench-tui"
echo "building $tag from $base with $bin..." >&2
# The legacy builder never pulls a base image that is present locally.
DOCKER_BUILDKIT=0 docker build --quiet -f Dockerfile.package --build-arg "BASE=$base" \
  -t "$tag" "$context" >/dev/null
# The image must run: print the help.
docker run --rm "$tag" --help >/dev/null
echo "$tag"
