#!/usr/bin/env bash
# Runs every test of minisched: Go unit and integration tests (against a real
# embedded kube-apiserver), the race detector on every package, the
# dashboard's node tests and its end-to-end test in headless Chromium.
# Installs what a fresh machine lacks (Debian's chromium and libxml2-utils,
# the npm test deps).
set -euo pipefail
cd "$(dirname "$0")/.."
# Build and test the static binary the image ships (hack/build.sh), with one
# shared build cache: a cold build of Kubernetes takes minutes.
export CGO_ENABLED=0 GOFLAGS=-trimpath

log() { printf '\n== %s\n' "$*"; }

# ensure_deb COMMAND PACKAGE WHY installs Debian's PACKAGE when COMMAND is
# missing.
ensure_deb() {
  if command -v "$1" >/dev/null 2>&1; then return; fi
  log "installing Debian's $2 $3"
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$2" >/dev/null
}

ensure_node_deps() {
  if ! command -v node >/dev/null 2>&1; then
    echo "node is required for the dashboard tests (Node.js 20 or later)" >&2
    exit 1
  fi
  if [ -f package-lock.json ] && [ ! -d node_modules ]; then
    log "installing the dashboard's test dependencies"
    npm ci --no-audit --no-fund --loglevel=error
  fi
}

log "gofmt and go vet"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change: $unformatted" >&2
  exit 1
fi
go vet ./...

log "building minisched"
hack/build.sh bin/minisched

log "building kubectl v1.37.2 from the module cache (tests run it against the embedded cluster)"
hack/build.sh bin/kubectl k8s.io/kubernetes/cmd/kubectl
export KUBECTL="$PWD/bin/kubectl" PATH="$PWD/bin:$PATH"

ensure_deb xmllint libxml2-utils "(xmllint checks the JUnit reports against their schema)"

log "Go tests"
# One package at a time: each starts its own control planes, and two at once
# on a 2-core machine make the timing-sensitive tests flaky.
go test -count=1 -p 1 -timeout 40m ./...

log "race detector on every package"
# A second build of Kubernetes, instrumented. -short runs fewer of the
# queue's randomized differential sequences (the full set ran above).
CGO_ENABLED=1 go test -count=1 -race -short -p 1 -timeout 60m ./...

log "fuzzing briefly: each decoder, the queue against upstream's, the REST handlers end to end (the seed corpora are in testdata/fuzz)"
# FuzzREST runs against a real control plane; -parallel 1 keeps it to one
# worker, so one control plane more.
for target in "./manifest FuzzDecode" "./minisched/schedconfig FuzzLoad" "./scenario FuzzParse" "./minisched/queue FuzzDifferential" "./server FuzzREST"; do
  set -- $target
  go test -run='^$' -fuzz="^$2\$" -fuzztime="${FUZZTIME:-15s}" -parallel 1 "$1"
done

if [ -d test/web ]; then
  ensure_deb chromium chromium "for the browser tests"
  ensure_node_deps
  log "dashboard tests (node --test, headless Chromium)"
  MINISCHED_BIN="$PWD/bin/minisched" node --test test/web/
  log "the browser walk-through again at 1280x720 (a projector)"
  shots="$(mktemp -d)"
  VIEWPORT=1280x720 SCREENSHOTS="$shots" MINISCHED_BIN="$PWD/bin/minisched" node --test test/web/e2e.test.mjs
  rm -rf "$shots"
fi
log "all tests passed"
