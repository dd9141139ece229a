# Skiff's image, for those who build with Docker (BuildKit):
#
#   docker build -t ghcr.io/skiffcd/skiff:dev \
#     --build-arg VERSION=$(git describe --tags --always --dirty) \
#     --build-arg COMMIT=$(git rev-parse HEAD) \
#     --build-arg SOURCE_DATE_EPOCH=$(git log -1 --format=%ct) .
#
# `make image` builds the same image for linux/amd64 and linux/arm64 without
# a Docker engine, and is what CI checks. Here hack/image writes the root
# file system it puts in its layers (binary, users, CA certificates, time
# zones, /tmp, /home/skiff), which is copied onto scratch; the configuration
# below is the one hack/image writes, and its test compares them.

FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS TARGETARCH
ARG VERSION=dev COMMIT=unknown SOURCE_DATE_EPOCH=0
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN go run ./hack/image -rootfs /rootfs -platform "$TARGETOS/$TARGETARCH" \
      -version "$VERSION" -commit "$COMMIT" -source-date-epoch "$SOURCE_DATE_EPOCH" \
      -tags kustomize_disable_go_plugin_support

FROM scratch
ARG VERSION=dev COMMIT=unknown
COPY --from=build /rootfs/ /
# The user's home is its own, also with builders whose COPY --from does not
# keep owners: copying /home's contents makes skiff/ an item that --chown sets.
COPY --from=build --chown=999:999 /rootfs/home/ /home/
USER 999:999
WORKDIR /home/skiff
ENV PATH=/usr/local/bin HOME=/home/skiff ZONEINFO=/usr/share/zoneinfo.zip
ENTRYPOINT ["/usr/local/bin/skiff"]
CMD ["server"]
LABEL org.opencontainers.image.title="skiff" \
      org.opencontainers.image.description="GitOps continuous delivery and progressive delivery for Kubernetes, speaking Argo CD's and Argo Rollouts' API" \
      org.opencontainers.image.source="https://github.com/skiffcd/skiff" \
      org.opencontainers.image.version="$VERSION" \
      org.opencontainers.image.revision="$COMMIT" \
      org.opencontainers.image.licenses="NOASSERTION"
