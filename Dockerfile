# The loop-action image: a static binary on a slim Debian with git, bash and
# ca-certificates. loop-action itself is PID 1, with no init before it: an
# init would hold the job's environment, github-token included, where any
# process in the container could read it (loop-action takes its own copy out
# at startup), and loop-action reaps and kills whatever agents leave behind.
# When PID 1 exits, the kernel kills every process left in the container.
# Extend it with your toolchain: FROM this image, then install what your
# checks and agents need (see docs/action.md).
#
# Stages: runtime is the image without the binary; the last stage (what the
# runner builds for `image: Dockerfile`) adds the binary built from this
# source; release (built by GoReleaser with --target=release) adds the
# binary GoReleaser already built for the platform. Builders skip the
# stages their target does not need.

FROM debian:bookworm-slim AS runtime
# Slim: no documentation, man pages, info pages or translations (licences are
# kept), and no package lists or apt caches left behind. Packages installed by
# an image built FROM this one are slimmed the same way (dpkg.cfg.d).
RUN printf '%s\n' 'path-exclude=/usr/share/doc/*' 'path-include=/usr/share/doc/*/copyright' \
      'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/info/*' 'path-exclude=/usr/share/locale/*' \
      'path-exclude=/usr/share/lintian/*' >/etc/dpkg/dpkg.cfg.d/01-loop-action-slim \
 && apt-get update \
 && apt-get install -y --no-install-recommends git bash ca-certificates \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/debconf/*-old /var/log/apt /var/log/dpkg.log
ENTRYPOINT ["/usr/local/bin/loop-action", "action"]

FROM golang:1.26-bookworm AS build
ENV CGO_ENABLED=0 PATH=/usr/local/go/bin:$PATH
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
RUN go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/loop-action ./cmd/loop-action

FROM runtime AS release
ARG TARGETPLATFORM
COPY $TARGETPLATFORM/loop-action /usr/local/bin/loop-action

FROM runtime
COPY --from=build /out/loop-action /usr/local/bin/loop-action
