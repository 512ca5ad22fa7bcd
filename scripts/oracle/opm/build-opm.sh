#!/usr/bin/env bash
# build-opm.sh — build upstream operator-registry's `opm` binary for side-by-side
# benchmarks/comparisons with opcat. Runs entirely outside the opcat repository.
#
# Inputs (override via environment):
#   OPREG_GIT   git dir of an operator-registry mirror (no network access to github needed)
#   OPREG_REF   commit to build (default: 4f9d6f22 = "Bump go.podman.io/common from 0.69.0 to 0.69.1 (#2064)",
#               git describe: v1.73.0-23-g4f9d6f22)
#   BUILD_DIR   scratch dir (default /tmp/opm-build); the source is exported to $BUILD_DIR/src
#   OUT         output binary (default $HOME/.cache/opcat/opm/opm)
#   CGO_ENABLED 1 (default when gcc is available; matches upstream release builds and makes
#               the sqlite-based commands work via mattn/go-sqlite3) or 0 (pure Go; sqlite
#               commands then fail at runtime, FBC commands are unaffected)
#
# Requirements: Go >= the `go` line of operator-registry's go.mod (1.26.5 at 4f9d6f22),
# reachable Go module proxy (default GOPROXY), gcc + libc6-dev for CGO_ENABLED=1.
#
# Known obstacle: go.podman.io/common v0.69.1 (required by go.mod at 4f9d6f22) is NOT
# served by proxy.golang.org (403 "This module version is not available"), but v0.69.0
# is. operator-registry only imports go.podman.io/common/pkg/auth (GetDefaultAuthFile)
# from it, so we pin it to v0.69.0 with a replace directive. If v0.69.0 ever disappears
# from the proxy too, set PODMAN_COMMON_STANDIN=1 to use the minimal local stand-in
# module written below instead.
set -euo pipefail

export PATH="$PATH:/usr/local/go/bin"
OPREG_GIT=${OPREG_GIT:-/work/.mirror/operator-framework+operator-registry/repo}
OPREG_REF=${OPREG_REF:-4f9d6f222b01aac84c52de7dbdaa6a289380a303}
BUILD_DIR=${BUILD_DIR:-/tmp/opm-build}
OUT=${OUT:-$HOME/.cache/opcat/opm/opm}
PODMAN_COMMON_STANDIN=${PODMAN_COMMON_STANDIN:-0}
if [ -z "${CGO_ENABLED:-}" ]; then
  if command -v gcc >/dev/null 2>&1; then CGO_ENABLED=1; else CGO_ENABLED=0; fi
fi
export CGO_ENABLED

status() { echo "$(date -u +%FT%TZ) step: $*" | tee "$BUILD_DIR/STATUS"; }

mkdir -p "$BUILD_DIR"
status "export source $OPREG_REF"
rm -rf "$BUILD_DIR/src"
mkdir -p "$BUILD_DIR/src"
git --git-dir="$OPREG_GIT" archive "$OPREG_REF" | tar -x -C "$BUILD_DIR/src"

# Version information the same way the Makefile / goreleaser derive it
# (git describe is not available in an archive export, so compute it from the mirror).
PKG=github.com/operator-framework/operator-registry
GIT_COMMIT=$(git --git-dir="$OPREG_GIT" rev-parse --short "$OPREG_REF")
OPM_VERSION=$(git --git-dir="$OPREG_GIT" describe --always --tags "$OPREG_REF")
BUILD_DATE=$(date -u +'%Y-%m-%dT%H:%M:%SZ')

cd "$BUILD_DIR/src"
if [ "$PODMAN_COMMON_STANDIN" = 1 ]; then
  status "write go.podman.io/common stand-in"
  # Minimal stand-in providing only what operator-registry imports from the module:
  #   pkg/image/containersimageregistry/registry.go  -> auth.GetDefaultAuthFile
  #   pkg/image/containerdregistry/resolver.go       -> auth.GetDefaultAuthFile
  # Semantics copied from go.podman.io/common@v0.69.0/pkg/auth/auth.go:
  #   $REGISTRY_AUTH_FILE if set; else $DOCKER_CONFIG/config.json if DOCKER_CONFIG set;
  #   else "" (callers in operator-registry then fall back to ~/.docker/config.json).
  mkdir -p "$BUILD_DIR/podman-common-standin/pkg/auth"
  cat > "$BUILD_DIR/podman-common-standin/go.mod" <<'GOMOD'
module go.podman.io/common

go 1.24
GOMOD
  cat > "$BUILD_DIR/podman-common-standin/pkg/auth/auth.go" <<'GOSRC'
// Package auth is a minimal stand-in for go.podman.io/common/pkg/auth, providing
// only GetDefaultAuthFile, the one symbol operator-registry uses.
package auth

import (
	"os"
	"path/filepath"
)

// GetDefaultAuthFile returns env value REGISTRY_AUTH_FILE as default
// --authfile path used in multiple --authfile flag definitions.
// Do not use this to obtain the actual default authfile path; it
// returns "" when no environment override is set (as upstream does).
func GetDefaultAuthFile() string {
	if authfile := os.Getenv("REGISTRY_AUTH_FILE"); authfile != "" {
		return authfile
	}
	// Upstream: if DOCKER_CONFIG is set, only config.json in that path is read.
	if authEnv := os.Getenv("DOCKER_CONFIG"); authEnv != "" {
		return filepath.Join(authEnv, "config.json")
	}
	return ""
}
GOSRC
  go mod edit -replace go.podman.io/common="$BUILD_DIR/podman-common-standin"
else
  status "pin go.podman.io/common to v0.69.0 (v0.69.1 not on proxy)"
  go mod edit -replace go.podman.io/common=go.podman.io/common@v0.69.0
fi
# go.sum entries for the replacement are added by `go build -mod=mod` below; all other
# dependencies stay exactly as pinned by operator-registry's go.mod/go.sum.

# opm pulls images via containers/image, which needs a signature policy.
if [ ! -e /etc/containers/policy.json ] && [ -w /etc ]; then
  mkdir -p /etc/containers
  echo '{"default":[{"type":"insecureAcceptAnything"}]}' > /etc/containers/policy.json
fi

# Tags/ldflags as in release/goreleaser.linux.yaml (json1 is for go-sqlite3; -static
# linking is left out so that no static libc is required).
TAGS=containers_image_openpgp
[ "$CGO_ENABLED" = 1 ] && TAGS=json1,$TAGS
status "go build (CGO_ENABLED=$CGO_ENABLED, tags=$TAGS, $OPM_VERSION)"
mkdir -p "$(dirname "$OUT")"
OPM_LDFLAGS="-s -w -X '$PKG/cmd/opm/version.gitCommit=$GIT_COMMIT'"
OPM_LDFLAGS+=" -X '$PKG/cmd/opm/version.opmVersion=$OPM_VERSION' -X '$PKG/cmd/opm/version.buildDate=$BUILD_DATE'"
nice -n 10 go build -mod=mod -trimpath -tags "$TAGS" \
  -ldflags "$OPM_LDFLAGS" \
  -o "$OUT" ./cmd/opm

status "done: $OUT"
"$OUT" version
