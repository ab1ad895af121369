#!/usr/bin/env bash
# vendor-web.sh fetches the dashboard's browser libraries with `npm pack`
# (npm's default registry), checks each tarball against its pinned integrity,
# and copies the ESM build and the LICENSE of each package into
# web/static/vendor/<package>/. The results are committed: the dashboard has
# no build step and loads nothing from a CDN. Run it from anywhere; it only
# writes under web/static/vendor/.
#
# To upgrade: change VERSION and INTEGRITY below (`npm view PKG@VER
# dist.integrity` prints the latter), run the script, reload the dashboard,
# run the tests in test/web/ and commit web/static/vendor/.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
vendor="$root/web/static/vendor"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# package  version  integrity  files (tarball path:vendored name, space separated)
PACKAGES=(
  "preact|11.2.0|sha512-/HfHI/7N84e6GrWBJ3J280z3mLaRJiDcSvj/A+y/4AbLnND/1UlGHe1sR6oYuTGwId0nP7dqDU9OnLxMPZ7xBg==|dist/preact.mjs:preact.mjs hooks/dist/hooks.mjs:hooks.mjs LICENSE:LICENSE"
  "htm|3.1.1|sha512-983Vyg8NwUE7JkZ6NmOqpCZ+sh1bKv2iYTlUkzlWmA5JD2acKoxd4KVxbMmxX/85mtfdnDmTFoNKcg5DGAvxNQ==|dist/htm.module.js:htm.mjs LICENSE:LICENSE"
)

for entry in "${PACKAGES[@]}"; do
  IFS='|' read -r pkg version integrity files <<<"$entry"
  echo "vendoring $pkg@$version"
  (cd "$work" && npm pack --silent "$pkg@$version" >/dev/null)
  tarball="$work/$pkg-$version.tgz"
  got="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 | tr -d '\n')"
  if [[ "$got" != "$integrity" ]]; then
    echo "integrity mismatch for $pkg@$version:" >&2
    echo "  want $integrity" >&2
    echo "  got  $got" >&2
    exit 1
  fi
  mkdir -p "$work/$pkg"
  tar -xzf "$tarball" -C "$work/$pkg"
  rm -rf "${vendor:?}/$pkg"
  mkdir -p "$vendor/$pkg"
  for pair in $files; do
    src="${pair%%:*}" dst="${pair#*:}"
    cp "$work/$pkg/package/$src" "$vendor/$pkg/$dst"
  done
  printf '%s@%s\n%s\n' "$pkg" "$version" "$integrity" >"$vendor/$pkg/VERSION"
done
echo "done: $(cd "$vendor" && find . -type f | sort | tr '\n' ' ')"
