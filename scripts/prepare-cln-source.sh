#!/usr/bin/env bash
# Exports a Core Lightning source tree with its submodules from copies of the repositories
# (git directories, bare or not), for a machine that cannot clone upstream; build it with
#   CLN_SRC=<out dir> CLN_SRC_COMMIT=<commit printed here> scripts/build-nodes.sh
# (a connected machine needs none of this: LNBENCH_CLONE=1 scripts/build-nodes.sh clones the
# pinned tag with its submodules).
#
# Usage: scripts/prepare-cln-source.sh OUT_DIR
#   CLN_GIT=DIR           a copy of ElementsProject/lightning holding the tag CLN_TAG (v26.06.6)
#   GHEAP_GIT=DIR JSMN_GIT=DIR LIBBACKTRACE_GIT=DIR LIBWALLY_GIT=DIR
#                         copies of valyala/gheap, zserge/jsmn, ianlancetaylor/libbacktrace and
#                         ElementsProject/libwally-core, each holding the commit the tag pins
#   WALLYCORE_SDIST=FILE  PyPI's wallycore-<version>.tar.gz for libwally's own submodule
#                         (secp256k1-zkp): the sdist bundles it as src/secp256k1. Without it
#                         pip downloads the sdist of the version libwally's configure.ac names
#                         (pip prepares its metadata: that needs autoconf, automake, libtool
#                         and swig).
#   CLN_EXCLUDE="PATH..." paths left out of the export (default: tests/data/routing_gossip_store,
#                         a test blob that copies of the repository may lack; building needs
#                         no test data).
# Prints "CLN_SRC=<dir> CLN_SRC_COMMIT=<commit>" on its last line. Refuses a non-empty OUT_DIR.
set -euo pipefail

out="${1:?usage: CLN_GIT=DIR GHEAP_GIT=DIR JSMN_GIT=DIR LIBBACKTRACE_GIT=DIR LIBWALLY_GIT=DIR [WALLYCORE_SDIST=FILE] $0 OUT_DIR}"
tag="${CLN_TAG:-v26.06.6}"
exclude="${CLN_EXCLUDE-tests/data/routing_gossip_store}"

for var in CLN_GIT GHEAP_GIT JSMN_GIT LIBBACKTRACE_GIT LIBWALLY_GIT; do
  dir="${!var:-}"
  [ -n "$dir" ] || { echo "error: set $var to a copy (git directory) of that repository" >&2; exit 2; }
  git -C "$dir" rev-parse --git-dir >/dev/null 2>&1 || { echo "error: $var=$dir is not a git directory" >&2; exit 2; }
done
if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
  echo "error: $out exists and is not empty" >&2; exit 2
fi

commit=$(git -C "$CLN_GIT" rev-parse --verify --quiet "$tag^{commit}") ||
  { echo "error: $CLN_GIT has no tag $tag" >&2; exit 2; }

# export REPO COMMIT DEST [PATHSPEC...]: the tree at COMMIT into DEST
export_tree() {
  local repo="$1" rev="$2" dest="$3"; shift 3
  git -C "$repo" cat-file -e "$rev^{commit}" 2>/dev/null ||
    { echo "error: $repo lacks commit $rev" >&2; exit 2; }
  mkdir -p "$dest"
  # git archive still names an excluded blob it cannot read (and exits 0 with it left out):
  # its messages are shown only when the export fails.
  if ! git -C "$repo" archive --format=tar "$rev" -- "$@" 2>"$dest.archive-errors" | tar -x -C "$dest"; then
    cat "$dest.archive-errors" >&2; rm -f "$dest.archive-errors"
    echo "error: exporting $rev from $repo failed" >&2; exit 2
  fi
  rm -f "$dest.archive-errors"
}

mkdir -p "$out"
pathspec=(.)
for p in $exclude; do pathspec+=(":(exclude)$p"); done
echo "exporting Core Lightning $tag ($commit)..." >&2
export_tree "$CLN_GIT" "$commit" "$out" "${pathspec[@]}"

# The submodules at the commits the tag pins (gitlinks in its tree).
pinned() { git -C "$CLN_GIT" ls-tree "$commit" -- "$1" | awk '$2 == "commit" { print $3 }'; }
for pair in external/gheap:GHEAP_GIT external/jsmn:JSMN_GIT \
            external/libbacktrace:LIBBACKTRACE_GIT external/libwally-core:LIBWALLY_GIT; do
  path=${pair%%:*} var=${pair#*:}
  rev=$(pinned "$path")
  [ -n "$rev" ] || { echo "error: $tag pins no submodule at $path" >&2; exit 2; }
  echo "  $path at ${rev:0:12}" >&2
  rm -rf "${out:?}/$path"
  export_tree "${!var}" "$rev" "$out/$path"
done

# libwally-core's secp256k1-zkp, from the wallycore sdist of the same release.
wally="$out/external/libwally-core"
wally_version=$(sed -n 's/^AC_INIT(\[libwallycore\],\[\([^]]*\)\].*/\1/p' "$wally/configure.ac")
[ -n "$wally_version" ] || { echo "error: cannot read libwally's version from its configure.ac" >&2; exit 2; }
sdist="${WALLYCORE_SDIST:-}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$sdist" ]; then
  echo "  downloading the wallycore $wally_version sdist with pip..." >&2
  python3 -m pip download --quiet --no-deps --no-binary :all: "wallycore==$wally_version" -d "$tmp" >&2
  sdist="$tmp/wallycore-$wally_version.tar.gz"
fi
[ -f "$sdist" ] || { echo "error: no wallycore sdist at $sdist" >&2; exit 2; }
case "$(basename "$sdist")" in
  "wallycore-$wally_version.tar.gz") ;;
  *) echo "error: libwally-core is $wally_version here; $sdist is not wallycore-$wally_version.tar.gz" >&2; exit 2 ;;
esac
tar -xzf "$sdist" -C "$tmp" "wallycore-$wally_version/src/secp256k1"
rm -rf "$wally/src/secp256k1"
mv "$tmp/wallycore-$wally_version/src/secp256k1" "$wally/src/secp256k1"
echo "  external/libwally-core/src/secp256k1 from wallycore-$wally_version.tar.gz" >&2

echo "CLN_SRC=$out CLN_SRC_COMMIT=$commit"
