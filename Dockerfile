# minisched: one static binary with an embedded etcd, kube-apiserver,
# scheduler and dashboard. The build runs hack/build.sh, the script CI runs.
#
# Needs BuildKit (the default builder of Docker 23 and later; with older
# engines set DOCKER_BUILDKIT=1): the Go module and build caches are cache
# mounts, so a rebuild after a source change takes about a minute instead of
# compiling Kubernetes again (about ten minutes on two cores). There is no
# `# syntax=` line on purpose: the engine's built-in Dockerfile frontend is
# enough, and fetching another would need a registry.
#
# GO_IMAGE names the build stage's base: any Debian-like image with Go 1.26
# at /usr/local/go. Where no registry is reachable, hack/go-base-image.sh
# builds one from Debian packages and this machine's Go toolchain.
# The module proxy and checksum database come from the caller
# (--build-arg GOPROXY=... etc.; hack/compose-check.sh passes `go env`'s);
# left empty, Go's defaults apply. The runtime stage is `scratch`: nothing to
# pull.
ARG GO_IMAGE=golang:1.26-bookworm

FROM ${GO_IMAGE} AS build
ARG GOPROXY=
ARG GOSUMDB=
ARG GONOSUMDB=
ARG GOPRIVATE=
ARG GONOPROXY=
ARG GOINSECURE=
ARG GOFLAGS=
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,id=minisched-gomod,target=/go/pkg/mod \
    go mod download
COPY . .
RUN --mount=type=cache,id=minisched-gomod,target=/go/pkg/mod \
    --mount=type=cache,id=minisched-gocache,target=/root/.cache/go-build \
    hack/build.sh /out/minisched \
 && mkdir -p /rootfs/tmp /rootfs/data /rootfs/scenarios \
 && chmod 1777 /rootfs/tmp \
 && chown 65532:65532 /rootfs/data

FROM scratch
COPY --from=build /rootfs /
COPY --from=build /out/minisched /minisched
COPY --from=build /src/examples/scenarios /scenarios/bundled
USER 65532:65532
ENV TMPDIR=/tmp
EXPOSE 8080
VOLUME ["/data"]
ENTRYPOINT ["/minisched"]
# Inside the container it must listen on every interface for the port to be
# published, so minisched wants a token (MINISCHED_TOKEN) unless told the port
# is published on the host's loopback only (MINISCHED_PUBLISHED_ON=127.0.0.1,
# which docker-compose.yml sets by default).
CMD ["--addr", "0.0.0.0:8080", "--data-dir", "/data"]
