#!/usr/bin/env bash
# Builds the local Docker images lnbench-tui's docker runtime uses where no registry can
# be reached: lnbench/lnd:<version> (lnd + lncli) and lnbench/btcd:<version> (btcd +
# btcctl), each FROM scratch around the static binaries scripts/build-nodes.sh builds
# (built first if missing). Nothing is pulled. Idempotent: an image whose binaries did
# not change is rebuilt from the builder's cache in a second.
# Prints the image tags on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v docker >/dev/null || { echo "error: the docker CLI is needed (Debian: apt-get install docker.io)" >&2; exit 3; }
docker info >/dev/null 2>&1 || { echo "error: no Docker engine answers: start one (scripts/start-dockerd.sh) or use runtime: local" >&2; exit 3; }

bin=$(bash scripts/build-nodes.sh | tail -n 1)

# The version as the binary reports it, as an image tag: lnd 0.21.1-beta -> v0.21.1-beta,
# btcd 0.24.2-beta -> v0.24.2 (btcd's releases are tagged without the suffix).
lnd_version="v$("$bin/lnd" --version | sed -n 's/^lnd version \([^ ]*\).*/\1/p')"
btcd_version="v$("$bin/btcd" --version | sed -n 's/^btcd version \([^ ]*\).*/\1/p')"
btcd_version="${btcd_version%-beta}"

build() { # tag, entrypoint binary, other binary
  local tag="$1" main="$2" extra="$3" ctx
  ctx=$(mktemp -d)
  trap 'rm -rf "$ctx"' RETURN
  mkdir -p "$ctx/rootfs/bin" "$ctx/rootfs/data" "$ctx/rootfs/tmp"
  chmod 0777 "$ctx/rootfs/data"
  chmod 1777 "$ctx/rootfs/tmp"
  cp "$bin/$main" "$bin/$extra" "$ctx/rootfs/bin/"
  cat > "$ctx/Dockerfile" <<DOCKERFILE
FROM scratch
COPY rootfs/ /
ENV HOME=/data PATH=/bin TMPDIR=/tmp
WORKDIR /data
LABEL org.opencontainers.image.title="$main" org.opencontainers.image.version="${tag##*:}" lnbench.image="1"
ENTRYPOINT ["/bin/$main"]
DOCKERFILE
  echo "building $tag ..." >&2
  # The classic builder needs nothing from a registry for FROM scratch (no buildx
  # needed); its deprecation notice is shown only when the build fails.
  if ! DOCKER_BUILDKIT=0 docker build --quiet --tag "$tag" "$ctx" >"$ctx/build.log" 2>&1; then
    cat "$ctx/build.log" >&2
    echo "error: building $tag failed" >&2
    exit 3
  fi
}

build "lnbench/lnd:$lnd_version" lnd lncli
build "lnbench/btcd:$btcd_version" btcd btcctl
echo "lnbench/lnd:$lnd_version lnbench/btcd:$btcd_version"
