#!/usr/bin/env bash
# Builds the lnbench-tui container image from the release binary built here
# (Dockerfile.package) and checks that it runs.
#
#   scripts/build-tool-image.sh [TAG]        (default tag: lnbench-tui:dev)
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
    trap 'rm -rf "$root"' EXIT
    echo "making $base with debootstrap (about a minute)..." >&2
    debootstrap --variant=minbase bookworm "$root/rootfs" >"$root/debootstrap.log" 2>&1 || {
      tail -n 20 "$root/debootstrap.log" >&2
      exit 3
    }
    rm -rf "$root/rootfs/var/cache/apt/archives"/*.deb "$root/rootfs/var/lib/apt/lists"/*
    tar -C "$root/rootfs" -c . | docker import - "$base" >/dev/null
  fi
fi

echo "building the release binary..." >&2
cargo build --release --locked --bin lnbench-tui
echo "building $tag from $base..." >&2
# The legacy builder never pulls a base image that is present locally.
DOCKER_BUILDKIT=0 docker build --quiet -f Dockerfile.package --build-arg "BASE=$base" \
  -t "$tag" . >/dev/null
# The image must run: print the help.
docker run --rm "$tag" --help >/dev/null
echo "$tag"
