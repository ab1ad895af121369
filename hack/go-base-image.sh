#!/usr/bin/env bash
# Builds a local stand-in for the golang:<version>-bookworm image, for the
# Dockerfile's build stage on a machine that reaches no container registry:
# a minimal Debian (debootstrap) with the Go toolchain of this machine
# (`go env GOROOT`) copied in, imported into the local engine.
#
# Usage: hack/go-base-image.sh [image]      (default minisched-go-base:local)
# then:  docker build --build-arg GO_IMAGE=minisched-go-base:local ...
#
# Nothing here names a mirror: the Debian suite and mirror are this
# machine's own (/etc/os-release, and apt's configured sources through
# `apt-get indextargets`), and apt's proxy, if any, is passed on. Needs root,
# debootstrap (installed when missing) and a running docker daemon.
set -euo pipefail

image=${1:-minisched-go-base:local}

need_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "go-base-image: debootstrap needs root" >&2
		exit 1
	fi
}
need_root

if ! command -v debootstrap >/dev/null; then
	echo "go-base-image: installing debootstrap"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null
fi

goroot=$(go env GOROOT)
goversion=$(go env GOVERSION)
# shellcheck disable=SC1091
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
if [ -z "$suite" ]; then
	echo "go-base-image: no VERSION_CODENAME in /etc/os-release" >&2
	exit 1
fi
# The mirror apt uses for the suite itself (not -updates or -security).
mirror=$(apt-get indextargets --format '$(TARGET_OF) $(RELEASE) $(REPO_URI)' 2>/dev/null |
	awk -v s="$suite" '$1 == "deb" && $2 == s { print $3; exit }')
if [ -z "$mirror" ]; then
	echo "go-base-image: apt has no source for suite $suite (apt-get update?)" >&2
	exit 1
fi
# apt's own proxy settings, if any, for debootstrap's downloads.
eval "$(apt-config shell apt_http_proxy Acquire::http::Proxy apt_https_proxy Acquire::https::Proxy)"
if [ -n "${apt_http_proxy:-}" ] && [ -z "${http_proxy:-}" ]; then export http_proxy=$apt_http_proxy; fi
if [ -n "${apt_https_proxy:-}" ] && [ -z "${https_proxy:-}" ]; then export https_proxy=$apt_https_proxy; fi

root=$(mktemp -d "${TMPDIR:-/tmp}/go-base.XXXXXX")
cleanup() { rm -rf --one-file-system "$root"; }
trap cleanup EXIT

echo "go-base-image: debootstrap --variant=minbase $suite (apt's configured mirror) into a temporary directory"
# ca-certificates: the build reaches the module proxy over HTTPS.
if ! debootstrap --variant=minbase --include=ca-certificates "$suite" "$root" "$mirror" >"$root.log" 2>&1; then
	tail -20 "$root.log" >&2
	rm -f "$root.log"
	echo "go-base-image: debootstrap failed" >&2
	exit 1
fi
rm -f "$root.log"
# Keep the image small: no package lists, caches or docs.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* \
	"$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/locale/*

# The certificates this machine trusts (Go's SSL_CERT_FILE when set, else
# the system bundle): the build fetches modules as this machine does, also
# through a TLS-inspecting proxy whose authority only this machine knows.
bundle=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
if [ -f "$bundle" ]; then
	cp "$bundle" "$root/etc/ssl/certs/ca-certificates.crt"
fi

echo "go-base-image: copying $goversion from this machine's GOROOT"
mkdir -p "$root/usr/local/go" "$root/go/bin" "$root/go/src"
cp -a "$goroot"/. "$root/usr/local/go/"
chmod -R 1777 "$root/go"

echo "go-base-image: importing as $image"
# The environment of the golang image the Dockerfile's default names.
tar -C "$root" --numeric-owner -c . | docker import \
	--change 'ENV PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
	--change 'ENV GOPATH=/go' \
	--change 'ENV GOTOOLCHAIN=local' \
	--change "ENV GOLANG_VERSION=${goversion#go}" \
	--change 'WORKDIR /go' \
	--change 'CMD ["bash"]' \
	- "$image" >/dev/null
echo "go-base-image: built $image ($goversion, Debian $suite)"
