#!/usr/bin/env bash
# Regenerates the documentation's screenshots (docs/screenshots/) with the
# dashboard's browser walk-through; the tests write theirs elsewhere.
# Needs bin/minisched (hack/build.sh bin/minisched .), npm ci and Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
SCREENSHOTS="$PWD/docs/screenshots" MINISCHED_BIN="${MINISCHED_BIN:-$PWD/bin/minisched}" node --test test/web/e2e.test.mjs
git status --short docs/screenshots
