#!/usr/bin/env bash
# Builds the minisched binary the way CI tests it and the image ships it: a
# static, CGO-free binary. Usage: hack/build.sh [output] [package]
# (default bin/minisched and .); hack/build.sh bin/kubectl
# k8s.io/kubernetes/cmd/kubectl builds kubectl of the same Kubernetes
# version (a tool of go.mod), stamped with that version.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bin/minisched}
pkg=${2:-.}
mkdir -p "$(dirname "$out")"
version=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
minor=${version#v1.}
minor=${minor%%.*}
stamp="-X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
CGO_ENABLED=0 GOFLAGS=-trimpath go build -ldflags="-s -w $stamp" -o "$out" "$pkg"
echo "built $out"
