#!/usr/bin/env bash
# Builds the Kubernetes components the local single-node cluster runs
# (scripts/kube-cluster.sh): kube-apiserver, kube-controller-manager, kube-scheduler,
# kubelet, kube-proxy and kubectl at the release $KUBE_VERSION, from the Kubernetes Go modules.
#
# k8s.io/kubernetes points its staging modules (k8s.io/api, k8s.io/client-go, ...) at
# directories of its own repository, which its module zip leaves out; so the build runs
# in a small module of ours that requires k8s.io/kubernetes and points each staging
# module at its published release (v0.<minor>.<patch>) instead.
#
# 1.34 because this machine's kernel mounts cgroup v1 and Debian's containerd is 1.6:
# kubelet 1.35 refuses cgroup v1 by default and later ones need containerd 2.
# Idempotent: binaries already built for $KUBE_VERSION are kept. About 25 minutes on
# 2 cores the first time. Prints the directory of the binaries on its last line.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-v1.34.4}"
CACHE="${LNBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lnbench-tui}"
OUT="$CACHE/kube/$KUBE_VERSION/bin"
COMPONENTS="kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl"

command -v go >/dev/null || { echo "error: Go is needed to build Kubernetes" >&2; exit 3; }

missing=""
for c in $COMPONENTS; do [ -x "$OUT/$c" ] || missing="$missing $c"; done
if [ -z "$missing" ]; then
  echo "$OUT"
  exit 0
fi

staging_version="v0.${KUBE_VERSION#v1.}"
work="$CACHE/kube/$KUBE_VERSION/module"
mkdir -p "$work" "$OUT"
cd "$work"

kdir=$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$kdir" ] || { echo "error: could not download k8s.io/kubernetes@$KUBE_VERSION" >&2; exit 3; }
go_line=$(grep -m1 '^go ' "$kdir/go.mod")

{
  echo "module lnbench.local/kube-build"
  echo
  echo "$go_line"
  echo
  echo "require k8s.io/kubernetes $KUBE_VERSION"
  echo
  echo "replace ("
  sed -n 's|^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*|\1|p' "$kdir/go.mod" |
    while read -r m; do echo "	$m => $m $staging_version"; done
  echo ")"
} > go.mod
{
  echo "//go:build tools"
  echo
  echo "package tools"
  echo
  echo "import ("
  for c in $COMPONENTS; do echo "	_ \"k8s.io/kubernetes/cmd/$c\""; done
  echo ")"
} > tools.go

echo "resolving Kubernetes $KUBE_VERSION modules..." >&2
GOFLAGS=-mod=mod go mod tidy >&2

major=${KUBE_VERSION#v}; major=${major%%.*}
minor=${KUBE_VERSION#v*.}; minor=${minor%%.*}
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags="$ldflags -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
  ldflags="$ldflags -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

for c in $missing; do
  echo "building $c $KUBE_VERSION..." >&2
  start=$(date +%s)
  # kubelet uses cgo (as upstream builds it); the others are static.
  cgo=0; [ "$c" = kubelet ] && cgo=1
  CGO_ENABLED=$cgo go build -trimpath -ldflags "$ldflags" -o "$OUT/$c.tmp" "k8s.io/kubernetes/cmd/$c"
  mv "$OUT/$c.tmp" "$OUT/$c"
  echo "built $c in $(( $(date +%s) - start )) s" >&2
done

echo "$OUT"
