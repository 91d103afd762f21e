#!/usr/bin/env bash
# Builds the local Docker images lnbench-tui's docker runtime uses where no registry can
# be reached: lnbench/lnd:<version> (lnd + lncli) and lnbench/btcd:<version> (btcd +
# btcctl) and lnbench/toxiproxy:<version> (the fault proxy), each FROM scratch around
# the static binaries scripts/build-nodes.sh builds (built first if missing); lnbench/bitcoind:<version> (bitcoind + bitcoin-cli and the
# shared libraries they load) when the build cache has Bitcoin Core (skipped with a
# message otherwise); lnbench/cln:<version> (lightningd with its plugins, lightning-cli,
# the cln-grpc plugin and bitcoin-cli) when it has Core Lightning and Bitcoin Core
# (likewise); lnbench/eclair:<version> (Eclair with a jlink'd Java runtime) when it has
# Eclair, and lnbench/ldk:<version> (ldk-server and ldk-server-cli) when it has ldk-server
# (likewise); lnbench/postgres:<major> from this machine's PostgreSQL server (Debian's
# postgresql package; skipped with a message when it is not installed); and
# lnbench/etcd:<version> from the etcd server (the build cache's, else Debian's
# etcd-server package; skipped with a message when there is none).
# lnbench/lnd:<release> too for every further LND release that $LND_VERSIONS, the
# scenario files given as arguments, or a shipped scenario (scenarios/*.yaml) names as
# `lnd@<release>` (scripts/build-nodes.sh builds each into the cache's versions/lnd/
# first; that image holds the pinned lncli beside the release's lnd).
# Nothing is pulled. Idempotent: an image whose files did not change is rebuilt from
# the builder's cache in a second.
# Prints the image tags on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v docker >/dev/null || { echo "error: the docker CLI is needed (Debian: apt-get install docker.io)" >&2; exit 3; }
docker info >/dev/null 2>&1 || { echo "error: no Docker engine answers: start one (scripts/start-dockerd.sh) or use runtime: local" >&2; exit 3; }

bin=$(bash scripts/build-nodes.sh scenarios/*.yaml "$@" | tail -n 1)
CACHE_DIR=$(dirname "$bin")

# The version as the binary reports it, as an image tag: lnd 0.21.1-beta -> v0.21.1-beta,
# btcd 0.24.2-beta -> v0.24.2 (btcd's releases are tagged without the suffix).
lnd_version="v$("$bin/lnd" --version | sed -n 's/^lnd version \([^ ]*\).*/\1/p')"
btcd_version="v$("$bin/btcd" --version | sed -n 's/^btcd version \([^ ]*\).*/\1/p')"
btcd_version="${btcd_version%-beta}"

# Builds the image $1 from the context directory $2 (with its Dockerfile). The classic
# builder needs nothing from a registry for FROM scratch (no buildx needed); its
# deprecation notice is shown only when the build fails.
docker_build() {
  local tag="$1" ctx="$2"
  if ! DOCKER_BUILDKIT=0 docker build --quiet --tag "$tag" "$ctx" >"$ctx/build.log" 2>&1; then
    cat "$ctx/build.log" >&2
    echo "error: building $tag failed" >&2
    exit 3
  fi
}

build() { # tag, entrypoint binary, other binary or ""[, directory of the entrypoint binary]
  local tag="$1" main="$2" extra="$3" from="${4:-$bin}" ctx
  ctx=$(mktemp -d)
  trap 'rm -rf "$ctx"' RETURN
  mkdir -p "$ctx/rootfs/bin" "$ctx/rootfs/data" "$ctx/rootfs/tmp"
  chmod 0777 "$ctx/rootfs/data"
  chmod 1777 "$ctx/rootfs/tmp"
  cp "$from/$main" ${extra:+"$bin/$extra"} "$ctx/rootfs/bin/"
  cat > "$ctx/Dockerfile" <<DOCKERFILE
FROM scratch
COPY rootfs/ /
ENV HOME=/data PATH=/bin TMPDIR=/tmp
WORKDIR /data
LABEL org.opencontainers.image.title="$main" org.opencontainers.image.version="${tag##*:}" lnbench.image="1"
ENTRYPOINT ["/bin/$main"]
DOCKERFILE
  echo "building $tag ..." >&2
  docker_build "$tag" "$ctx"
}

# lnbench/postgres:<major>: FROM scratch with the host's server binaries, the shared
# libraries they (and the server's modules) load, the loader, the share directory, and
# dash (initdb runs the server through /bin/sh), psql (the runtime sets the run's
# password with it, and loads a snapshot's dumps) and pg_dump (snapshots). The cluster is made at build time (RUN, exec form, as the non-root
# postgres user PostgreSQL insists on), so a container is a fresh cluster that starts in
# a second with no entrypoint script. Only the unix socket inside the container trusts
# (the runtime's createdb and psql, through docker exec); every TCP client needs the
# password the runtime sets for the run (scram-sha-256); no port is published.
build_postgres() {
  local initdb pgbin major ctx root f
  initdb=$(ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$initdb" ]; then
    echo "skipping lnbench/postgres: PostgreSQL's server is not installed (Debian: apt-get install postgresql; scripts/setup.sh does); scenarios with --db.backend=postgres cannot run on docker without it" >&2
    return 0
  fi
  pgbin=$(dirname "$initdb")
  major=$(basename "$(dirname "$pgbin")")
  local tag="lnbench/postgres:$major"
  ctx=$(mktemp -d)
  trap 'rm -rf "$ctx"' RETURN
  root="$ctx/rootfs"
  mkdir -p "$root$pgbin" "$root/usr/lib/postgresql/$major/lib" "$root/usr/share/postgresql" \
    "$root/bin" "$root/etc/postgresql" "$root/data" "$root/tmp"
  chmod 0777 "$root/data"
  chmod 1777 "$root/tmp"
  cp "$pgbin/postgres" "$pgbin/initdb" "$pgbin/createdb" "$pgbin/psql" "$pgbin/pg_dump" "$root$pgbin/"
  # The server's loadable modules (plpgsql, snowball, encoding conversions, ...), not
  # the LLVM JIT (large, and off unless asked for).
  for f in "/usr/lib/postgresql/$major/lib"/*.so; do
    case "$(basename "$f")" in llvmjit*) continue ;; esac
    cp "$f" "$root/usr/lib/postgresql/$major/lib/"
  done
  cp -r "/usr/share/postgresql/$major" "$root/usr/share/postgresql/"
  cp "$(readlink -f /bin/sh)" "$root/bin/sh"
  # The server's time zone (TZ=UTC below); Debian's server reads the system's zoneinfo.
  if [ -e /usr/share/zoneinfo/UTC ]; then
    mkdir -p "$root/usr/share/zoneinfo"
    cp -L /usr/share/zoneinfo/UTC /usr/share/zoneinfo/GMT "$root/usr/share/zoneinfo/"
  fi
  copy_libraries "$root"
  printf 'root:x:0:0:root:/root:/bin/sh\npostgres:x:999:999:PostgreSQL:/data:/bin/sh\n' > "$root/etc/passwd"
  printf 'root:x:0:\npostgres:x:999:\n' > "$root/etc/group"
  cat > "$root/etc/postgresql/pg_hba.conf" <<'HBA'
# lnbench/postgres: the unix socket (docker exec inside the container) without a
# password; every TCP client with the run's password only.
local all all           trust
host  all all 0.0.0.0/0 scram-sha-256
host  all all ::/0      scram-sha-256
HBA
  cat > "$ctx/Dockerfile" <<DOCKERFILE
FROM scratch
COPY rootfs/ /
ENV PATH=$pgbin:/bin HOME=/data TMPDIR=/tmp PGDATA=/data/pgdata LANG=C TZ=UTC
WORKDIR /data
USER postgres
RUN ["$pgbin/initdb", "--pgdata=/data/pgdata", "--username=lnbench", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"]
LABEL org.opencontainers.image.title="postgres" org.opencontainers.image.version="$major" lnbench.image="1"
EXPOSE 5432
ENTRYPOINT ["$pgbin/postgres", "-D", "/data/pgdata", "-c", "listen_addresses=*", "-c", "unix_socket_directories=/tmp", "-c", "hba_file=/etc/postgresql/pg_hba.conf", "-c", "password_encryption=scram-sha-256"]
DOCKERFILE
  echo "building $tag ..." >&2
  docker_build "$tag" "$ctx"
  built+=" $tag"
}

# Copies every shared library (and the loader) the files under $1 need into $1, at the
# path ldd names, so the loader's default search finds each without an ld.so.cache.
copy_libraries() {
  local root="$1"
  find "$root" -type f \( -perm -u+x -o -name '*.so' \) -print0 |
    xargs -0 -n 20 ldd 2>/dev/null |
    awk '$2 == "=>" && $3 ~ /^\// { print $3 } NF == 2 && $1 ~ /^\// { print $1 }' |
    sort -u | while read -r f; do
      # Libraries found inside the tree (a Java runtime's own, by its RPATH) are there.
      case "$f" in "$root"/*) continue ;; esac
      mkdir -p "$root$(dirname "$f")"
      cp -L "$f" "$root$f"
    done
}

# lnbench/bitcoind:<version>: bitcoind and bitcoin-cli from the build cache (built from a
# Bitcoin Core source tree: scripts/build-nodes.sh), with their shared libraries. The
# source commit the cache recorded goes in the label lnbench.source, for reports.
build_bitcoind() {
  local stamp version commit tag ctx root
  if [ ! -x "$bin/bitcoind" ] || [ ! -f "$bin/.bitcoind.version" ]; then
    echo "skipping lnbench/bitcoind: Bitcoin Core is not built (BITCOIN_SRC=<source tree> scripts/build-nodes.sh); scenarios with chain: bitcoind cannot run on docker without it" >&2
    return 0
  fi
  stamp=$(cat "$bin/.bitcoind.version")
  version=${stamp%% *}
  commit=${stamp#* }
  [ "$commit" = "$stamp" ] && commit=""
  tag="lnbench/bitcoind:$version"
  ctx=$(mktemp -d)
  trap 'rm -rf "$ctx"' RETURN
  root="$ctx/rootfs"
  mkdir -p "$root/bin" "$root/data" "$root/tmp"
  chmod 0777 "$root/data"
  chmod 1777 "$root/tmp"
  cp "$bin/bitcoind" "$bin/bitcoin-cli" "$root/bin/"
  copy_libraries "$root"
  cat > "$ctx/Dockerfile" <<DOCKERFILE
FROM scratch
COPY rootfs/ /
ENV HOME=/data PATH=/bin TMPDIR=/tmp
WORKDIR /data
LABEL org.opencontainers.image.title="bitcoind" org.opencontainers.image.version="$version" lnbench.source="$commit" lnbench.image="1"
ENTRYPOINT ["/bin/bitcoind"]
DOCKERFILE
  echo "building $tag ..." >&2
  docker_build "$tag" "$ctx"
  built+=" $tag"
}

# lnbench/cln:<version>: Core Lightning from the build cache (scripts/build-nodes.sh with
# CLN_SRC), laid out as installed under / (/bin/lightningd, /bin/lightning-cli, its
# subdaemons and built-in plugins under /libexec/c-lightning, where lightningd looks for
# them relative to itself), the cln-grpc plugin as /bin/cln-grpc (not built in: pass
# --plugin=/bin/cln-grpc --grpc-port=<port>), and /bin/bitcoin-cli from the cache, which
# the bcli plugin runs (found on the PATH); with their shared libraries. Nothing lightningd
# runs needs a shell. The source commit goes in the label lnbench.source.
build_cln() {
  local stamp version commit tag ctx root stage
  if [ ! -x "$bin/lightningd" ] || [ ! -x "$bin/cln-grpc" ] || [ ! -f "$bin/.lightningd.version" ]; then
    echo "skipping lnbench/cln: Core Lightning is not built (CLN_SRC=<source tree> scripts/build-nodes.sh); scenarios with CLN nodes cannot run on docker without it" >&2
    return 0
  fi
  if [ ! -x "$bin/bitcoin-cli" ]; then
    echo "skipping lnbench/cln: its bcli plugin runs bitcoin-cli, and Bitcoin Core is not built (BITCOIN_SRC=<source tree> scripts/build-nodes.sh)" >&2
    return 0
  fi
  stamp=$(cat "$bin/.lightningd.version")
  version=${stamp%% *}
  commit=${stamp#* }
  [ "$commit" = "$stamp" ] && commit=""
  tag="lnbench/cln:$version"
  # The installed tree $bin/lightningd links into: <stage>/bin/lightningd.
  stage=$(dirname "$(dirname "$(readlink -f "$bin/lightningd")")")
  [ -d "$stage/libexec/c-lightning/plugins" ] || { echo "error: no installed Core Lightning tree at $stage (rebuild: scripts/build-nodes.sh)" >&2; exit 3; }
  ctx=$(mktemp -d)
  trap 'rm -rf "$ctx"' RETURN
  root="$ctx/rootfs"
  mkdir -p "$root/bin" "$root/libexec" "$root/data" "$root/tmp"
  chmod 0777 "$root/data"
  chmod 1777 "$root/tmp"
  cp "$stage/bin/lightningd" "$stage/bin/lightning-cli" "$stage/bin/cln-grpc" "$root/bin/"
  cp -r "$stage/libexec/c-lightning" "$root/libexec/"
  cp "$bin/bitcoin-cli" "$root/bin/"
  copy_libraries "$root"
  cat > "$ctx/Dockerfile" <<DOCKERFILE
FROM scratch
COPY rootfs/ /
ENV HOME=/data PATH=/bin TMPDIR=/tmp
WORKDIR /data
LABEL org.opencontainers.image.title="lightningd" org.opencontainers.image.version="$version" lnbench.source="$commit" lnbench.image="1"
ENTRYPOINT ["/bin/lightningd"]
DOCKERFILE
  echo "building $tag ..." >&2
  docker_build "$tag" "$ctx"
  built+=" $tag"
}

# lnbench/ldk:<version>: ldk-server and ldk-server-cli from the build cache
# (LDK_SERVER_SRC=<tree> scripts/build-nodes.sh) with their shared libraries. ldk-server
# takes its config file as its one argument (the docker runtime uploads it into /data).
# The source commit goes in the label lnbench.source.
build_ldk() {
  local stamp version commit tag ctx root
  if [ ! -x "$bin/ldk-server" ] || [ ! -x "$bin/ldk-server-cli" ] || [ ! -f "$bin/.ldk-server.version" ]; then
    echo "skipping lnbench/ldk: ldk-server is not built (LDK_SERVER_SRC=<source tree> scripts/build-nodes.sh); scenarios with LDK nodes cannot run on docker without it" >&2
    return 0
  fi
  stamp=$(cat "$bin/.ldk-server.version")
  version=${stamp%% *}
  commit=${stamp#* }
  [ "$commit" = "$stamp" ] && commit=""
  tag="lnbench/ldk:$version"
  ctx=$(mktemp -d)
  trap 'rm -rf "$ctx"' RETURN
  root="$ctx/rootfs"
  mkdir -p "$root/bin" "$root/data" "$root/tmp"
  chmod 0777 "$root/data"
  chmod 1777 "$root/tmp"
  cp "$bin/ldk-server" "$bin/ldk-server-cli" "$root/bin/"
  copy_libraries "$root"
  cat > "$ctx/Dockerfile" <<DOCKERFILE
FROM scratch
COPY rootfs/ /
ENV HOME=/data PATH=/bin TMPDIR=/tmp
WORKDIR /data
LABEL org.opencontainers.image.title="ldk-server" org.opencontainers.image.version="$version" lnbench.source="$commit" lnbench.image="1"
ENTRYPOINT ["/bin/ldk-server"]
DOCKERFILE
  echo "building $tag ..." >&2
  docker_build "$tag" "$ctx"
  built+=" $tag"
}

# lnbench/eclair:<version>: Eclair from the build cache (scripts/build-nodes.sh with
# ECLAIR_SRC): a Java runtime linked with jlink from the JDK that built it (the Java SE
# modules and the JDK ones Eclair's libraries use) at /jre, its jars at /eclair/lib, and
# /bin/eclair-node, a sh script (dash) that execs the JVM with its arguments as JVM
# options (-Declair.datadir=/data, ...), as the local script does; with the shared
# libraries they load. The source commit goes in the label lnbench.source.
build_eclair() {
  local stamp version commit tag ctx root stage jdk
  if [ ! -x "$bin/eclair-node" ] || [ ! -f "$bin/.eclair-node.version" ] || [ ! -f "$bin/.eclair-node.jdk" ]; then
    echo "skipping lnbench/eclair: Eclair is not built (ECLAIR_SRC=<source tree> scripts/build-nodes.sh); scenarios with Eclair nodes cannot run on docker without it" >&2
    return 0
  fi
  stamp=$(cat "$bin/.eclair-node.version")
  version=${stamp%% *}
  commit=${stamp#* }
  [ "$commit" = "$stamp" ] && commit=""
  tag="lnbench/eclair:v$version"
  jdk=$(cat "$bin/.eclair-node.jdk")
  stage="$CACHE_DIR/eclair/$version-${commit:0:12}"
  [ -d "$stage/lib" ] || { echo "error: no installed Eclair at $stage (rebuild: scripts/build-nodes.sh)" >&2; exit 3; }
  [ -x "$jdk/bin/jlink" ] || { echo "error: the JDK Eclair was built with ($jdk) has no jlink" >&2; exit 3; }
  ctx=$(mktemp -d)
  trap 'rm -rf "$ctx"' RETURN
  root="$ctx/rootfs"
  mkdir -p "$root/bin" "$root/eclair" "$root/data" "$root/tmp"
  chmod 0777 "$root/data"
  chmod 1777 "$root/tmp"
  "$jdk/bin/jlink" --add-modules java.se,jdk.unsupported,jdk.management,jdk.zipfs,jdk.naming.dns,jdk.crypto.cryptoki \
    --strip-debug --no-man-pages --no-header-files --output "$root/jre" >"$ctx/jlink.log" 2>&1 \
    || { cat "$ctx/jlink.log" >&2; echo "error: jlink failed for lnbench/eclair" >&2; exit 3; }
  cp "$(readlink -f /bin/sh)" "$root/bin/sh"
  # Before the jars and the script are in: ldd fails on anything but ELF files.
  copy_libraries "$root"
  cp -r "$stage/lib" "$root/eclair/lib"
  cat > "$root/bin/eclair-node" <<SCRIPT
#!/bin/sh
# Eclair $version (source $commit). Runs Eclair in this process (exec), the arguments
# being JVM options such as -Declair.datadir=/data (its eclair.conf is read from there).
if [ "\${1:-}" = --version ]; then echo "eclair-node $version"; exit 0; fi
exec /jre/bin/java "\$@" -cp '/eclair/lib/*' fr.acinq.eclair.Boot
SCRIPT
  chmod 0755 "$root/bin/eclair-node"
  cat > "$ctx/Dockerfile" <<DOCKERFILE
FROM scratch
COPY rootfs/ /
ENV HOME=/data PATH=/bin TMPDIR=/tmp
WORKDIR /data
LABEL org.opencontainers.image.title="eclair-node" org.opencontainers.image.version="$version" lnbench.source="$commit" lnbench.image="1"
ENTRYPOINT ["/bin/eclair-node"]
DOCKERFILE
  echo "building $tag ..." >&2
  docker_build "$tag" "$ctx"
  built+=" $tag"
}

# lnbench/etcd:<version>: FROM scratch with the etcd server (the build cache's if
# scripts/build-nodes.sh built one, else the one on PATH) and the libraries it loads.
# Its data goes to /data/etcd in the container's writable layer; the docker runtime
# gives the command line (member names, cluster) and publishes no port.
build_etcd() {
  local etcd version tag ctx root
  etcd="$bin/etcd"
  [ -x "$etcd" ] || etcd=$(command -v etcd || true)
  if [ -z "$etcd" ]; then
    echo "skipping lnbench/etcd: no etcd server (Debian: apt-get install etcd-server; scripts/setup.sh does); scenarios with --db.backend=etcd cannot run on docker without it" >&2
    return 0
  fi
  version=$("$etcd" --version | sed -n 's/^etcd Version: *//p')
  tag="lnbench/etcd:$version"
  ctx=$(mktemp -d)
  trap 'rm -rf "$ctx"' RETURN
  root="$ctx/rootfs"
  mkdir -p "$root/bin" "$root/data" "$root/tmp"
  chmod 0777 "$root/data"
  chmod 1777 "$root/tmp"
  cp "$etcd" "$root/bin/etcd"
  copy_libraries "$root"
  cat > "$ctx/Dockerfile" <<DOCKERFILE
FROM scratch
COPY rootfs/ /
ENV HOME=/data PATH=/bin TMPDIR=/tmp
WORKDIR /data
LABEL org.opencontainers.image.title="etcd" org.opencontainers.image.version="$version" lnbench.image="1"
EXPOSE 2379 2380
ENTRYPOINT ["/bin/etcd"]
DOCKERFILE
  echo "building $tag ..." >&2
  docker_build "$tag" "$ctx"
  built+=" $tag"
}

build "lnbench/lnd:$lnd_version" lnd lncli
build "lnbench/btcd:$btcd_version" btcd btcctl
# The fault proxy (links: and link faults): Toxiproxy's server with its API on a unix
# socket, tagged with its release (the docker runtime names lnbench/toxiproxy:v2.5.0).
toxiproxy_version=$("$bin/toxiproxy-unix" -version | sed -n 's/^toxiproxy-unix version //p')
build "lnbench/toxiproxy:$toxiproxy_version" toxiproxy-unix ""
built="lnbench/lnd:$lnd_version lnbench/btcd:$btcd_version lnbench/toxiproxy:$toxiproxy_version"
# The further LND releases scripts/build-nodes.sh just built (the same list it takes).
lnd_releases=$( (printf '%s\n' ${LND_VERSIONS:-}; cat scenarios/*.yaml "$@" | grep -o 'lnd@v[0-9A-Za-z.+-]*' | sed 's/^lnd@//') | grep -v '^$' | grep -vxF "$lnd_version" | sort -u || true)
for v in $lnd_releases; do
  vdir="$CACHE_DIR/versions/lnd/$v"
  [ -x "$vdir/lnd" ] || { echo "error: no lnd $v in $vdir after scripts/build-nodes.sh" >&2; exit 3; }
  build "lnbench/lnd:$v" lnd lncli "$vdir"
  built+=" lnbench/lnd:$v"
done
build_bitcoind
build_cln
build_eclair
build_ldk
build_postgres
build_etcd
echo "$built"
