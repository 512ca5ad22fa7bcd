# shellcheck shell=bash
# A real node beside the control plane of scripts/kube/cluster.sh (sourced by it when WITH_NODE=1):
# containerd + runc + the CNI bridge plugin (Debian packages), kubelet, kube-scheduler and kube-proxy (built
# with the API server), a locally built pause image and a plain-HTTP docker-registry that containerd and Pods
# both reach. Recipe and the reason for each setting: ../shared/reference/node-harness.md.
#
# No packet may leave the VM: everything listens on loopback or on the node's own bridge; the Service CIDR is
# routed to that bridge before anything starts (an unsynced ClusterIP would otherwise follow the default
# route), and a filter chain drops whatever a Pod sends to any interface but the bridge. One node per VM
# (kube-proxy owns the host's KUBE-* chains): a lock in /run says whose it is.
#
# Names are unique per KUBE_HOME: bridge opcbr<id>, node opcat-node-<id>, cgroup root /opcat-<id>, chain
# OPCAT-NODE-<id>. `stop` removes processes, mounts, bridge, route, chains, cgroups and restores sysctls.

NODE_ID="$(printf %s "$KUBE_HOME" | sha256sum | cut -c1-6)"
NODE_NAME="opcat-node-$NODE_ID"
BRIDGE="opcbr$NODE_ID"
CGROUP_ROOT="opcat-$NODE_ID"
CHAIN="OPCAT-NODE-$NODE_ID"
POD_CIDR="${POD_CIDR:-10.244.27.0/24}"
SERVICE_CIDR="${SERVICE_CIDR:-10.0.0.0/24}"
POD_PREFIX="${POD_CIDR%.*}"
NODE_IP="$POD_PREFIX.1"
NODE_LOCK=/run/opcat-node.lock
PAUSE_IMAGE="registry.k8s.io/pause:3.10.1"
NODE_RUN="$RUN/node"
NODE_ENV="$RUN/node.env"
CTR_SOCK="$NODE_RUN/containerd/containerd.sock"

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

node_preflight() {
  local missing=()
  for c in containerd runc ctr iptables ip docker-registry gcc; do command -v "$c" >/dev/null || missing+=("$c"); done
  [ -x /usr/lib/cni/bridge ] || missing+=("containernetworking-plugins")
  [ -x "$BIN/kubelet" ] || missing+=("$BIN/kubelet (run: $0 build)")
  if [ "${#missing[@]}" -gt 0 ]; then log "error: the node needs: ${missing[*]}"; exit 2; fi
  [ "$(id -u)" = 0 ] || { log "error: the node needs root (network, mounts, cgroups)"; exit 2; }
  if [ -f "$NODE_LOCK" ] && [ "$(cat "$NODE_LOCK")" != "$KUBE_HOME" ] && [ -d "$(cat "$NODE_LOCK")" ]; then
    log "error: a node of $(cat "$NODE_LOCK") runs on this VM (one per VM: kube-proxy owns the KUBE-* chains)"
    exit 2
  fi
}

# The bridge, its address (the node's IP, the API server's advertise address, the registry's address), the
# Service CIDR routed to it, and the chain that keeps Pod traffic on the bridge: before anything starts.
node_network() {
  echo "$KUBE_HOME" > "$NODE_LOCK"
  mkdir -p "$NODE_RUN"
  if [ ! -f "$NODE_RUN/sysctl.orig" ]; then
    { echo "net.ipv4.ip_forward=$(cat /proc/sys/net/ipv4/ip_forward)"
      echo "net.ipv4.conf.all.route_localnet=$(cat /proc/sys/net/ipv4/conf/all/route_localnet)"
      local nf; nf=$(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null || echo 1)
      echo "net.bridge.bridge-nf-call-iptables=$nf"
    } > "$NODE_RUN/sysctl.orig"
  fi
  ip link show "$BRIDGE" >/dev/null 2>&1 || ip link add "$BRIDGE" type bridge
  ip addr show dev "$BRIDGE" | grep -q " $NODE_IP/" || ip addr add "$NODE_IP/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  ip route replace "$SERVICE_CIDR" dev "$BRIDGE"
  sysctl -qw net.ipv4.ip_forward=1
  [ -f /proc/sys/net/bridge/bridge-nf-call-iptables ] && sysctl -qw net.bridge.bridge-nf-call-iptables=1
  iptables -w -N "$CHAIN" 2>/dev/null || iptables -w -F "$CHAIN"
  # from the Pods' bridge to anything but the bridge: dropped (Pods reach the host, each other and ClusterIPs)
  iptables -w -A "$CHAIN" -i "$BRIDGE" ! -o "$BRIDGE" -j DROP
  iptables -w -C FORWARD -j "$CHAIN" 2>/dev/null || iptables -w -I FORWARD 1 -j "$CHAIN"
}

node_ports() {
  if [ ! -f "$NODE_ENV" ]; then
    {
      echo "KUBELET_PORT=$(free_port)"
      echo "KUBELET_HEALTHZ_PORT=$(free_port)"
      echo "PROXY_HEALTHZ_PORT=$(free_port)"
      echo "PROXY_METRICS_PORT=$(free_port)"
      echo "REGISTRY_PORT=$(free_port)"
    } > "$NODE_ENV"
  fi
  # shellcheck disable=SC1090
  . "$NODE_ENV"
}

# The pause image: a static C program that sleeps and reaps, as a docker-archive imported with ctr.
pause_image() {
  local d="$NODE_RUN/pause"
  mkdir -p "$d/rootfs"
  cat > "$d/pause.c" <<'EOT'
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static void quit(int s) { (void)s; _exit(0); }
static void reap(int s) { (void)s; while (waitpid(-1, 0, WNOHANG) > 0) {} }
int main(void) {
  signal(SIGINT, quit); signal(SIGTERM, quit); signal(SIGCHLD, reap);
  for (;;) pause();
}
EOT
  gcc -Os -static -s -o "$d/rootfs/pause" "$d/pause.c"
  (
    cd "$d"
    tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C rootfs -cf layer.tar pause
    local diff; diff=$(sha256sum layer.tar | cut -d' ' -f1)
    printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":["/pause"],"User":"65535:65535"},%s}' \
      "\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"sha256:$diff\"]}" > config.json
    printf '[{"Config":"config.json","RepoTags":["%s"],"Layers":["layer.tar"]}]' "$PAUSE_IMAGE" > manifest.json
    tar --sort=name --mtime=@0 --owner=0 --group=0 -cf pause.tar manifest.json config.json layer.tar
  )
  ctr --address "$CTR_SOCK" -n k8s.io images import "$d/pause.tar" >&2
}

node_configs() {
  local c="$NODE_RUN/conf"
  mkdir -p "$c" "$NODE_RUN/cni/net.d" "$NODE_RUN/registry" "$NODE_RUN/pod-logs"
  cat > "$c/containerd.toml" <<EOT
version = 2
root = "$NODE_RUN/containerd/root"
state = "$NODE_RUN/containerd/state"
[grpc]
  address = "$CTR_SOCK"
[ttrpc]
  address = ""
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$NODE_RUN/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$NODE_RUN/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$NODE_RUN/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$NODE_RUN/certs.d"
EOT
  cat > "$NODE_RUN/cni/net.d/10-opcat.conflist" <<EOT
{"cniVersion": "0.4.0", "name": "opcat-$NODE_ID", "plugins": [{"type": "bridge", "bridge": "$BRIDGE",
 "isGateway": true, "ipMasq": false, "hairpinMode": true, "ipam": {"type": "host-local",
 "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$NODE_IP"}]], "routes": [{"dst": "$SERVICE_CIDR"}],
 "dataDir": "$NODE_RUN/cni/ipam"}}]}
EOT
  # Pods get no default route: the node (on their subnet) and ClusterIPs (through the node) are all they reach
  # the test registry is plain HTTP on the bridge, and every other registry name is served by it too
  # (`_default`, and quay.io spelled out): no pull ever leaves the VM
  local h
  for h in "$NODE_IP:$REGISTRY_PORT" _default quay.io; do
    mkdir -p "$NODE_RUN/certs.d/$h"
    printf 'server = "http://%s"\n[host."http://%s"]\n  capabilities = ["pull", "resolve"]\n' \
      "$NODE_IP:$REGISTRY_PORT" "$NODE_IP:$REGISTRY_PORT" > "$NODE_RUN/certs.d/$h/hosts.toml"
  done
  cat > "$c/registry.yml" <<EOT
version: 0.1
log: {level: warn}
storage: {filesystem: {rootdirectory: $NODE_RUN/registry}, delete: {enabled: true}}
http: {addr: "$NODE_IP:$REGISTRY_PORT"}
EOT
  # Pods get no resolver outside the VM: no cluster DNS runs, and the host's resolv.conf is not theirs
  echo "nameserver 127.0.0.1" > "$c/resolv.conf"
  cat > "$c/kubelet.yaml" <<EOT
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /$CGROUP_ROOT
failSwapOn: false
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
podLogsDir: $NODE_RUN/pod-logs
volumePluginDir: $NODE_RUN/volume-plugins
resolvConf: $c/resolv.conf
podCIDR: $POD_CIDR
serializeImagePulls: false
evictionHard: {memory.available: "1Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
containerRuntimeEndpoint: unix://$CTR_SOCK
EOT
  cat > "$c/kube-proxy.yaml" <<EOT
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: $KUBE_HOME/kubeconfig}
hostnameOverride: $NODE_NAME
bindAddress: $NODE_IP
healthzBindAddress: 127.0.0.1:$PROXY_HEALTHZ_PORT
metricsBindAddress: 127.0.0.1:$PROXY_METRICS_PORT
clusterCIDR: $POD_CIDR
nodePortAddresses: ["$NODE_IP/32"]
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {localhostNodePorts: false}
EOT
}

node_cgroups() {
  local h
  for h in /sys/fs/cgroup/*/; do
    [ "$(basename "$h")" = unified ] && continue
    mkdir -p "$h$CGROUP_ROOT"
    if [ -f "${h}cpuset.cpus" ]; then
      cat "${h}cpuset.cpus" > "$h$CGROUP_ROOT/cpuset.cpus"
      cat "${h}cpuset.mems" > "$h$CGROUP_ROOT/cpuset.mems"
    fi
  done
}

start_bg() {
  local name="$1"; shift
  "$@" > "$LOGS/$name.log" 2>&1 &
  echo $! > "$RUN/$name.pid"
}

# After the control plane: containerd, the pause image, the registry, kubelet, scheduler, kube-proxy;
# returns when the node is Ready, kube-proxy has synced, and the default ServiceAccount exists.
start_node() {
  local t0=$SECONDS
  node_ports
  node_configs
  node_cgroups
  [ -f "$NODE_RUN/shim-sockets.before" ] || ls /run/containerd/s 2>/dev/null | sort > "$NODE_RUN/shim-sockets.before" \
    || true
  # fixed paths of the kubelet, removed on stop when this node made them
  [ -d /var/lib/kubelet ] || echo /var/lib/kubelet >> "$NODE_RUN/created"
  [ -d /var/log/containers ] || echo /var/log/containers >> "$NODE_RUN/created"
  [ -d /var/log/pods ] || echo /var/log/pods >> "$NODE_RUN/created"
  [ -d /run/containerd ] || echo /run/containerd >> "$NODE_RUN/created"
  # a second guard for pulls: any registry host that is not the node's goes to a proxy that refuses
  running containerd || HTTPS_PROXY=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 \
    NO_PROXY="$NODE_IP,127.0.0.1,localhost" start_bg containerd containerd --config "$NODE_RUN/conf/containerd.toml"
  local tries=0
  until ctr --address "$CTR_SOCK" version >/dev/null 2>&1; do
    tries=$((tries + 1)); [ "$tries" -gt 300 ] && { log "error: containerd did not start (see $LOGS)"; exit 1; }
    sleep 0.1
  done
  ctr --address "$CTR_SOCK" -n k8s.io images ls -q | grep -qxF "$PAUSE_IMAGE" || pause_image
  running registry || start_bg registry docker-registry serve "$NODE_RUN/conf/registry.yml"
  wait_for registry "http://$NODE_IP:$REGISTRY_PORT/v2/"
  running kubelet || start_kubelet
  running scheduler || start_bg scheduler "$BIN/kube-scheduler" --kubeconfig "$KUBE_HOME/kubeconfig" \
    --secure-port 0 --leader-elect=false
  running proxy || start_bg proxy "$BIN/kube-proxy" --config "$NODE_RUN/conf/kube-proxy.yaml"
  local k=("$BIN/kubectl" --kubeconfig "$KUBE_HOME/kubeconfig")
  wait_node_ready
  wait_for kube-proxy "http://127.0.0.1:$PROXY_HEALTHZ_PORT/healthz"
  tries=0
  until "${k[@]}" get serviceaccount default -n default >/dev/null 2>&1 \
    && "${k[@]}" get configmap kube-root-ca.crt -n default >/dev/null 2>&1; do
    tries=$((tries + 1)); [ "$tries" -gt 600 ] && { log "error: no default ServiceAccount (KCM; see $LOGS)"; exit 1; }
    sleep 0.1
  done
  log "node $NODE_NAME Ready in $((SECONDS - t0)) s (pods $POD_CIDR on $BRIDGE; registry $NODE_IP:$REGISTRY_PORT)"
}

start_kubelet() {
  start_bg kubelet "$BIN/kubelet" --config "$NODE_RUN/conf/kubelet.yaml" \
    --kubeconfig "$KUBE_HOME/kubeconfig" --root-dir "$NODE_RUN/kubelet" --cert-dir "$NODE_RUN/kubelet-pki" \
    --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" --v 1
}

wait_node_ready() {
  local tries=0
  until "$BIN/kubectl" --kubeconfig "$KUBE_HOME/kubeconfig" get node "$NODE_NAME" \
    -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null | grep -qx True; do
    tries=$((tries + 1)); [ "$tries" -gt 1200 ] && { log "error: node $NODE_NAME never Ready (see $LOGS)"; exit 1; }
    sleep 0.1
  done
}

kill_pids() {
  local pids=("$@") alive pid
  [ "${#pids[@]}" -gt 0 ] || return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 1 100); do
    alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
}

# Everything start_node made, in reverse: workloads (while the kubelet can still tear down their sandboxes),
# node processes, container processes (by the pids in the node's cgroups), shims (by our containerd socket in
# their command line), mounts under the node's directory, cgroups, iptables chains, route, bridge, sysctls.
stop_node() {
  [ -d "$NODE_RUN" ] || return 0
  local k=("$BIN/kubectl" --kubeconfig "$KUBE_HOME/kubeconfig" --request-timeout 5s)
  if running apiserver && running kubelet; then
    "${k[@]}" delete validatingwebhookconfigurations,mutatingwebhookconfigurations --all --wait=false \
      >/dev/null 2>&1 || true
    "${k[@]}" delete deployments,replicasets,statefulsets,daemonsets,jobs --all -A --cascade=orphan --wait=false \
      >/dev/null 2>&1 || true
    "${k[@]}" delete pods --all -A --grace-period=1 --wait=false >/dev/null 2>&1 || true
    for _ in $(seq 1 150); do
      [ -z "$("${k[@]}" get pods -A -o name 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  local pids=() p
  for p in proxy scheduler kubelet registry; do running "$p" && pids+=("$(cat "$RUN/$p.pid")"); done
  kill_pids "${pids[@]}"
  # container processes left (a Pod the kubelet did not finish): their pids are in the node's cgroups
  local f pid
  for f in $(find /sys/fs/cgroup/pids/"$CGROUP_ROOT" -name cgroup.procs 2>/dev/null); do
    while read -r pid; do kill -KILL "$pid" 2>/dev/null || true; done < "$f"
  done
  # containerd's shims: started with our socket as -address
  for p in /proc/[0-9]*; do
    if tr '\0' ' ' < "$p/cmdline" 2>/dev/null | grep -q -- "-address $CTR_SOCK"; then
      kill -KILL "${p#/proc/}" 2>/dev/null || true
    fi
  done
  running containerd && kill_pids "$(cat "$RUN/containerd.pid")"
  awk -v d="$NODE_RUN" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do
    umount -l "$m" 2>/dev/null || true
  done
  local h
  for h in /sys/fs/cgroup/*/; do
    if [ -d "$h$CGROUP_ROOT" ]; then find "$h$CGROUP_ROOT" -depth -type d -exec rmdir {} \; 2>/dev/null || true; fi
  done
  "$BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true
  local t c
  for t in filter nat mangle; do
    for c in KUBE-KUBELET-CANARY KUBE-FIREWALL KUBE-PROXY-CANARY KUBE-IPTABLES-HINT; do
      iptables -w -t "$t" -L "$c" -n >/dev/null 2>&1 || continue
      iptables-save -t "$t" | { grep -- "-j $c\$" || true; } | sed 's/^-A/-D/' | while read -r rule; do
        # shellcheck disable=SC2086
        iptables -w -t "$t" $rule 2>/dev/null || true
      done
      iptables -w -t "$t" -F "$c" 2>/dev/null || true
      iptables -w -t "$t" -X "$c" 2>/dev/null || true
    done
  done
  iptables -w -D FORWARD -j "$CHAIN" 2>/dev/null || true
  iptables -w -F "$CHAIN" 2>/dev/null || true
  iptables -w -X "$CHAIN" 2>/dev/null || true
  ip route del "$SERVICE_CIDR" dev "$BRIDGE" 2>/dev/null || true
  ip link del "$BRIDGE" 2>/dev/null || true
  if [ -f "$NODE_RUN/sysctl.orig" ]; then
    while read -r kv; do sysctl -qw "$kv" 2>/dev/null || true; done < "$NODE_RUN/sysctl.orig"
  fi
  if [ -f "$NODE_RUN/shim-sockets.before" ] && [ -d /run/containerd/s ]; then
    comm -13 "$NODE_RUN/shim-sockets.before" <(ls /run/containerd/s | sort) | while read -r s; do
      rm -f "/run/containerd/s/$s"
    done
  fi
  if [ -f "$NODE_RUN/created" ]; then
    while read -r d; do rm -rf "$d"; done < "$NODE_RUN/created"
  fi
  if [ "$(cat "$NODE_LOCK" 2>/dev/null)" = "$KUBE_HOME" ]; then rm -f "$NODE_LOCK"; fi
  rm -rf "$NODE_RUN" "$NODE_ENV"
  rm -f "$RUN"/{containerd,kubelet,scheduler,proxy,registry}.pid
  log "node $NODE_NAME removed"
}
