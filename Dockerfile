# minisched: one static binary with an embedded etcd, kube-apiserver,
# scheduler and dashboard. The build runs hack/build.sh, the script CI runs.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN hack/build.sh /out/minisched \
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
