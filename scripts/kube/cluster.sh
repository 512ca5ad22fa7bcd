#!/usr/bin/env bash
# A real Kubernetes API server for opcat's cluster tests: etcd + kube-apiserver (+ kube-controller-manager),
# built from the Go module proxy and run on 127.0.0.1 only. Recipe: ../shared/reference/kube-harness.md.
#
#   scripts/kube/cluster.sh build   build the binaries once per machine (cached, versioned)
#   scripts/kube/cluster.sh start   PKI (once per KUBE_HOME), start etcd + apiserver (+ KCM);
#                                   prints `export KUBECONFIG=…`
#   scripts/kube/cluster.sh stop    stop what start started
#   scripts/kube/cluster.sh all     build + start
#   scripts/kube/cluster.sh env     print the exports for a running cluster
#   scripts/kube/cluster.sh restart-apiserver   stop and start kube-apiserver on the same etcd (fault tests)
#   scripts/kube/cluster.sh restart-kubelet     stop and start the node's kubelet (fault tests)
#
# WITH_NODE=1 start also runs a real node (scripts/kube/node.sh: containerd, kubelet, kube-scheduler,
# kube-proxy, a plain-HTTP registry on the node's bridge) and prints `export OPCAT_TEST_REGISTRY=host:port`;
# the API server then listens on the node's bridge address instead of 127.0.0.1. Needs root.
#
# Environment: KUBE_VERSION (default 1.35.4), OPCAT_KUBE_CACHE (binaries; default ~/.cache/opcat/kube),
# KUBE_HOME (per-run state: PKI, etcd data, logs, kubeconfig; default ./.kube-test), WITH_KCM (1: also run
# kube-controller-manager for namespace deletion and garbage collection), KUBE_PORT (default 26443),
# ETCD_PORT (default 23790), PEER_PORT (default ETCD_PORT+10). Logs go to stderr and $KUBE_HOME/logs;
# stdout is only the export line.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-1.35.4}"
CACHE="${OPCAT_KUBE_CACHE:-$HOME/.cache/opcat/kube}/v$KUBE_VERSION"
BIN="$CACHE/bin"
KUBE_HOME="${KUBE_HOME:-$PWD/.kube-test}"
WITH_KCM="${WITH_KCM:-1}"
KUBE_PORT="${KUBE_PORT:-26443}"
ETCD_PORT="${ETCD_PORT:-23790}"
PEER_PORT="${PEER_PORT:-$((ETCD_PORT + 10))}"
PKI="$KUBE_HOME/pki"
RUN="$KUBE_HOME/run"
LOGS="$KUBE_HOME/logs"
# shellcheck source=node.sh
. "$(dirname "${BASH_SOURCE[0]}")/node.sh"
# a node runs (or is asked for): the API server listens on the node's bridge, where Pods reach it
WITH_NODE="${WITH_NODE:-0}"
[ -d "$NODE_RUN" ] && WITH_NODE=1
API_HOST=127.0.0.1
[ "$WITH_NODE" = 1 ] && API_HOST="$NODE_IP"
STAMP="$BIN/.stamp"
STAMP_TEXT="kubernetes v$KUBE_VERSION go $(go env GOVERSION 2>/dev/null || echo none) kcm node"

log() { echo "cluster.sh: $*" >&2; }

build() {
  if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$STAMP_TEXT" ]; then
    log "binaries for v$KUBE_VERSION already built in $BIN"
    return
  fi
  command -v go >/dev/null || {
    log "error: Go is needed to build kube-apiserver and etcd (apt-get install golang, or Go >= 1.25)"
    exit 2
  }
  local b="$CACHE/build"
  mkdir -p "$b" "$BIN"
  log "building kube-apiserver, etcd, kubectl, kube-controller-manager, kubelet, kube-scheduler, kube-proxy" \
    "v$KUBE_VERSION from the Go module proxy in $b (6–14 min on 2 cores) …"
  (
    cd "$b"
    export GOFLAGS=-mod=mod
    printf 'module opcat.local/kubebuild\n\ngo 1.25.0\n' > go.mod
    local gomod
    gomod=$(go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
    [ -n "$gomod" ] || { log "error: k8s.io/kubernetes@v$KUBE_VERSION not served by the Go module proxy"; exit 2; }
    # every k8s.io staging module pinned to v0.<minor>.<patch>, as kubernetes' own go.mod lists them
    { echo "require k8s.io/kubernetes v$KUBE_VERSION"; echo 'replace ('
      grep -E '=> \./staging/src/' "$gomod" | awk -v v="v0.${KUBE_VERSION#1.}" '{print "\t" $1 " => " $1 " " v}'
      echo ')'; } >> go.mod
    cat > tools.go <<'EOT'
//go:build tools

package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
EOT
    go mod tidy >&2
    mkdir -p out
    local minor="${KUBE_VERSION#*.}"; minor="${minor%%.*}"
    go build -trimpath -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=v$KUBE_VERSION \
      -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor" -o out/ \
      k8s.io/kubernetes/cmd/kube-apiserver go.etcd.io/etcd/server/v3 \
      k8s.io/kubernetes/cmd/kubectl k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-proxy >&2
    mv out/server "$BIN/etcd"
    mv out/kube-apiserver out/kubectl out/kube-controller-manager out/kubelet out/kube-scheduler out/kube-proxy "$BIN/"
  )
  echo "$STAMP_TEXT" > "$STAMP"
  log "built into $BIN"
}

# a client certificate `$1.crt`/`$1.key` for subject `$2`, in the current directory (the PKI)
client() {
  local name="$1" subj="$2"
  openssl req -newkey rsa:2048 -nodes -subj "$subj" -keyout "$name.key" -out "$name.csr" 2>/dev/null
  printf 'extendedKeyUsage = clientAuth\n' > client.cnf
  openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
    -extfile client.cnf -out "$name.crt" 2>/dev/null
}

pki() {
  # added later than the others: made for a PKI of an earlier version too
  if [ -f "$PKI/.done" ] && [ ! -f "$PKI/controller.crt" ]; then
    (cd "$PKI" && client controller "/O=system:masters/CN=opcat-controller")
  fi
  [ -f "$PKI/.done" ] && return
  command -v openssl >/dev/null || { log "error: openssl is needed"; exit 2; }
  mkdir -p "$PKI"
  log "making a throwaway CA, serving and client certificates, service-account keys in $PKI"
  (
    cd "$PKI"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=opcat-test-ca" \
      -keyout ca.key -out ca.crt 2>/dev/null
    cat > san.cnf <<'EOT'
[req]
distinguished_name = dn
[dn]
[ext]
subjectAltName = IP:127.0.0.1, IP:@SERVICE_IP@, IP:@NODE_IP@, DNS:localhost, DNS:kubernetes, \
  DNS:kubernetes.default, DNS:kubernetes.default.svc
keyUsage = digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
EOT
    # the first address of the Service CIDR (Pods' `kubernetes` Service) and the node's bridge address
    sed -i -e "s/@SERVICE_IP@/${SERVICE_CIDR%.*}.1/" -e "s/@NODE_IP@/$NODE_IP/" san.cnf
    openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" -keyout apiserver.key -out apiserver.csr 2>/dev/null
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile san.cnf -extensions ext -out apiserver.crt 2>/dev/null
    # client identities: admin (system:masters), alice and carol (certificates, no rights), bob (token, no rights);
    # the controllers run as their own identity (controller, system:masters), never as a user of the tests
    client admin "/O=system:masters/CN=opcat-admin"
    client alice "/CN=alice"
    client carol "/O=dev-team/CN=carol"
    client controller "/O=system:masters/CN=opcat-controller"
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    echo "$(openssl rand -hex 16),bob,bob-uid" > tokens.csv
    touch .done
  )
}

b64() { base64 -w0 < "$1"; }

kubeconfig() {
  local kc="$KUBE_HOME/kubeconfig" server="https://$API_HOST:$KUBE_PORT" token
  token=$(cut -d, -f1 "$PKI/tokens.csv")
  {
    echo "apiVersion: v1"
    echo "kind: Config"
    echo "clusters:"
    echo "- name: opcat-test"
    echo "  cluster: {server: \"$server\", certificate-authority-data: \"$(b64 "$PKI/ca.crt")\"}"
    echo "users:"
    for u in admin alice carol controller; do
      echo "- name: $u"
      echo "  user: {client-certificate-data: \"$(b64 "$PKI/$u.crt")\", client-key-data: \"$(b64 "$PKI/$u.key")\"}"
    done
    echo "- name: bob"
    echo "  user: {token: \"$token\"}"
    echo "contexts:"
    for u in admin alice bob carol controller; do
      echo "- name: $u"
      echo "  context: {cluster: opcat-test, user: $u}"
    done
    echo "current-context: admin"
  } > "$kc"
  chmod 600 "$kc"
}

running() { [ -f "$RUN/$1.pid" ] && kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null; }

wait_for() {
  local what="$1" url="$2" tries=0
  shift 2
  until curl -fsS "$@" "$url" >/dev/null 2>&1; do
    tries=$((tries + 1))
    if [ "$tries" -gt 600 ]; then log "error: $what did not become ready (see $LOGS)"; exit 1; fi
    sleep 0.1
  done
}

start() {
  [ -x "$BIN/kube-apiserver" ] || { log "error: binaries missing in $BIN; run: $0 build"; exit 2; }
  [ "$WITH_NODE" = 1 ] && node_preflight
  pki
  mkdir -p "$RUN" "$LOGS"
  if running apiserver; then
    log "already running (KUBE_HOME=$KUBE_HOME)"
    kubeconfig
    env_lines
    return
  fi
  # the bridge and the Service CIDR's route come first: nothing may reach a ClusterIP through the default route
  [ "$WITH_NODE" = 1 ] && node_network
  rm -rf "$RUN/etcd"
  "$BIN/etcd" --name opcat --data-dir "$RUN/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$PEER_PORT" \
    --initial-cluster "opcat=http://127.0.0.1:$PEER_PORT" --unsafe-no-fsync --log-level warn \
    > "$LOGS/etcd.log" 2>&1 &
  echo $! > "$RUN/etcd.pid"
  wait_for etcd "http://127.0.0.1:$ETCD_PORT/health"
  start_apiserver
  wait_for kube-apiserver "https://$API_HOST:$KUBE_PORT/readyz" \
    --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key"
  kubeconfig
  local tries=0
  until "$BIN/kubectl" --kubeconfig "$KUBE_HOME/kubeconfig" get namespace default >/dev/null 2>&1; do
    tries=$((tries + 1)); [ "$tries" -gt 300 ] && { log "error: namespace default never appeared"; exit 1; }
    sleep 0.1
  done
  if [ "$WITH_NODE" = 1 ]; then
    # every controller: Deployments get Pods, Services EndpointSlices, namespaces SA tokens and the root CA
    "$BIN/kube-controller-manager" --kubeconfig "$KUBE_HOME/kubeconfig" --controllers '*' \
      --root-ca-file "$PKI/ca.crt" --service-account-private-key-file "$PKI/sa.key" \
      --leader-elect=false --secure-port 0 --use-service-account-credentials=false \
      > "$LOGS/kcm.log" 2>&1 &
    echo $! > "$RUN/kcm.pid"
  elif [ "$WITH_KCM" = 1 ]; then
    "$BIN/kube-controller-manager" --kubeconfig "$KUBE_HOME/kubeconfig" \
      --controllers namespace-controller,garbage-collector-controller,clusterrole-aggregation-controller \
      --leader-elect=false --secure-port 0 --use-service-account-credentials=false \
      > "$LOGS/kcm.log" 2>&1 &
    echo $! > "$RUN/kcm.pid"
  fi
  [ "$WITH_NODE" = 1 ] && start_node
  log "up: https://$API_HOST:$KUBE_PORT (contexts admin, alice, bob, carol, controller; logs in $LOGS)"
  env_lines
}

env_lines() {
  echo "export KUBECONFIG=$KUBE_HOME/kubeconfig"
  if [ "$WITH_NODE" = 1 ]; then
    node_ports
    echo "export OPCAT_TEST_REGISTRY=$NODE_IP:$REGISTRY_PORT"
  fi
}

start_apiserver() {
  local node=(--endpoint-reconciler-type none)
  # with a node: Pods reach it through the `kubernetes` Service (a lease-reconciled endpoint on the bridge),
  # it reaches kubelets by their InternalIP, and webhooks behind Services at their endpoints
  [ "$WITH_NODE" = 1 ] && node=(--endpoint-reconciler-type lease --kubelet-preferred-address-types InternalIP,Hostname
    --enable-aggregator-routing=true)
  "$BIN/kube-apiserver" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address "$API_HOST" --advertise-address "$API_HOST" --secure-port "$KUBE_PORT" \
    --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
    --client-ca-file "$PKI/ca.crt" --token-auth-file "$PKI/tokens.csv" --authorization-mode RBAC \
    --service-account-issuer https://kubernetes.default.svc \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --service-cluster-ip-range "$SERVICE_CIDR" "${node[@]}" --v 1 \
    >> "$LOGS/apiserver.log" 2>&1 &
  echo $! > "$RUN/apiserver.pid"
}

# Stops kube-apiserver (TERM, KILL after 10 s) and starts it again on the same etcd: a fault test.
restart_apiserver() {
  if running apiserver; then
    local pid; pid=$(cat "$RUN/apiserver.pid")
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  start_apiserver
  wait_for kube-apiserver "https://$API_HOST:$KUBE_PORT/readyz" \
    --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key"
  log "kube-apiserver restarted"
}

# Stops the node's kubelet (TERM, KILL after 10 s) and starts it again: its Pods keep running (a fault test).
restart_kubelet() {
  running kubelet || { log "error: no kubelet runs (WITH_NODE=1 start)"; exit 2; }
  kill_pids "$(cat "$RUN/kubelet.pid")"
  node_ports
  start_kubelet
  wait_node_ready
  log "kubelet restarted"
}

stop() {
  stop_node
  local pids=()
  for p in kcm apiserver etcd; do
    if running "$p"; then pids+=("$(cat "$RUN/$p.pid")"); fi
  done
  [ "${#pids[@]}" -gt 0 ] && kill -TERM "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 1 100); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  rm -f "$RUN"/*.pid
  log "stopped"
}

case "${1:-}" in
  build) build ;;
  start) start ;;
  stop) stop ;;
  restart-apiserver) restart_apiserver ;;
  restart-kubelet) restart_kubelet ;;
  all) build; start ;;
  env) env_lines ;;
  *) echo "usage: $0 build|start|stop|all|env|restart-apiserver|restart-kubelet" >&2; exit 2 ;;
esac
