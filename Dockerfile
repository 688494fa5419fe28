# syntax=docker/dockerfile:1
#
# EdgeGateway image: a static-stdlib Swift binary on a trimmed debian:bookworm-slim, run as uid 1000.
#
#   docker build -t edge-gateway .                                    compile in the official Swift image
#   docker build --build-arg BINARY_SOURCE=context -t edge-gateway .  use a binary built beforehand (see below)
#
# Both ways end in the same `runtime` stage; only the stage that supplies /opt/edge-gateway differs, so the
# image the smoke test builds from a host binary runs exactly the instructions of the shipped one.
# Nothing here is architecture-specific (no downloads), so `docker buildx build --platform` works for any
# platform the Swift image exists for.

# The Swift toolchain image of the build stage.
ARG SWIFT_IMAGE=swift:6.3-bookworm
# The runtime base; a local copy with the same name can be substituted (the smoke test builds one with
# debootstrap).
ARG BASE_IMAGE=debian:bookworm-slim
# Where the binary comes from: `build` compiles it in SWIFT_IMAGE; `context` copies PREBUILT_DIR from the
# build context.
ARG BINARY_SOURCE=build

FROM ${SWIFT_IMAGE} AS build
WORKDIR /src
# The official Swift image lacks the headers of the system libraries the package links against.
# DL3008 (pin apt versions): the Swift image pins the Debian release; exact versions would break the build
# at every Debian point release.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libsqlite3-dev zlib1g-dev libavahi-client-dev libqrencode-dev \
    && rm -rf /var/lib/apt/lists/*
# Resolving dependencies in a layer of its own keeps them cached while only the sources change.
COPY Package.* ./
RUN swift package resolve
COPY Sources ./Sources
# SwiftPM checks that every declared target has its folder, test targets included.
COPY Tests ./Tests
# The release link lays out the start-up code together (see scripts/build-release).
COPY linker ./linker
COPY scripts/build-release ./scripts/
# The stdlib and Foundation are linked statically, so the runtime needs no Swift runtime; resource
# bundles (*.resources) must sit next to the executable, where Bundle.module looks for them. Stripping
# halves the binary (about 146 MB to 79 MB); crash backtraces then show addresses, not function names.
RUN bin="$(scripts/build-release)" \
    && mkdir -p /dist \
    && cp "$bin/edge-gateway" /dist/ \
    && find "$bin" -maxdepth 1 -name '*.resources' -exec cp -R {} /dist/ \; \
    && strip /dist/edge-gateway

FROM scratch AS binary-build
COPY --from=build /dist/ /

# PREBUILT_DIR holds `edge-gateway` and its `*.resources` bundles, e.g. as made by
#   bin="$(scripts/build-release)"
#   mkdir -p .build-container/dist && cp "$bin"/edge-gateway "$bin"/*.resources .build-container/dist/
# (.dockerignore lets exactly that directory through).
FROM scratch AS binary-context
ARG PREBUILT_DIR=.build-container/dist
COPY ${PREBUILT_DIR}/ /

# DL3006 (tag every image): binary-${BINARY_SOURCE} names one of the two stages above, not an image.
# hadolint ignore=DL3006
FROM binary-${BINARY_SOURCE} AS binary

# The CA roots for upstreams with public certificates. The gateway reads only the bundle
# (/etc/ssl/certs/ca-certificates.crt, where NIOSSL looks first); the ca-certificates package would also
# bring the openssl tool and libssl (8.4 MB) into the runtime just to build it, so it is built here.
FROM ${BASE_IMAGE} AS ca-roots
# DL3008: as in the runtime stage below.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/*

# The runtime's root file system: BASE_IMAGE with the runtime libraries, the gateway's user and its
# directories, less what only installs or builds packages. Libraries: SQLite and zlib; Avahi's client (DNS-SD
# through the host's avahi-daemon over D-Bus) and libqrencode (pairing QR codes). Purged: apt with its
# signature and TLS libraries, debconf and perl-base (apt's and maintainer scripts' only users), and the ext2
# tools; the shell and core utilities stay for `docker exec`. dpkg's database records the purge, so image
# scanners still see exactly what is installed.
# DL3008 (pin apt versions): BASE_IMAGE pins the Debian release and its security updates should flow in;
# exact versions would break the build at every Debian point release.
FROM ${BASE_IMAGE} AS runtime-root
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        libavahi-client3 \
        libqrencode4 \
        libsqlite3-0 \
        zlib1g \
    && groupadd --gid 1000 edge-gateway \
    && useradd --uid 1000 --gid 1000 --no-create-home --home-dir /var/lib/edge-gateway \
        --shell /usr/sbin/nologin edge-gateway \
    && install -d -o edge-gateway -g edge-gateway -m 0750 /var/lib/edge-gateway \
    && install -d -m 0755 /etc/edge-gateway \
    && dpkg --purge --force-remove-essential --force-depends \
        apt libapt-pkg6.0 gpgv debian-archive-keyring libgnutls30 libp11-kit0 libffi8 libtasn1-6 libnettle8 \
        libhogweed6 libidn2-0 libunistring2 libseccomp2 perl-base debconf e2fsprogs libext2fs2 libss2 logsave \
    && rm -rf /var/lib/apt /var/cache/apt /etc/apt /var/log/apt /var/log/dpkg.log /var/cache/debconf \
        /var/lib/dpkg/*-old

# One layer holding that file system: files deleted in a layer above the base's would still be shipped in
# the base's layer. Ownership (the data directory's uid 1000) is kept by the copy between stages.
FROM scratch AS runtime
# DL3067 (do not copy an entire file system from another stage): that is the point here, see above.
# hadolint ignore=DL3067
COPY --from=runtime-root / /
COPY --from=ca-roots /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=binary / /opt/edge-gateway/
COPY config/edge-gateway.toml /etc/edge-gateway/edge-gateway.toml

# A stage FROM scratch inherits no environment: PATH is Debian's, with the gateway's directory first.
ENV PATH=/opt/edge-gateway:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    EDGE_GATEWAY_CONFIG=/etc/edge-gateway/edge-gateway.toml \
    EDGE_GATEWAY_DATA_DIR=/var/lib/edge-gateway \
    EDGE_GATEWAY_OPS_ADDRESS=0.0.0.0

# Data: databases, blobs, the TLS identity, the node ID, the users file, remote UUIDs and replication
# checkpoints. Config: the TOML file only (the gateway never writes there); mount it read-only. A new named
# volume starts as a copy of the image's content, so the data directory keeps its uid 1000 ownership.
VOLUME ["/var/lib/edge-gateway", "/etc/edge-gateway"]
WORKDIR /var/lib/edge-gateway
USER 1000:1000

# 4984: sync listener (BLIP over WebSocket, TLS); 4985: ops (health, metrics).
EXPOSE 4984 4985

# `edge-gateway health` probes the ops endpoint named by EDGE_GATEWAY_CONFIG (0.0.0.0 is probed on
# 127.0.0.1), so the image needs no curl. Opening large databases can take a while, hence the start period.
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
    CMD ["edge-gateway", "health", "--timeout", "5"]

# The gateway is PID 1 on purpose: it installs its own SIGTERM/SIGINT handlers (graceful drain, exit 0) and
# spawns no children, so there are no zombies to reap and no init is needed. `docker run --init` (tini)
# also works and forwards SIGTERM unchanged.
STOPSIGNAL SIGTERM
ENTRYPOINT ["edge-gateway"]
CMD ["serve"]
