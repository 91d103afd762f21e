#!/usr/bin/env bash
# Builds the node binaries lnbench-tui runs locally: lnd + lncli (v0.21.1-beta) and
# btcd + btcctl, as static binaries (CGO_ENABLED=0), from the Go module proxy.
# Idempotent: a binary already built for the pinned version is kept.
# Prints the directory that holds the binaries on its last line.
set -euo pipefail

LND_VERSION="${LND_VERSION:-v0.21.1-beta}"
BTCD_VERSION="${BTCD_VERSION:-v0.24.2}"
LND_TAGS="signrpc walletrpc chainrpc invoicesrpc routerrpc peersrpc kvdb_sqlite kvdb_postgres"
CACHE="${LNBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lnbench-tui}"
BIN="$CACHE/bin"
mkdir -p "$BIN"

command -v go >/dev/null || { echo "error: Go is needed to build lnd and btcd (install Go 1.23 or newer)" >&2; exit 3; }

export CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -trimpath"

# A stamp per binary records the version it was built from, so a version bump rebuilds.
fresh() { [ -x "$BIN/$1" ] && [ "$(cat "$BIN/.$1.version" 2>/dev/null)" = "$2" ]; }
stamp() { echo "$2" > "$BIN/.$1.version"; }

module_dir() {
  # Build inside the module's own tree so its go.mod (with its replace directives) applies.
  go mod download -json "$1@$2" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

if ! fresh lnd "$LND_VERSION" || ! fresh lncli "$LND_VERSION"; then
  echo "building lnd and lncli $LND_VERSION (a few minutes the first time)..." >&2
  dir=$(module_dir github.com/lightningnetwork/lnd "$LND_VERSION")
  (cd "$dir" && go build -tags="$LND_TAGS" -ldflags "-s -w -X github.com/lightningnetwork/lnd/build.Commit=$LND_VERSION" -o "$BIN/lnd" ./cmd/lnd)
  (cd "$dir" && go build -tags="$LND_TAGS" -ldflags "-s -w" -o "$BIN/lncli" ./cmd/lncli)
  stamp lnd "$LND_VERSION"; stamp lncli "$LND_VERSION"
fi

if ! fresh btcd "$BTCD_VERSION" || ! fresh btcctl "$BTCD_VERSION"; then
  echo "building btcd and btcctl $BTCD_VERSION..." >&2
  dir=$(module_dir github.com/btcsuite/btcd "$BTCD_VERSION")
  (cd "$dir" && go build -ldflags "-s -w" -o "$BIN/btcd" . && go build -ldflags "-s -w" -o "$BIN/btcctl" ./cmd/btcctl)
  stamp btcd "$BTCD_VERSION"; stamp btcctl "$BTCD_VERSION"
fi

echo "$BIN"
