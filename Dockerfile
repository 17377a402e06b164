# referrals-sandbox container image: the static binary on distroless.
#
#   docker build -t referrals-sandbox --build-arg VERSION=$(git describe --tags --always) .
#   docker run --rm -p 8080:8080 referrals-sandbox
#
# go.mod asks for Go 1.26.8; the golang:1.26 image tracks the newest 1.26
# patch release.
ARG GO_VERSION=1.26

FROM golang:${GO_VERSION} AS build
ARG VERSION=dev
WORKDIR /src
# Dependencies first, so that a source change reuses the cached download.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Static (no cgo: distroless/static has no libc), reproducible paths,
# stripped symbols; the version is what `referrals-sandbox version` prints.
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
        -o /out/referrals-sandbox ./cmd/referrals-sandbox \
    && mkdir -p /out/data

# distroless/static: CA certificates, /etc/passwd with the nonroot user, a
# writable /tmp (where --tls makes its private CA directory) and nothing
# else - no shell.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/referrals-sandbox /referrals-sandbox
# /data is where SANDBOX_DATA may keep a buntdb file. Owning it here lets a
# fresh named volume mounted on /data inherit the nonroot owner.
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
# Listen on every interface inside the container; published ports decide
# who reaches it.
ENV SANDBOX_ADDR=0.0.0.0:8080
EXPOSE 8080
# Exec form: the image has no shell. healthcheck reads SANDBOX_ADDR and
# SANDBOX_TLS like serve does, so it finds the server however it is set up.
HEALTHCHECK --interval=2s --timeout=2s --start-period=1s --retries=10 CMD ["/referrals-sandbox", "healthcheck"]
# serve is the default subcommand; `docker run IMAGE token` and the other
# subcommands work too.
ENTRYPOINT ["/referrals-sandbox"]
