#!/usr/bin/env bash
# A real single-node Kubernetes cluster on this machine, for lnbench-tui's kubernetes
# runtime and its tests, from released components and without any registry:
#   etcd (Debian's), a containerd of its own (Debian's, CRI on, cgroupfs), kube-apiserver,
#   kube-controller-manager, kube-scheduler, kubelet and kube-proxy (iptables) at
#   $KUBE_VERSION (scripts/build-kube.sh), the bridge/host-local/loopback CNI plugins.
#   No image is ever pulled: the pod sandbox image (lnbench/pause:1, scripts/kube/pause.c)
#   and a busybox image (lnbench/busybox:1) are built here, and every lnbench/* image of
#   the Docker engine is imported into the cluster's containerd (k8s.io namespace).
#   No DNS: pods reach each other by pod IP or ClusterIP.
#
# Usage: scripts/kube-cluster.sh COMMAND
#   up [--no-build]  start the cluster (idempotent) and wait until a pod runs on it.
#                    --no-build: if the Kubernetes binaries are not built, say so and
#                    exit 0 without a cluster (CI) instead of building them (~25 min).
#   down             stop everything and forget the cluster's objects (etcd data, pods);
#                    binaries, PKI and imported images are kept.
#   status           print whether the cluster is up (exit 0 if it is, 1 if not).
#   images           build the local images and import the new or changed lnbench/*
#                    images into the cluster (after rebuilding node images).
#   env              print `export KUBECONFIG=<admin kubeconfig>`.
#   kubeconfig       print the admin kubeconfig's path.
# up, down and images need root. Processes run detached (setsid) and outlive the
# script; state in /var/lib/lnbench-kube, logs and pidfiles in /var/log/lnbench-kube.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-v1.34.4}"
CACHE="${LNBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lnbench-tui}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CLUSTER_DIR="$CACHE/kube/cluster"
ADMIN_KUBECONFIG="$CLUSTER_DIR/admin.kubeconfig"
WAIT="${KUBE_CLUSTER_WAIT:-300}"   # seconds `up` waits for each step at most

STATE=/var/lib/lnbench-kube        # PKI, configs, etcd data, containerd root, kubelet root
LOGS=/var/log/lnbench-kube         # one log and one pidfile per component
RUN=/run/lnbench-kube              # containerd's state and socket, the lock

NODE=lnbench-kube
API_PORT=16443
ETCD_CLIENT_PORT=23791
ETCD_PEER_PORT=23792
KUBELET_PORT=16250
KUBELET_HEALTHZ_PORT=16248
PROXY_HEALTHZ_PORT=16256
PROXY_METRICS_PORT=16249
SERVICE_CIDR=10.97.0.0/16
FIRST_SERVICE_IP=10.97.0.1
POD_CIDR=10.245.0.0/16
POD_PREFIX=16
# The bridge's address: the pods' gateway and the node's IP (the kubelet listens there),
# so the cluster depends on no interface of the host.
NODE_IP=10.245.0.1
BRIDGE=lnbkube0
FW_CHAIN=LNBENCH-KUBE
CONTAINERD_SOCK="$RUN/containerd/containerd.sock"
PAUSE_IMAGE=lnbench/pause:1
BUSYBOX_IMAGE=lnbench/busybox:1
COMPONENTS="etcd containerd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy"
KUBE_BINARIES="kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl"
# Debian packages the cluster runs on (containerd is 1.6 on bookworm, etcd 3.4).
PACKAGES="etcd-server containerd runc containernetworking-plugins conntrack iptables iproute2 busybox-static gcc libc6-dev binutils openssl curl util-linux"

log() { echo "kube-cluster: $*" >&2; }
die() { echo "kube-cluster: error: $*" >&2; exit 1; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
since() { local ms=$(( $(now_ms) - $1 )); printf '%d.%d s' $(( ms / 1000 )) $(( ms % 1000 / 100 )); }

# Prints the last lines of a component's log on stderr.
log_tail() {
  local f="$LOGS/$1.log"
  if [ -f "$f" ]; then
    echo "--- last lines of $f:" >&2
    tail -n "${2:-25}" "$f" >&2 || true
    echo "---" >&2
  fi
}
fail() { # fail COMPONENT MESSAGE...
  local c=$1; shift
  echo "kube-cluster: error: $*" >&2
  log_tail "$c" 40
  exit 1
}

need_root() {
  [ "$(id -u)" -eq 0 ] || die "'$1' needs root (e.g. sudo $0 $1)"
}

# --- binaries ---------------------------------------------------------------------
BIN=""
cached_bin_dir() {
  local d="$CACHE/kube/$KUBE_VERSION/bin" c
  for c in $KUBE_BINARIES; do [ -x "$d/$c" ] || return 1; done
  echo "$d"
}
# find_bins NO_BUILD: sets BIN; with NO_BUILD=1 and nothing cached, says so and exits 0.
find_bins() {
  if BIN=$(cached_bin_dir); then return 0; fi
  if [ "$1" = 1 ]; then
    echo "kubernetes binaries not built (run scripts/build-kube.sh, ~25 min): the kubernetes tests will not run"
    exit 0
  fi
  log "building the Kubernetes $KUBE_VERSION binaries (scripts/build-kube.sh, ~25 min the first time)..."
  BIN=$("$HERE/build-kube.sh" | tail -n 1)
  [ -x "$BIN/kubectl" ] || die "scripts/build-kube.sh did not leave the binaries in '$BIN'"
}

kctl() { "$BIN/kubectl" --kubeconfig "$STATE/admin.kubeconfig" --request-timeout=10s "$@"; }
ctr_() { ctr --address "$CONTAINERD_SOCK" --namespace k8s.io "$@"; }

ensure_packages() {
  local missing="" p
  for p in $PACKAGES; do
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)" = installed ] || missing="$missing $p"
  done
  [ -z "$missing" ] && return 0
  command -v apt-get >/dev/null || die "missing Debian packages:$missing (and no apt-get)"
  log "installing Debian packages:$missing"
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null; } ||
    die "could not install:$missing"
}

ensure_docker() {
  docker info >/dev/null 2>&1 || "$HERE/start-dockerd.sh" ||
    die "no Docker engine answers: it holds the images the cluster runs (scripts/start-dockerd.sh)"
}

# --- processes --------------------------------------------------------------------
pidfile() { echo "$LOGS/$1.pid"; }
exe_name() { case $1 in etcd) echo etcd ;; containerd) echo containerd ;; *) echo "$1" ;; esac; }

# Prints the pid of a running component, or fails.
running_pid() {
  local f pid comm
  f=$(pidfile "$1")
  [ -r "$f" ] || return 1
  pid=$(cat "$f" 2>/dev/null) || return 1
  [ -n "$pid" ] && [ -d "/proc/$pid" ] || return 1
  # comm (the executable's name, cut at 15 characters) is readable without root.
  comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
  [ "$comm" = "$(exe_name "$1" | cut -c1-15)" ] || return 1
  echo "$pid"
}

# start NAME CMD ARGS...: runs CMD detached, its output in $LOGS/NAME.log.
start() {
  local name=$1 pid f log
  shift
  if pid=$(running_pid "$name"); then
    log "$name is running (pid $pid)"
    return 0
  fi
  f=$(pidfile "$name")
  log="$LOGS/$name.log"
  rm -f "$f"
  if [ -f "$log" ] && [ "$(stat -c %s "$log")" -gt $(( 64 * 1024 * 1024 )) ]; then mv -f "$log" "$log.1"; fi
  echo "=== $(date -u +%FT%TZ) kube-cluster.sh starts: $*" >>"$log"
  # The process writes its own pid, then becomes the component. fd 9 (the lock) is closed.
  # shellcheck disable=SC2016
  setsid bash -c 'echo $$ > "$0"; exec "$@"' "$f" "$@" >>"$log" 2>&1 </dev/null 9>&- &
  local i
  for i in $(seq 50); do [ -s "$f" ] && break; sleep 0.1; done
  log "started $name (pid $(cat "$f" 2>/dev/null || echo '?'), log $log)"
}

# stop NAME [SECONDS]: SIGTERM, then SIGKILL after SECONDS (default 15).
stop() {
  local name=$1 secs=${2:-15} pid i t0
  if pid=$(running_pid "$name"); then
    t0=$(now_ms)
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq $(( secs * 10 ))); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
    if [ -d "/proc/$pid" ]; then
      log "$name did not stop within $secs s: killing it"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.2
    fi
    log "stopped $name ($(since "$t0"))"
  fi
  rm -f "$(pidfile "$name")"
}

# wait_for WHAT COMPONENT CMD...: polls CMD until it succeeds; fails with COMPONENT's log
# tail if COMPONENT dies or after $WAIT seconds. Prints a progress line every 10 s.
wait_for() {
  local what=$1 comp=$2 t0 next=10 el
  shift 2
  t0=$(date +%s)
  until "$@" >/dev/null 2>&1; do
    if [ -n "$comp" ] && ! running_pid "$comp" >/dev/null; then
      fail "$comp" "$comp exited while waiting for $what"
    fi
    el=$(( $(date +%s) - t0 ))
    [ "$el" -ge "$WAIT" ] && fail "$comp" "timed out after $WAIT s waiting for $what"
    if [ "$el" -ge "$next" ]; then log "still waiting for $what ($el s)"; next=$(( next + 10 )); fi
    sleep 0.5
  done
}

# --- PKI and kubeconfigs ----------------------------------------------------------
APISERVER_SANS="IP:127.0.0.1,IP:$FIRST_SERVICE_IP,IP:$NODE_IP,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,DNS:$NODE"

# leaf NAME SUBJECT EXTENDED_KEY_USAGE [SUBJECT_ALT_NAMES]: a key and a certificate signed by the CA.
leaf() {
  local d="$STATE/pki" name=$1 subj=$2 eku=$3 san=${4:-}
  if [ -s "$d/$name.crt" ] && [ "$(cat "$d/$name.san" 2>/dev/null || true)" = "$san" ]; then return 0; fi
  openssl req -new -newkey rsa:2048 -nodes -keyout "$d/$name.key" -subj "$subj" -out "$d/$name.csr" 2>/dev/null
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"
    [ -n "$san" ] && echo "subjectAltName=$san"
  } >"$d/$name.ext"
  openssl x509 -req -in "$d/$name.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -set_serial "0x$(openssl rand -hex 16)" \
    -days 3650 -extfile "$d/$name.ext" -out "$d/$name.crt" 2>/dev/null
  echo "$san" >"$d/$name.san"
  rm -f "$d/$name.csr" "$d/$name.ext"
}

gen_pki() {
  local d="$STATE/pki"
  mkdir -p "$d"
  chmod 700 "$d"
  if ! [ -s "$d/ca.crt" ] || ! [ -s "$d/ca.key" ]; then
    log "creating the cluster's PKI in $d"
    rm -f "$d"/*
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/ca.key" -out "$d/ca.crt" -days 3650 \
      -subj "/CN=lnbench-kube-ca" -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" 2>/dev/null
  fi
  leaf apiserver "/CN=kube-apiserver" serverAuth "$APISERVER_SANS"
  # One client identity (system:masters) for the admin, every component, and the
  # apiserver's calls to the kubelet (logs, exec, port-forward).
  leaf admin "/O=system:masters/CN=lnbench-kube-admin" clientAuth
  if ! [ -s "$d/sa.key" ]; then
    openssl genrsa -out "$d/sa.key" 2048 2>/dev/null
    openssl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
  fi
}

# write_kubeconfig PATH: the admin kubeconfig, self-contained (inline certificates).
write_kubeconfig() {
  local d="$STATE/pki" path=$1
  mkdir -p "$(dirname "$path")"
  (
    umask 077
    cat >"$path.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $NODE
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority-data: $(base64 -w0 "$d/ca.crt")
users:
- name: lnbench-kube-admin
  user:
    client-certificate-data: $(base64 -w0 "$d/admin.crt")
    client-key-data: $(base64 -w0 "$d/admin.key")
contexts:
- name: $NODE
  context:
    cluster: $NODE
    user: lnbench-kube-admin
current-context: $NODE
EOF
  )
  chmod 600 "$path.tmp"
  mv -f "$path.tmp" "$path"
}

# --- configuration files ----------------------------------------------------------
write_configs() {
  local etc="$STATE/etc"
  mkdir -p "$etc" "$STATE/cni/net.d" "$STATE/cni/ipam" "$STATE/opt"

  cat >"$etc/containerd.toml" <<EOF
# lnbench-kube's own containerd (not Docker's): CRI on, cgroupfs, local images only.
version = 2
root = "$STATE/containerd"
state = "$RUN/containerd"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]

[grpc]
  address = "$CONTAINERD_SOCK"

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "$STATE/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "docker.io/$PAUSE_IMAGE"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  # Keep the containers' oom_score_adj at or above containerd's own: lowering it needs
  # CAP_SYS_RESOURCE, which a sandboxed root may lack (runc then fails to create anything).
  restrict_oom_score_adj = true
  max_container_log_line_size = 16384
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$RUN/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$STATE/cni/net.d"
    max_conf_num = 1
EOF

  # containerd adds the loopback network itself (the loopback plugin of bin_dir).
  cat >"$STATE/cni/net.d/10-lnbench-kube.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "lnbench-kube",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$STATE/cni/ipam",
        "ranges": [[{ "subnet": "$POD_CIDR", "gateway": "$NODE_IP" }]],
        "routes": [{ "dst": "0.0.0.0/0" }]
      }
    }
  ]
}
EOF

  cat >"$etc/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: $STATE/pki/ca.crt
authorization:
  mode: Webhook
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
# 0: leave the process's OOM score alone (lowering it needs CAP_SYS_RESOURCE).
oomScoreAdj: 0
podLogsDir: $LOGS/pods
# No cluster DNS, and pods must not reach the host's resolvers: no resolv.conf.
resolvConf: ""
maxPods: 250
serializeImagePulls: false
# Images are imported, never pulled: never collect them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  nodefs.inodesFree: 1%
  imagefs.available: 1%
  imagefs.inodesFree: 1%
evictionPressureTransitionPeriod: 30s
# Data volumes are measured every 10 s (default 1 min): lnbench-tui reports their growth.
volumeStatsAggPeriod: 10s
# List every image in the node's status: lnbench-tui checks images are present there.
nodeStatusMaxImages: -1
EOF

  cat >"$etc/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: $STATE/admin.kubeconfig
hostnameOverride: $NODE
mode: iptables
oomScoreAdj: 0
clusterCIDR: $POD_CIDR
healthzBindAddress: 127.0.0.1:$PROXY_HEALTHZ_PORT
metricsBindAddress: 127.0.0.1:$PROXY_METRICS_PORT
nodePortAddresses: ["$NODE_IP/32"]
iptables:
  localhostNodePorts: false
# 0: leave the host's conntrack settings alone.
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF

  cat >"$etc/kube-scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $STATE/admin.kubeconfig
leaderElection:
  leaderElect: false
EOF
}

# --- host network -----------------------------------------------------------------
net_up() {
  sysctl -qw net.ipv4.ip_forward=1
  [ -e /proc/sys/net/bridge/bridge-nf-call-iptables ] ||
    die "the kernel has no bridge netfilter (br_netfilter): ClusterIP Services would not work between pods"
  sysctl -qw net.bridge.bridge-nf-call-iptables=1
  # The bridge is made here (the CNI bridge plugin adopts it) so that the node IP exists
  # before the kubelet starts.
  ip link show "$BRIDGE" >/dev/null 2>&1 || ip link add "$BRIDGE" type bridge
  ip -4 addr show dev "$BRIDGE" | grep "inet $NODE_IP/$POD_PREFIX " >/dev/null || ip addr add "$NODE_IP/$POD_PREFIX" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  # ClusterIPs are routed to the bridge, never to the host's default route.
  ip route replace "$SERVICE_CIDR" dev "$BRIDGE" src "$NODE_IP"
  # Docker sets the FORWARD policy to DROP: let traffic to pods through, and keep the
  # pods' traffic on this machine (pods reach pods, Services and this host only).
  iptables -w -N "$FW_CHAIN" 2>/dev/null || iptables -w -F "$FW_CHAIN"
  iptables -w -A "$FW_CHAIN" -o "$BRIDGE" -d "$POD_CIDR" -j ACCEPT
  iptables -w -A "$FW_CHAIN" -i "$BRIDGE" -j DROP
  iptables -w -C FORWARD -j "$FW_CHAIN" 2>/dev/null || iptables -w -I FORWARD 1 -j "$FW_CHAIN"
}

# Removes the iptables chains of kube-proxy, the kubelet and this script, for iptables
# and ip6tables.
iptables_cleanup() {
  local ipt t rule c chains
  if [ -n "$BIN" ] && [ -x "$BIN/kube-proxy" ]; then
    "$BIN/kube-proxy" --cleanup >>"$LOGS/kube-proxy.log" 2>&1 || true
  fi
  for ipt in iptables ip6tables; do
    command -v "$ipt-save" >/dev/null || continue
    for t in filter nat mangle; do
      # The jumps to those chains from the others.
      { "$ipt-save" -t "$t" 2>/dev/null || true; } | { grep -E "^-A .* -j (KUBE-[A-Z0-9-]+|$FW_CHAIN)( |$)" || true; } |
        { grep -vE "^-A (KUBE-|$FW_CHAIN )" || true; } | while read -r rule; do
          eval "$ipt -w -t $t -D ${rule#-A }" 2>/dev/null || true
        done
      chains=$({ "$ipt-save" -t "$t" 2>/dev/null || true; } | sed -n -E "s/^:((KUBE-[A-Z0-9-]+)|$FW_CHAIN) .*/\1/p")
      for c in $chains; do "$ipt" -w -t "$t" -F "$c" 2>/dev/null || true; done
      for c in $chains; do "$ipt" -w -t "$t" -X "$c" 2>/dev/null || true; done
    done
  done
}

# The kubelet sets vm.overcommit_memory, kernel.panic and kernel.panic_on_oops as it
# always does; `down` puts back the values the machine had.
save_sysctls() {
  local f="$STATE/sysctl.saved" k
  [ -s "$f" ] && return 0
  for k in vm.overcommit_memory kernel.panic kernel.panic_on_oops; do
    echo "$k=$(sysctl -n "$k")"
  done >"$f"
}
restore_sysctls() {
  local f="$STATE/sysctl.saved" kv
  [ -s "$f" ] || return 0
  while read -r kv; do sysctl -qw "$kv" || true; done <"$f"
  rm -f "$f"
}

# --- images -----------------------------------------------------------------------
# docker_label IMAGE LABEL: the label's value, or nothing.
docker_label() {
  docker image inspect --format "{{index .Config.Labels \"$2\"}}" "$1" 2>/dev/null || true
}

build_local_images() {
  local src="$HERE/kube/pause.c" sum tmp out="$LOGS/images.log"
  sum=$(sha256sum "$src" | cut -c1-16)
  if [ "$(docker_label "$PAUSE_IMAGE" lnbench.kube.source)" != "$sum" ]; then
    log "building $PAUSE_IMAGE (scripts/kube/pause.c)"
    tmp=$(mktemp -d)
    if ! gcc -static -Os -Wall -o "$tmp/pause" "$src" || ! strip "$tmp/pause"; then
      rm -rf "$tmp"
      die "could not compile $src"
    fi
    printf 'FROM scratch\nCOPY pause /pause\nENTRYPOINT ["/pause"]\n' >"$tmp/Dockerfile"
    DOCKER_BUILDKIT=0 docker build -q -t "$PAUSE_IMAGE" --label "lnbench.kube.source=$sum" "$tmp" >>"$out" 2>&1 ||
      { rm -rf "$tmp"; tail -n 20 "$out" >&2; die "could not build $PAUSE_IMAGE"; }
    rm -rf "$tmp"
  fi

  if readelf -l /bin/busybox 2>/dev/null | grep 'program interpreter' >/dev/null; then
    die "/bin/busybox is not static (Debian: apt-get install busybox-static)"
  fi
  sum=$(sha256sum /bin/busybox | cut -c1-16)
  if [ "$(docker_label "$BUSYBOX_IMAGE" lnbench.kube.source)" != "$sum" ]; then
    log "building $BUSYBOX_IMAGE (Debian's busybox-static)"
    tmp=$(mktemp -d)
    mkdir -p "$tmp/rootfs/bin" "$tmp/rootfs/tmp" "$tmp/rootfs/etc"
    chmod 1777 "$tmp/rootfs/tmp"
    cp /bin/busybox "$tmp/rootfs/bin/busybox"
    local a
    for a in $(/bin/busybox --list); do
      [ "$a" = busybox ] || ln -sf busybox "$tmp/rootfs/bin/$a"
    done
    for a in sh cat sleep tar; do [ -L "$tmp/rootfs/bin/$a" ] || die "busybox has no '$a'"; done
    printf 'FROM scratch\nCOPY rootfs/ /\nENV PATH=/bin\nCMD ["/bin/sh"]\n' >"$tmp/Dockerfile"
    DOCKER_BUILDKIT=0 docker build -q -t "$BUSYBOX_IMAGE" --label "lnbench.kube.source=$sum" "$tmp" >>"$out" 2>&1 ||
      { rm -rf "$tmp"; tail -n 20 "$out" >&2; die "could not build $BUSYBOX_IMAGE"; }
    rm -rf "$tmp"
  fi
}

# Imports each lnbench/* image of Docker whose ID changed since its last import (or that
# the cluster's containerd lacks), in one `docker save` stream.
import_images() {
  local stamps="$STATE/images" present ref id todo=() ids=() i t0
  mkdir -p "$stamps"
  present=$(ctr_ images ls -q 2>/dev/null || true)
  while read -r ref id; do
    [ -n "$ref" ] || continue
    case $ref in *"<none>"*) continue ;; esac
    if [ "$(cat "$stamps/${ref//[\/:]/_}" 2>/dev/null || true)" = "$id" ] && grep -qxF "docker.io/$ref" <<<"$present"; then
      continue
    fi
    todo+=("$ref")
    ids+=("$id")
  done < <(docker images --no-trunc --format '{{.Repository}}:{{.Tag}} {{.ID}}' --filter 'reference=lnbench/*')
  if [ "${#todo[@]}" -eq 0 ]; then
    log "images: the cluster has every lnbench/* image of Docker"
    return 0
  fi
  log "importing ${#todo[@]} image(s) into the cluster: ${todo[*]}"
  t0=$(now_ms)
  docker save "${todo[@]}" | ctr_ images import - >>"$LOGS/images.log" 2>&1 || {
    tail -n 20 "$LOGS/images.log" >&2
    die "could not import the images into the cluster's containerd"
  }
  for i in "${!todo[@]}"; do echo "${ids[$i]}" >"$stamps/${todo[$i]//[\/:]/_}"; done
  log "imported in $(since "$t0")"
}

# --- health -----------------------------------------------------------------------
etcd_healthy() { curl -fsS --max-time 2 "http://127.0.0.1:$ETCD_CLIENT_PORT/health" | grep '"health":"true"' >/dev/null; }
containerd_answers() { ctr --address "$CONTAINERD_SOCK" version; }
apiserver_ready() {
  curl -fsS --max-time 5 --cacert "$STATE/pki/ca.crt" --cert "$STATE/pki/admin.crt" --key "$STATE/pki/admin.key" \
    "https://127.0.0.1:$API_PORT/readyz" | grep -x ok >/dev/null
}
node_registered() { kctl get node "$NODE"; }
node_ready() {
  [ "$(kctl get node "$NODE" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}
default_sa() { kctl -n default get serviceaccount default; }
all_running() {
  local c
  for c in $COMPONENTS; do running_pid "$c" >/dev/null || return 1; done
}

smoke_running() {
  [ "$(kctl -n default get pod lnbench-kube-smoke -o 'jsonpath={.status.phase}' 2>/dev/null)" = Running ]
}
smoke_failed() {
  local phase
  phase=$(kctl -n default get pod lnbench-kube-smoke -o 'jsonpath={.status.phase}' 2>/dev/null || true)
  [ "$phase" = Failed ] || [ "$phase" = Succeeded ]
}

# A pod from the busybox image runs, then is deleted.
smoke_pod() {
  local t0 el next=10
  kctl -n default delete pod lnbench-kube-smoke --ignore-not-found --wait=true >/dev/null 2>&1 || true
  kctl create -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: lnbench-kube-smoke
  namespace: default
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 0
  containers:
  - name: smoke
    image: $BUSYBOX_IMAGE
    imagePullPolicy: Never
    command: ["/bin/sleep", "600"]
EOF
  t0=$(date +%s)
  until smoke_running; do
    el=$(( $(date +%s) - t0 ))
    if smoke_failed || [ "$el" -ge "$WAIT" ] || ! running_pid kubelet >/dev/null; then
      echo "kube-cluster: error: the smoke pod did not run:" >&2
      kctl -n default describe pod lnbench-kube-smoke >&2 || true
      log_tail containerd 15
      fail kubelet "the cluster cannot run a pod"
    fi
    if [ "$el" -ge "$next" ]; then log "still waiting for the smoke pod ($el s)"; next=$(( next + 10 )); fi
    sleep 0.5
  done
  kctl -n default delete pod lnbench-kube-smoke --wait=true --timeout="${WAIT}s" >/dev/null ||
    fail kubelet "the smoke pod was not deleted"
}

# --- commands ---------------------------------------------------------------------
lock() {
  mkdir -p "$RUN"
  exec 9>"$RUN/lock"
  flock 9
}

cmd_up() {
  local no_build=0 a t0
  for a in "$@"; do
    case $a in
      --no-build) no_build=1 ;;
      *) die "unknown option for up: $a" ;;
    esac
  done
  t0=$(now_ms)
  find_bins "$no_build"
  need_root up
  lock
  if all_running && node_ready; then
    if docker info >/dev/null 2>&1; then build_local_images && import_images; fi
    log "the cluster is up (node $NODE Ready); KUBECONFIG=$ADMIN_KUBECONFIG"
    return 0
  fi

  log "starting the cluster (Kubernetes $KUBE_VERSION, binaries in $BIN)"
  ensure_packages
  ensure_docker
  mkdir -p "$STATE" "$LOGS" "$LOGS/pods" "$RUN" "$STATE/kubelet"
  chmod 700 "$STATE"
  gen_pki
  write_kubeconfig "$STATE/admin.kubeconfig"
  write_kubeconfig "$ADMIN_KUBECONFIG"
  write_configs
  net_up
  save_sysctls

  start etcd etcd --name "$NODE" --data-dir "$STATE/etcd" --logger zap \
    --listen-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "$NODE=http://127.0.0.1:$ETCD_PEER_PORT" --initial-cluster-state new \
    --initial-cluster-token lnbench-kube --snapshot-count 10000
  start containerd containerd --config "$STATE/etc/containerd.toml"
  wait_for "etcd" etcd etcd_healthy
  wait_for "containerd" containerd containerd_answers

  start kube-apiserver "$BIN/kube-apiserver" \
    --bind-address=127.0.0.1 --secure-port="$API_PORT" --advertise-address="$NODE_IP" \
    --endpoint-reconciler-type=none \
    --etcd-servers="http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --service-cluster-ip-range="$SERVICE_CIDR" \
    --authorization-mode=Node,RBAC --allow-privileged=true \
    --client-ca-file="$STATE/pki/ca.crt" \
    --tls-cert-file="$STATE/pki/apiserver.crt" --tls-private-key-file="$STATE/pki/apiserver.key" \
    --kubelet-client-certificate="$STATE/pki/admin.crt" --kubelet-client-key="$STATE/pki/admin.key" \
    --kubelet-preferred-address-types=InternalIP,Hostname \
    --service-account-issuer=https://kubernetes.default.svc \
    --service-account-key-file="$STATE/pki/sa.pub" --service-account-signing-key-file="$STATE/pki/sa.key" \
    --profiling=false

  # While the apiserver starts: the images the pods need.
  build_local_images
  import_images

  wait_for "the apiserver (/readyz)" kube-apiserver apiserver_ready
  log "apiserver ready after $(since "$t0")"

  start kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig="$STATE/admin.kubeconfig" --secure-port=0 --leader-elect=false \
    --service-account-private-key-file="$STATE/pki/sa.key" --root-ca-file="$STATE/pki/ca.crt" \
    --use-service-account-credentials=false --controllers='*' --profiling=false
  start kube-scheduler "$BIN/kube-scheduler" --config="$STATE/etc/kube-scheduler.yaml" --secure-port=0
  start kubelet "$BIN/kubelet" --config="$STATE/etc/kubelet.yaml" --kubeconfig="$STATE/admin.kubeconfig" \
    --hostname-override="$NODE" --node-ip="$NODE_IP" --root-dir="$STATE/kubelet" --cert-dir="$STATE/kubelet/pki"
  wait_for "the node to register" kubelet node_registered
  start kube-proxy "$BIN/kube-proxy" --config="$STATE/etc/kube-proxy.yaml"
  wait_for "the node to be Ready" kubelet node_ready
  log "node $NODE Ready after $(since "$t0")"
  wait_for "the default ServiceAccount" kube-controller-manager default_sa
  local c
  for c in kube-scheduler kube-proxy; do running_pid "$c" >/dev/null || fail "$c" "$c exited"; done

  smoke_pod
  log "a pod ran and was deleted"
  log "the cluster is up in $(since "$t0"); KUBECONFIG=$ADMIN_KUBECONFIG"
}

# Kills every process left in the pods' cgroups (kubepods), in each cgroup hierarchy.
kill_pod_processes() {
  local i pids
  for i in 1 2 3 4 5; do
    pids=$(find /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u || true)
    [ -z "$pids" ] && return 0
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
    sleep 0.3
  done
}

# Pids of the containerd shims of the cluster's containerd (found by its socket).
cluster_shims() {
  local p
  for p in /proc/[0-9]*; do
    tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -F -- "-address $CONTAINERD_SOCK " >/dev/null && echo "${p#/proc/}"
  done
  return 0
}

# Unmounts everything mounted on or under the given directories, deepest first (the
# kubelet bind-mounts its root directory on itself).
unmount_under() {
  local d m
  for d in "$@"; do
    findmnt -rn -o TARGET | awk -v d="$d" '$0 == d || index($0, d "/") == 1' | sort -r | while read -r m; do
      umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    done
  done
}

cmd_down() {
  need_root down
  lock
  BIN=$(cached_bin_dir || true)
  local t0 pids
  t0=$(now_ms)
  # No new pods: the scheduler and the controllers stop first. Then the kubelet tears the
  # pods down (sandboxes, their network namespaces) before it stops itself.
  stop kube-scheduler
  stop kube-controller-manager
  if [ -n "$BIN" ] && running_pid kubelet >/dev/null && apiserver_ready 2>/dev/null; then
    log "deleting every pod"
    kctl delete pods --all --all-namespaces --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
    local i
    for i in $(seq 60); do
      [ -z "$(ctr_ tasks ls -q 2>/dev/null)" ] && break
      sleep 0.5
    done
  fi
  stop kubelet
  stop kube-proxy
  kill_pod_processes
  if running_pid containerd >/dev/null; then
    local id
    for id in $(ctr_ tasks ls -q 2>/dev/null || true); do ctr_ tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true; done
  fi
  stop containerd
  pids=$(cluster_shims)
  if [ -n "$pids" ]; then
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
  fi
  # The apiserver drains its requests for a long while on SIGTERM; its state goes anyway.
  stop kube-apiserver 5
  stop etcd
  iptables_cleanup
  ip link del "$BRIDGE" 2>/dev/null || true
  unmount_under "$STATE/kubelet" "$RUN/containerd" "$STATE/containerd"
  rm -rf --one-file-system "$STATE/etcd" "$STATE/kubelet" "$RUN/containerd" "$RUN/runc" "$STATE/cni/ipam" "$LOGS/pods"
  # The kubelet's device-plugin socket has a fixed place.
  rm -f /var/lib/kubelet/device-plugins/kubelet.sock
  rmdir /var/lib/kubelet/device-plugins /var/lib/kubelet 2>/dev/null || true
  # The pods' cgroups, now empty.
  find /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods -depth -type d -exec rmdir {} \; 2>/dev/null || true
  restore_sysctls
  log "the cluster is down ($(since "$t0")); binaries, PKI and imported images are kept"
}

cmd_status() {
  local c pid up=1
  for c in $COMPONENTS; do
    if pid=$(running_pid "$c"); then
      echo "$c: running (pid $pid)"
    else
      echo "$c: not running"
      up=0
    fi
  done
  BIN=$(cached_bin_dir || true)
  if [ "$up" = 1 ] && [ -n "$BIN" ] &&
    [ "$("$BIN/kubectl" --kubeconfig "$ADMIN_KUBECONFIG" --request-timeout=5s get node "$NODE" \
      -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]; then
    echo "up: node $NODE Ready, KUBECONFIG=$ADMIN_KUBECONFIG"
    return 0
  fi
  echo "down"
  return 1
}

cmd_images() {
  need_root images
  lock
  { running_pid containerd >/dev/null && containerd_answers >/dev/null 2>&1; } ||
    die "the cluster's containerd is not running (scripts/kube-cluster.sh up)"
  ensure_docker
  build_local_images
  import_images
}

case "${1:-}" in
  up) shift; cmd_up "$@" ;;
  down) cmd_down ;;
  status) cmd_status ;;
  images) cmd_images ;;
  env) echo "export KUBECONFIG=$ADMIN_KUBECONFIG" ;;
  kubeconfig) echo "$ADMIN_KUBECONFIG" ;;
  *)
    echo "usage: $0 up [--no-build] | down | status | images | env | kubeconfig" >&2
    exit 2
    ;;
esac
