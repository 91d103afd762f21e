#!/usr/bin/env bash
# Builds the node binaries lnbench-tui runs locally: lnd + lncli (v0.21.1-beta) and
# btcd + btcctl and toxiproxy-unix (Toxiproxy v2.5.0), as static binaries (CGO_ENABLED=0), from
# the Go module proxy; and
# bitcoind + bitcoin-cli (Bitcoin Core, wallet and ZMQ compiled in) from a source tree:
#   BITCOIN_SRC=DIR          a Bitcoin Core source tree (a git work tree, or an exported one
#                            with BITCOIN_SRC_COMMIT=<upstream commit> naming where it came from)
#   LNBENCH_CLONE=1          without BITCOIN_SRC: clone the pinned release ($BITCOIN_TAG)
#                            from upstream and build it (a connected machine)
#   neither                  a cached build is kept; without one Bitcoin Core is skipped
#                            with a message (runs and tests that need it then say so).
# and Core Lightning (lightningd, lightning-cli, its built-in plugins, and the cln-grpc
# plugin) the same way from CLN_SRC / CLN_SRC_COMMIT, or a clone of $CLN_TAG with its
# submodules under LNBENCH_CLONE=1 (scripts/prepare-cln-source.sh exports such a tree
# from copies of the repositories). It installs into $CACHE/cln/<version>-<commit>/
# (lightningd finds its subdaemons and plugins relative to its own binary there);
# $BIN/lightningd, $BIN/lightning-cli and $BIN/cln-grpc link into it. cln-grpc is not a
# built-in plugin: start lightningd with --plugin=$BIN/cln-grpc --grpc-port=<port>.
# and Eclair (v0.13.0: newer tags need libraries Maven Central may not serve here) from
# ECLAIR_SRC / ECLAIR_SRC_COMMIT, or a clone of $ECLAIR_TAG under LNBENCH_CLONE=1, with
# Maven (the tree's own ./mvnw, which fetches Maven and the dependencies from Maven
# Central) and a JDK >= 21 ($JAVA_HOME, else the newest under /usr/lib/jvm). The
# unzipped eclair-node goes to $CACHE/eclair/<version>-<commit>/; $BIN/eclair-node is a
# small sh script that execs its JVM (so the process started is Java itself), taking
# JVM options (-Declair.datadir=<dir>, -Declair.<key>=<value>) as its arguments.
# and LDK's ldk-server + ldk-server-cli from LDK_SERVER_SRC / LDK_SERVER_SRC_COMMIT (a
# workspace whose dependencies all come from crates.io: commit ee1c96c, which has
# no keysend), or a clone of upstream at that commit under LNBENCH_CLONE=1.
# Arguments: scenario files whose `lnd@<version>` sweep values name LND releases to build
# besides the pinned one (also $LND_VERSIONS).
# LNBENCH_QUICK=1 (scripts/setup.sh without --dev) builds only what the quick start runs:
# lnd (without its PostgreSQL and etcd backends) and btcd; lncli, btcctl,
# toxiproxy-unix and the backends wait for a run without it.
# Idempotent: a binary already built for the pinned version (or source commit) is kept.
# Prints the directory that holds the binaries on its last line.
set -euo pipefail

LND_VERSION="${LND_VERSION:-v0.21.1-beta}"
BTCD_VERSION="${BTCD_VERSION:-v0.24.2}"
LND_TAGS="signrpc walletrpc chainrpc invoicesrpc routerrpc peersrpc kvdb_sqlite kvdb_postgres kvdb_etcd"
CACHE="${LNBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lnbench-tui}"
BIN="$CACHE/bin"
mkdir -p "$BIN"

quick=false
[ "${LNBENCH_QUICK:-}" = 1 ] && quick=true
command -v go >/dev/null || { echo "error: Go is needed to build lnd and btcd (install Go 1.23 or newer)" >&2; exit 3; }

export CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -trimpath"

# A stamp per binary records the version it was built from, so a version bump rebuilds.
fresh() { [ -x "$BIN/$1" ] && [ "$(cat "$BIN/.$1.version" 2>/dev/null)" = "$2" ]; }
stamp() { echo "$2" > "$BIN/.$1.version"; }

module_dir() {
  # Build inside the module's own tree so its go.mod (with its replace directives) applies.
  go mod download -json "$1@$2" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

# The quick start's lnd leaves out the PostgreSQL and etcd backends (a fifth of lnd's Go
# packages); lnbench-tui refuses a node that asks for one with that lnd (it reads the
# stamp below), and a build without LNBENCH_QUICK replaces it with the full one.
LND_QUICK_TAGS="signrpc walletrpc chainrpc invoicesrpc routerrpc peersrpc kvdb_sqlite"
# The tags lnd was built with are stamped apart (`.lnd.tags`), so adding one rebuilds it.
lnd_tags_fresh() {
  local have
  have=$(cat "$BIN/.lnd.tags" 2>/dev/null || true)
  [ "$have" = "$LND_TAGS" ] || { $quick && [ "$have" = "$LND_QUICK_TAGS" ]; }
}
lnd_build_tags=$LND_TAGS
if $quick; then lnd_build_tags=$LND_QUICK_TAGS; fi

if ! fresh lnd "$LND_VERSION" || ! lnd_tags_fresh; then
  echo "building lnd $LND_VERSION (a few minutes the first time)..." >&2
  dir=$(module_dir github.com/lightningnetwork/lnd "$LND_VERSION")
  # Built beside the cache and moved in, so a run using the cached lnd never sees half a file.
  (cd "$dir" && nice go build -tags="$lnd_build_tags" -ldflags "-s -w -X github.com/lightningnetwork/lnd/build.Commit=$LND_VERSION" -o "$BIN/.lnd.new" ./cmd/lnd)
  mv -f "$BIN/.lnd.new" "$BIN/lnd"
  stamp lnd "$LND_VERSION"; echo "$lnd_build_tags" > "$BIN/.lnd.tags"
fi
if ! $quick && ! fresh lncli "$LND_VERSION"; then
  echo "building lncli $LND_VERSION..." >&2
  dir=$(module_dir github.com/lightningnetwork/lnd "$LND_VERSION")
  (cd "$dir" && nice go build -tags="$LND_TAGS" -ldflags "-s -w" -o "$BIN/.lncli.new" ./cmd/lncli)
  mv -f "$BIN/.lncli.new" "$BIN/lncli"
  stamp lncli "$LND_VERSION"
fi

# Further LND releases, for a sweep that compares them (`implementation: [lnd@v0.20.0-beta,
# lnd]`): the versions in $LND_VERSIONS and those the scenario files given as arguments
# name as `lnd@<version>`, each into $CACHE/versions/lnd/<version>/lnd (stamped the same
# way). The local runtime runs a node whose scenario names such a version from there.
scenario_lnd_versions() {
  local f
  for f in "$@"; do
    [ -f "$f" ] || { echo "error: scenario file $f not found" >&2; exit 2; }
    grep -o 'lnd@v[0-9A-Za-z.+-]*' "$f" | sed 's/^lnd@//' || true
  done
}
extra_lnd=$(printf '%s\n' ${LND_VERSIONS:-} $(scenario_lnd_versions "$@") | grep -v '^$' | grep -vxF "$LND_VERSION" | sort -u || true)
for v in $extra_lnd; do
  vdir="$CACHE/versions/lnd/$v"
  if [ -x "$vdir/lnd" ] && [ "$(cat "$vdir/.lnd.version" 2>/dev/null)" = "$v" ] && [ "$(cat "$vdir/.lnd.tags" 2>/dev/null)" = "$LND_TAGS" ]; then
    continue
  fi
  echo "building lnd $v for a version comparison (a few minutes)..." >&2
  mkdir -p "$vdir"
  dir=$(module_dir github.com/lightningnetwork/lnd "$v")
  (cd "$dir" && nice go build -tags="$LND_TAGS" -ldflags "-s -w -X github.com/lightningnetwork/lnd/build.Commit=$v" -o "$vdir/.lnd.new" ./cmd/lnd)
  mv -f "$vdir/.lnd.new" "$vdir/lnd"
  echo "$v" > "$vdir/.lnd.version"; echo "$LND_TAGS" > "$vdir/.lnd.tags"
done

if ! fresh btcd "$BTCD_VERSION"; then
  echo "building btcd $BTCD_VERSION..." >&2
  dir=$(module_dir github.com/btcsuite/btcd "$BTCD_VERSION")
  (cd "$dir" && go build -ldflags "-s -w" -o "$BIN/btcd" .)
  stamp btcd "$BTCD_VERSION"
fi
if ! $quick && ! fresh btcctl "$BTCD_VERSION"; then
  dir=$(module_dir github.com/btcsuite/btcd "$BTCD_VERSION")
  (cd "$dir" && go build -ldflags "-s -w" -o "$BIN/btcctl" ./cmd/btcctl)
  stamp btcctl "$BTCD_VERSION"
fi

# Toxiproxy (the TCP fault proxy the scenario's `links:` and `faults:` drive), from the
# Go module proxy: installed as toxiproxy-unix, Toxiproxy's own API handlers served on a
# unix socket instead of a TCP port (scripts/toxiproxy-unix/, whose go.mod pins the
# version). The stamp names the version and a hash of that directory's files, so a
# change to either rebuilds it.
TOXIPROXY_SRC="$(cd "$(dirname "$0")" && pwd)/toxiproxy-unix"
TOXIPROXY_VERSION=$(sed -n 's|^[[:space:]]*github.com/Shopify/toxiproxy/v2 \(v[^ ]*\)$|\1|p' "$TOXIPROXY_SRC/go.mod")
toxiproxy_stamp="$TOXIPROXY_VERSION+$(cat "$TOXIPROXY_SRC/go.mod" "$TOXIPROXY_SRC/go.sum" "$TOXIPROXY_SRC/main.go" | sha256sum | cut -c1-12)"
if ! $quick && ! fresh toxiproxy-unix "$toxiproxy_stamp"; then
  echo "building toxiproxy-unix (Toxiproxy $TOXIPROXY_VERSION)..." >&2
  (cd "$TOXIPROXY_SRC" && nice go build -buildvcs=false -ldflags "-s -w -X github.com/Shopify/toxiproxy/v2.Version=$TOXIPROXY_VERSION" -o "$BIN/.toxiproxy-unix.new" .)
  mv -f "$BIN/.toxiproxy-unix.new" "$BIN/toxiproxy-unix"
  stamp toxiproxy-unix "$toxiproxy_stamp"
fi

# --- Bitcoin Core -------------------------------------------------------------------
BITCOIN_TAG="${BITCOIN_TAG:-v30.0}"
BITCOIN_REPO="${BITCOIN_REPO:-https://github.com/bitcoin/bitcoin}"
bitcoin_fresh() { [ -x "$BIN/bitcoind" ] && [ -x "$BIN/bitcoin-cli" ] && [ -f "$BIN/.bitcoind.version" ]; }

build_bitcoind() { # source dir, commit
  local src="$1" commit="$2" build version
  for dep in cmake ninja pkg-config; do
    command -v "$dep" >/dev/null || { echo "error: $dep is needed to build Bitcoin Core (Debian: cmake ninja-build pkg-config libboost-dev libevent-dev libsqlite3-dev libzmq3-dev)" >&2; return 3; }
  done
  build="$CACHE/build/bitcoind-${commit:0:12}"
  mkdir -p "$build"
  echo "building bitcoind and bitcoin-cli from $commit (about 20 minutes on 2 cores the first time)..." >&2
  nice cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_WALLET=ON -DWITH_ZMQ=ON \
    -DBUILD_TESTS=OFF -DBUILD_BENCH=OFF -DBUILD_GUI=OFF -DENABLE_IPC=OFF -DINSTALL_MAN=OFF \
    -DBUILD_TX=OFF -DBUILD_UTIL=OFF -DBUILD_WALLET_TOOL=OFF -DENABLE_EXTERNAL_SIGNER=OFF \
    -DBUILD_FUZZ_BINARY=OFF -DBUILD_KERNEL_LIB=OFF -DWITH_CCACHE=OFF >"$build/configure.log" 2>&1 \
    || { tail -n 30 "$build/configure.log" >&2; echo "error: configuring Bitcoin Core failed (log: $build/configure.log)" >&2; return 3; }
  nice ninja -C "$build" bitcoind bitcoin-cli >"$build/build.log" 2>&1 \
    || { tail -n 30 "$build/build.log" >&2; echo "error: building Bitcoin Core failed (log: $build/build.log)" >&2; return 3; }
  cp "$build/bin/bitcoind" "$build/bin/bitcoin-cli" "$BIN/"
  strip "$BIN/bitcoind" "$BIN/bitcoin-cli" 2>/dev/null || true
  version=$("$BIN/bitcoind" --version | sed -n '1s/.* version \(v[^ ]*\).*/\1/p')
  # Built outside a git work tree, it calls itself v31.99.0-unk: the commit says more.
  version=${version%-unk}
  # What the report records: the version the binary states and the commit it came from.
  echo "$version $commit" > "$BIN/.bitcoind.version"
}

if [ -n "${BITCOIN_SRC:-}" ]; then
  [ -f "$BITCOIN_SRC/CMakeLists.txt" ] || { echo "error: BITCOIN_SRC=$BITCOIN_SRC is not a Bitcoin Core source tree (no CMakeLists.txt)" >&2; exit 2; }
  # Only the tree's own .git: an exported tree inside another repository must not take
  # that repository's commit.
  commit="${BITCOIN_SRC_COMMIT:-}"
  [ -n "$commit" ] || [ ! -e "$BITCOIN_SRC/.git" ] || commit=$(git -C "$BITCOIN_SRC" rev-parse HEAD)
  [ -n "$commit" ] || { echo "error: BITCOIN_SRC is not a git work tree: set BITCOIN_SRC_COMMIT to the upstream commit it was exported from" >&2; exit 2; }
  if ! bitcoin_fresh || [ "$(cut -d' ' -f2 "$BIN/.bitcoind.version")" != "$commit" ]; then
    build_bitcoind "$BITCOIN_SRC" "$commit"
  fi
elif ! bitcoin_fresh; then
  src="$CACHE/src/bitcoin-$BITCOIN_TAG"
  if [ "${LNBENCH_CLONE:-}" = 1 ] && { [ -f "$src/CMakeLists.txt" ] ||
      git clone --quiet --depth 1 --branch "$BITCOIN_TAG" "$BITCOIN_REPO" "$src"; }; then
    build_bitcoind "$src" "$(git -C "$src" rev-parse HEAD)"
  else
    [ "${LNBENCH_CLONE:-}" = 1 ] && rm -rf "$src"
    echo "note: Bitcoin Core not built (give a source tree: BITCOIN_SRC=<tree> scripts/build-nodes.sh, or LNBENCH_CLONE=1 to clone $BITCOIN_TAG); runs with chain: bitcoind and their tests will say so" >&2
  fi
fi

# --- Core Lightning -----------------------------------------------------------------
CLN_TAG="${CLN_TAG:-v26.06.6}"
CLN_REPO="${CLN_REPO:-https://github.com/ElementsProject/lightning}"
CLN_COPTFLAGS="${CLN_COPTFLAGS:--O2}"
cln_fresh() {
  [ -x "$BIN/lightningd" ] && [ -x "$BIN/lightning-cli" ] && [ -x "$BIN/cln-grpc" ] &&
    [ -f "$BIN/.lightningd.version" ]
}

build_cln() { # source dir, commit
  local src="$1" commit="$2" build stage version rel dep
  for dep in make gcc autoconf automake libtoolize pkg-config python3 lowdown jq cargo; do
    command -v "$dep" >/dev/null || { echo "error: $dep is needed to build Core Lightning (Debian: build-essential autoconf automake libtool pkg-config libsqlite3-dev zlib1g-dev libsodium-dev libpq-dev jq gettext lowdown; Rust's cargo; scripts/setup.sh installs them)" >&2; return 3; }
  done
  python3 -c 'import mako' 2>/dev/null || { echo "error: Core Lightning generates code with Python's mako (pip install mako; scripts/setup.sh does)" >&2; return 3; }
  # The version: the tag a clone is at, or what the tree's .version file says (an exported
  # tree has no tags to describe; git is not asked there, it might answer for a parent repo).
  version=""
  [ -e "$src/.git" ] && version=$(git -C "$src" describe --tags --exact-match 2>/dev/null || true)
  [ -n "$version" ] || version=$(cat "$src/.version" 2>/dev/null || echo "$CLN_TAG")
  build="$CACHE/build/cln-${commit:0:12}"
  stage="$CACHE/cln/$version-${commit:0:12}"
  # CLN builds inside its tree: build in a copy, so the given tree stays as it was.
  if [ ! -f "$build/configure" ]; then
    rm -rf "$build"; mkdir -p "$build"
    cp -a "$src/." "$build/"
  fi
  echo "building Core Lightning $version from $commit (about 20 minutes on 2 cores the first time: 6 for C, 13 for the gRPC plugin)..." >&2
  # Optimized like upstream's own Docker image (configure's default, -Og, is a debug build).
  (cd "$build" && PYTHON=python3 nice ./configure --prefix="$stage" --disable-rust --disable-valgrind \
      --disable-compat COPTFLAGS="$CLN_COPTFLAGS") \
    >"$build/configure.log" 2>&1 \
    || { tail -n 30 "$build/configure.log" >&2; echo "error: configuring Core Lightning failed (log: $build/configure.log)" >&2; return 3; }
  nice make -C "$build" -j"$(nproc)" VERSION="$version" >"$build/build.log" 2>&1 \
    || { tail -n 30 "$build/build.log" >&2; echo "error: building Core Lightning failed (log: $build/build.log)" >&2; return 3; }
  # The gRPC plugin is Rust; the C build above leaves it out (--disable-rust), cargo builds it.
  (cd "$build" && nice cargo build --release --locked -p cln-grpc-plugin) >"$build/cargo.log" 2>&1 \
    || { tail -n 30 "$build/cargo.log" >&2; echo "error: building the cln-grpc plugin failed (log: $build/cargo.log)" >&2; return 3; }
  rm -rf "$stage"
  make -C "$build" VERSION="$version" install-program >"$build/install.log" 2>&1 \
    || { tail -n 30 "$build/install.log" >&2; echo "error: installing Core Lightning into $stage failed (log: $build/install.log)" >&2; return 3; }
  # Next to lightningd, not among its built-in plugins (those start with every node).
  install -m 0755 "$build/target/release/cln-grpc" "$stage/bin/cln-grpc"
  # Relative links: lightningd resolves its own path, so its plugins are found in $stage.
  rel="../cln/$version-${commit:0:12}/bin"
  ln -sfn "$rel/lightningd" "$BIN/lightningd"
  ln -sfn "$rel/lightning-cli" "$BIN/lightning-cli"
  ln -sfn "$rel/cln-grpc" "$BIN/cln-grpc"
  "$BIN/lightningd" --version >/dev/null || { echo "error: the installed lightningd does not run" >&2; return 3; }
  # What the report records: the version and the commit it came from.
  for b in lightningd lightning-cli cln-grpc; do echo "$version $commit" > "$BIN/.$b.version"; done
}

if [ -n "${CLN_SRC:-}" ]; then
  [ -f "$CLN_SRC/configure" ] && [ -d "$CLN_SRC/lightningd" ] || { echo "error: CLN_SRC=$CLN_SRC is not a Core Lightning source tree (no configure, no lightningd/)" >&2; exit 2; }
  [ -f "$CLN_SRC/external/libwally-core/src/secp256k1/include/secp256k1.h" ] || { echo "error: CLN_SRC=$CLN_SRC lacks its submodules (external/libwally-core with src/secp256k1, gheap, jsmn, libbacktrace): clone with --recurse-submodules, or export it with scripts/prepare-cln-source.sh" >&2; exit 2; }
  commit="${CLN_SRC_COMMIT:-}"
  [ -n "$commit" ] || [ ! -e "$CLN_SRC/.git" ] || commit=$(git -C "$CLN_SRC" rev-parse HEAD)
  [ -n "$commit" ] || { echo "error: CLN_SRC is not a git work tree: set CLN_SRC_COMMIT to the upstream commit it was exported from" >&2; exit 2; }
  if ! cln_fresh || [ "$(cut -d' ' -f2 "$BIN/.lightningd.version")" != "$commit" ]; then
    build_cln "$CLN_SRC" "$commit"
  fi
elif ! cln_fresh; then
  src="$CACHE/src/lightning-$CLN_TAG"
  if [ "${LNBENCH_CLONE:-}" = 1 ] && { [ -f "$src/configure" ] ||
      git clone --quiet --depth 1 --branch "$CLN_TAG" --recurse-submodules --shallow-submodules "$CLN_REPO" "$src"; }; then
    build_cln "$src" "$(git -C "$src" rev-parse HEAD)"
  else
    [ "${LNBENCH_CLONE:-}" = 1 ] && rm -rf "$src"
    echo "note: Core Lightning not built (give a source tree with its submodules: CLN_SRC=<tree> [CLN_SRC_COMMIT=<commit>] scripts/build-nodes.sh, or LNBENCH_CLONE=1 to clone $CLN_TAG); runs with CLN nodes and their tests will say so" >&2
  fi
fi

# --- Eclair -------------------------------------------------------------------------
ECLAIR_TAG="${ECLAIR_TAG:-v0.13.0}"
ECLAIR_REPO="${ECLAIR_REPO:-https://github.com/ACINQ/eclair}"
eclair_fresh() { [ -x "$BIN/eclair-node" ] && [ -f "$BIN/.eclair-node.version" ]; }

java_major() { # java binary -> its major version (17, 21, 25)
  "$1" -version 2>&1 | sed -n '1s/.*version "\([0-9]*\).*/\1/p'
}

# A JDK >= 21 (Eclair v0.13.0 builds with it): $JAVA_HOME if it is one, else the newest
# under /usr/lib/jvm (Debian bookworm packages only OpenJDK 17).
find_jdk() {
  local j best="" best_major=0 major
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/javac" ]; then
    major=$(java_major "$JAVA_HOME/bin/java")
    [ "${major:-0}" -ge 21 ] && { echo "$JAVA_HOME"; return 0; }
  fi
  for j in /usr/lib/jvm/*/; do
    j=${j%/}
    [ -x "$j/bin/javac" ] || continue
    major=$(java_major "$j/bin/java")
    if [ "${major:-0}" -ge 21 ] && [ "$major" -gt "$best_major" ]; then best="$j"; best_major="$major"; fi
  done
  [ -n "$best" ] && echo "$best"
}

build_eclair() { # source dir, commit
  local src="$1" commit="$2" jdk build version stage zip unpacked
  jdk=$(find_jdk) || { echo "error: building Eclair needs a JDK >= 21 (Debian bookworm has only OpenJDK 17): install one (e.g. Temurin 21 or 25, or openjdk-21-jdk-headless on Debian trixie) and set JAVA_HOME to it" >&2; return 3; }
  command -v unzip >/dev/null || { echo "error: unzip is needed to install Eclair (Debian: apt-get install unzip; scripts/setup.sh does)" >&2; return 3; }
  # The project's version, the first <version> of its pom (the parent's is not there).
  version=$(sed -n 's|^    <version>\(.*\)</version>|\1|p' "$src/pom.xml" | head -n 1)
  [ -n "$version" ] || { echo "error: no version in $src/pom.xml" >&2; return 3; }
  build="$CACHE/build/eclair-${commit:0:12}"
  stage="$CACHE/eclair/$version-${commit:0:12}"
  # Maven writes target/ directories inside the tree: build in a copy.
  if [ ! -f "$build/mvnw" ]; then
    rm -rf "$build"; mkdir -p "$build"
    cp -a "$src/." "$build/"
  fi
  echo "building Eclair $version from $commit with the JDK in $jdk (about 3 minutes on 2 cores once Maven's repository is filled; longer the first time)..." >&2
  # -Dmaven.test.skip=true, not -DskipTests: the tests' setup would download a bitcoind.
  (cd "$build" && JAVA_HOME="$jdk" nice ./mvnw -B package -pl eclair-node -am -Dmaven.test.skip=true) \
    >"$build/build.log" 2>&1 \
    || { tail -n 30 "$build/build.log" >&2; echo "error: building Eclair failed (log: $build/build.log)" >&2; return 3; }
  zip=$(ls "$build"/eclair-node/target/eclair-node-*-bin.zip | head -n 1)
  [ -f "$zip" ] || { echo "error: the Eclair build left no eclair-node zip (log: $build/build.log)" >&2; return 3; }
  unpacked="$CACHE/build/eclair-unpacked"
  rm -rf "$unpacked" "$stage"; mkdir -p "$unpacked" "$(dirname "$stage")"
  unzip -q "$zip" -d "$unpacked"
  # One directory, eclair-node-<version>-<commit>/ (literally "${git.commit.id.abbrev}"
  # when the tree has no .git).
  mv "$unpacked"/eclair-node-* "$stage"
  rm -rf "$unpacked"
  # The JVM started is the JDK's; the report names the version and commit of Eclair.
  cat > "$BIN/.eclair-node.new" <<SCRIPT
#!/bin/sh
# Eclair $version (source $commit), built by scripts/build-nodes.sh. Runs Eclair in this
# process (exec: no shell stays behind), the arguments being JVM options such as
# -Declair.datadir=<dir> (its eclair.conf is read from there).
if [ "\${1:-}" = --version ]; then echo "eclair-node $version"; exit 0; fi
exec "$jdk/bin/java" "\$@" -cp "$stage/lib/*" fr.acinq.eclair.Boot
SCRIPT
  chmod 0755 "$BIN/.eclair-node.new"
  mv -f "$BIN/.eclair-node.new" "$BIN/eclair-node"
  # What the report records: the version and the commit it came from; the JDK used.
  echo "$version $commit" > "$BIN/.eclair-node.version"
  echo "$jdk" > "$BIN/.eclair-node.jdk"
}

if [ -n "${ECLAIR_SRC:-}" ]; then
  [ -f "$ECLAIR_SRC/mvnw" ] && [ -d "$ECLAIR_SRC/eclair-node" ] || { echo "error: ECLAIR_SRC=$ECLAIR_SRC is not an Eclair source tree (no mvnw, no eclair-node/)" >&2; exit 2; }
  commit="${ECLAIR_SRC_COMMIT:-}"
  [ -n "$commit" ] || [ ! -e "$ECLAIR_SRC/.git" ] || commit=$(git -C "$ECLAIR_SRC" rev-parse HEAD)
  [ -n "$commit" ] || { echo "error: ECLAIR_SRC is not a git work tree: set ECLAIR_SRC_COMMIT to the upstream commit it was exported from" >&2; exit 2; }
  if ! eclair_fresh || [ "$(cut -d' ' -f2 "$BIN/.eclair-node.version")" != "$commit" ]; then
    build_eclair "$ECLAIR_SRC" "$commit"
  fi
elif ! eclair_fresh; then
  src="$CACHE/src/eclair-$ECLAIR_TAG"
  if [ "${LNBENCH_CLONE:-}" = 1 ] && { [ -f "$src/mvnw" ] ||
      git clone --quiet --depth 1 --branch "$ECLAIR_TAG" "$ECLAIR_REPO" "$src"; }; then
    build_eclair "$src" "$(git -C "$src" rev-parse HEAD)"
  else
    [ "${LNBENCH_CLONE:-}" = 1 ] && rm -rf "$src"
    echo "note: Eclair not built (give a source tree: ECLAIR_SRC=<tree> [ECLAIR_SRC_COMMIT=<commit>] scripts/build-nodes.sh, or LNBENCH_CLONE=1 to clone $ECLAIR_TAG; either needs a JDK >= 21); runs with Eclair nodes and their tests will say so" >&2
  fi
fi

# --- LDK (ldk-server) ---------------------------------------------------------------
# The last commit whose dependencies all come from crates.io (ldk-node 0.7.0); later ones
# pin git dependencies. It has no keysend (SpontaneousSend came later).
LDK_SERVER_COMMIT="${LDK_SERVER_COMMIT:-ee1c96cc7c628292d9eba57201af1ea57a55f052}"
LDK_SERVER_REPO="${LDK_SERVER_REPO:-https://github.com/lightningdevkit/ldk-server}"
ldk_fresh() {
  [ -x "$BIN/ldk-server" ] && [ -x "$BIN/ldk-server-cli" ] && [ -f "$BIN/.ldk-server.version" ]
}

build_ldk() { # source dir, commit
  local src="$1" commit="$2" build version b
  command -v cargo >/dev/null || { echo "error: cargo is needed to build ldk-server (Rust 1.85 or newer)" >&2; return 3; }
  # ldk-server states no version of its own (--help prints the usage): its crate's does.
  version="v$(sed -n 's/^version = "\(.*\)"/\1/p' "$src/ldk-server/Cargo.toml" | head -n 1)"
  build="$CACHE/build/ldk-server-${commit:0:12}"
  mkdir -p "$build"
  echo "building ldk-server $version from $commit (about 15 minutes on 2 cores the first time: release builds use LTO)..." >&2
  (cd "$src" && nice cargo build --release --locked --target-dir "$build") >"$build/cargo.log" 2>&1 \
    || { tail -n 30 "$build/cargo.log" >&2; echo "error: building ldk-server failed (log: $build/cargo.log)" >&2; return 3; }
  # Copied beside the cache and moved in, so a run using the cached binary never sees half a file.
  for b in ldk-server ldk-server-cli; do
    install -m 0755 "$build/release/$b" "$BIN/.$b.new"
    mv -f "$BIN/.$b.new" "$BIN/$b"
    # What the report records: the version and the commit it came from.
    echo "$version $commit" > "$BIN/.$b.version"
  done
}

if [ -n "${LDK_SERVER_SRC:-}" ]; then
  [ -f "$LDK_SERVER_SRC/Cargo.toml" ] && [ -f "$LDK_SERVER_SRC/ldk-server/Cargo.toml" ] || { echo "error: LDK_SERVER_SRC=$LDK_SERVER_SRC is not an ldk-server workspace (no Cargo.toml, no ldk-server/)" >&2; exit 2; }
  commit="${LDK_SERVER_SRC_COMMIT:-}"
  [ -n "$commit" ] || [ ! -e "$LDK_SERVER_SRC/.git" ] || commit=$(git -C "$LDK_SERVER_SRC" rev-parse HEAD)
  [ -n "$commit" ] || { echo "error: LDK_SERVER_SRC is not a git work tree: set LDK_SERVER_SRC_COMMIT to the upstream commit it was exported from" >&2; exit 2; }
  if ! ldk_fresh || [ "$(cut -d' ' -f2 "$BIN/.ldk-server.version")" != "$commit" ]; then
    build_ldk "$LDK_SERVER_SRC" "$commit"
  fi
elif ! ldk_fresh; then
  src="$CACHE/src/ldk-server-${LDK_SERVER_COMMIT:0:12}"
  if [ "${LNBENCH_CLONE:-}" = 1 ] && { [ -f "$src/Cargo.toml" ] ||
      { git clone --quiet "$LDK_SERVER_REPO" "$src" && git -C "$src" checkout --quiet "$LDK_SERVER_COMMIT"; }; }; then
    build_ldk "$src" "$(git -C "$src" rev-parse HEAD)"
  else
    [ "${LNBENCH_CLONE:-}" = 1 ] && rm -rf "$src"
    echo "note: ldk-server not built (give a source tree: LDK_SERVER_SRC=<tree> [LDK_SERVER_SRC_COMMIT=<commit>] scripts/build-nodes.sh, or LNBENCH_CLONE=1 to clone commit ${LDK_SERVER_COMMIT:0:7}); runs with LDK nodes and their tests will say so" >&2
  fi
fi

if $quick; then
  left_out=""
  [ "$(cat "$BIN/.lnd.tags" 2>/dev/null)" != "$LND_QUICK_TAGS" ] || left_out="lnd's PostgreSQL and etcd backends"
  for b in lncli btcctl toxiproxy-unix; do
    [ -x "$BIN/$b" ] || left_out="${left_out:+$left_out, }$b"
  done
  [ -z "$left_out" ] || echo "note: the quick start's build leaves out $left_out (toxiproxy-unix: links: and faults:); scripts/build-nodes.sh builds them" >&2
fi
echo "$BIN"
