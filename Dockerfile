# referrals-sandbox container image: the static binary on an empty (scratch)
# base, running as uid 65532, with an exec-form HEALTHCHECK (no shell).
#
# With a registry, the binary is compiled inside the Go image:
#
#   docker build -t referrals-sandbox --build-arg VERSION=$(git describe --tags --always) .
#   podman build --format docker -t referrals-sandbox .
#
# Podman needs --format docker: its default OCI format has no HEALTHCHECK
# and drops it silently.
#
# With nothing to pull (air-gapped CI, or GoReleaser, which reuses its own
# builds), BINARY=context takes a static binary from the build context at
# <os>/<arch>/referrals-sandbox (GoReleaser's dockers_v2 layout):
#
#   CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w" -o linux/amd64/referrals-sandbox ./cmd/referrals-sandbox
#   podman build --pull=never --format docker --build-arg BINARY=context -t referrals-sandbox .
#
# go.mod asks for Go 1.26.8; the golang:1.26 image tracks the newest 1.26
# patch release.
ARG GO_VERSION=1.26
# build: compile in the Go image; context: a binary built beforehand.
ARG BINARY=build

# Fully qualified: Podman refuses short names when no unqualified-search
# registry is configured.
FROM docker.io/library/golang:${GO_VERSION} AS build
ARG VERSION=dev
ARG COMMIT=unknown
ARG DATE=unknown
WORKDIR /src
# Dependencies first, so that a source change reuses the cached download.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Static (no cgo: the image has no libc), reproducible paths, stripped
# symbols; version, commit and date are what `referrals-sandbox version`
# prints.
RUN CGO_ENABLED=0 go build -trimpath \
        -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT} -X main.date=${DATE}" \
        -o /out/referrals-sandbox ./cmd/referrals-sandbox

# The binary built outside, for the platform being built. TARGETPLATFORM
# (linux/amd64, linux/arm64) is set by docker buildx, BuildKit and buildah.
FROM scratch AS context
ARG TARGETPLATFORM
COPY ${TARGETPLATFORM}/referrals-sandbox /out/referrals-sandbox

# Builders skip the stage BINARY does not name: with BINARY=context the Go
# image is never pulled. The default is repeated here because Buildah
# (Podman 4.x) resolves a stage named through FROM without the global ARG's
# default: plain ${BINARY} would look for an image called "build" in a
# registry. Buildah's warning about a missing TARGETPLATFORM is harmless: it
# sets it for the stage that uses it (a default there would beat Buildah's
# own value and copy the wrong architecture's binary).
FROM ${BINARY:-build} AS binary

FROM scratch
ARG VERSION=dev
LABEL org.opencontainers.image.title="referrals-sandbox" \
      org.opencontainers.image.description="Stand-in for the patient-referrals service and its Entra-shaped identity provider, for partners' development, CI and QA" \
      org.opencontainers.image.source="https://github.com/referrals-sandbox/referrals-sandbox" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
# A scratch image has no directories: rootfs.tar adds /tmp (mode 1777, for
# the --tls CA directory and the health file) and /data (owned by 65532, so
# that a fresh named volume mounted there inherits the runtime user).
# A tar rather than RUN mkdir: there is no shell, and no image to borrow
# one from when nothing can be pulled.
ADD image/rootfs.tar /
COPY --from=binary /out/referrals-sandbox /referrals-sandbox
USER 65532:65532
# Listen on every interface inside the container; published ports decide
# who reaches it. serve records where it listens in the health file, so
# that the HEALTHCHECK follows flags given after the image name
# (`docker run IMAGE --tls`).
ENV SANDBOX_ADDR=0.0.0.0:8080 \
    SANDBOX_HEALTH_FILE=/tmp/referrals-sandbox-health.json
EXPOSE 8080
# Exec form: the image has no shell. `docker run --health-cmd` (and GitHub
# Actions' service options) would turn any command into /bin/sh -c and
# never turn healthy: rely on this one.
HEALTHCHECK --interval=2s --timeout=2s --start-period=1s --retries=10 CMD ["/referrals-sandbox", "healthcheck"]
# serve is the default subcommand; `docker run IMAGE token` and the other
# subcommands work too.
ENTRYPOINT ["/referrals-sandbox"]
