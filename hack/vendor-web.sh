#!/usr/bin/env bash
# vendor-web.sh fetches the dashboard's browser libraries with `npm pack`
# (npm's default registry), checks each tarball against its pinned integrity,
# and copies the ESM build and the LICENSE of each package into
# web/static/vendor/<package>/ (a scoped package keeps its scope:
# vendor/@preact/signals/). The results are committed: the dashboard has
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
  # @preact/signals imports @preact/signals-core by name: the import map
  # points both names at these copies, so the page has one signals runtime.
  "@preact/signals-core|1.14.5|sha512-vcRv7Ityz5JVmeiVqIluLFzT/PDS/AlhHUpw3/aUWqcVUs6bDGIPXE/6RSC4evBNWYvnniozg5Syfj33al3gkg==|dist/signals-core.mjs:signals-core.mjs LICENSE:LICENSE"
  "@preact/signals|2.11.4|sha512-Rb+5RPo9gWSaHtzJeauhHxiC8KP/IF2DEPkHPEOGOnuy2wnJzRqyeLRankUCYd6ADqtxS6GnWGv6Ie343d8aYw==|dist/signals.mjs:signals.mjs LICENSE:LICENSE"
)

for entry in "${PACKAGES[@]}"; do
  IFS='|' read -r pkg version integrity files <<<"$entry"
  echo "vendoring $pkg@$version"
  # npm pack prints the tarball's name (@scope/name becomes scope-name).
  tarball="$work/$(cd "$work" && npm pack --silent "$pkg@$version" | tail -n 1)"
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
