#!/usr/bin/env bash
# Builds the minisched binary the way CI tests it and the image ships it: a
# static, CGO-free binary. Usage: hack/build.sh [output] (default bin/minisched).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bin/minisched}
mkdir -p "$(dirname "$out")"
CGO_ENABLED=0 GOFLAGS=-trimpath go build -ldflags='-s -w' -o "$out" .
echo "built $out"
